package agents

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"agentctl/mailbox"
)

// A runner that finds its mailbox locked by something that is not a
// runner waits, says why in status.json, and starts once the lock is free.
func TestRunnerWaitsForALockThatIsNotARunners(t *testing.T) {
	root := newRuntime(t, demoAgents)
	if err := os.MkdirAll(mailbox.LocksDir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	path := mailbox.ConsumerLockPath(root, "Agent-1")
	stranger := flock.New(path)
	if err := stranger.Lock(); err != nil {
		t.Fatal(err)
	}
	startRunner(t, testSettings(root, "Agent-1", demoAgents, demoExecDriver(t, "Agent-1")))
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	status := func() mailbox.Status { st, _ := mb.ReadStatus(); return st }
	waitFor(t, 20*time.Second, "status.json to say what the runner waits for", func() bool {
		return strings.Contains(status().Waiting, path)
	})
	if st := status(); st.PID != os.Getpid() || st.State != "starting" {
		t.Errorf("while waiting, status.json says pid %d, state %q", st.PID, st.State)
	}
	stranger.Unlock()
	waitFor(t, 20*time.Second, "the runner to start once the lock is free", func() bool {
		st := status()
		return st.State == "idle" && st.Waiting == ""
	})
}
