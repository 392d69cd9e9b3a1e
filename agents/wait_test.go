package agents

import (
	"os"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
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
	poll.Until(t, "status.json to say what the runner waits for", func() bool {
		return strings.Contains(status().Waiting, path)
	})
	if st := status(); st.PID != os.Getpid() || st.State != "starting" {
		t.Errorf("while waiting, status.json says pid %d, state %q", st.PID, st.State)
	}
	stranger.Unlock()
	poll.Until(t, "the runner to start once the lock is free", func() bool {
		st := status()
		return st.State == "idle" && st.Waiting == ""
	})
}

// A Dream.OS writer holding inbox.json.lock for long does not stop the
// runner: it works what else waits, says what it waits for in status.json,
// and takes inbox.json once the lock is free.
func TestRunnerOutwaitsAStuckInboxJSONWriter(t *testing.T) {
	root := newRuntime(t, demoAgents)
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	writer := flock.New(mb.Dir + "/" + mailbox.InboxJSONLock)
	if err := writer.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mb.Dir+"/"+mailbox.InboxJSON, []byte(`[{"id": "queued", "from": "Agent-2", "to": "Agent-1", "body": "from the queue"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	startRunner(t, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "ok", nil })))
	deliverTo(t, root, mailbox.Message{ID: "direct", From: "Agent-2", To: "Agent-1", Body: "dropped in inbox/"})
	status := func() mailbox.Status { st, _ := mb.ReadStatus(); return st }
	poll.Until(t, "the direct message, and status.json to name the held lock", func() bool {
		return counts(t, root, "Agent-1").Done == 1 && strings.Contains(status().Waiting, mailbox.InboxJSONLock)
	})
	writer.Unlock()
	poll.Until(t, "the queued message once the lock is free", func() bool {
		return counts(t, root, "Agent-1").Done == 2 && status().Waiting == ""
	})
}
