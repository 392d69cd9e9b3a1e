package intake

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// Consumers killed with SIGKILL at random moments, again and again, while
// writers that behave exactly like the Dream.OS ones append to inbox.json
// under its lock: every message is archived exactly once, and nothing is
// left in .ingest/ or inbox.json.
func TestIngestKilledAtRandomWhileDreamOSWritersAppend(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the Dream.OS writer: ", err)
	}
	const writers, each, minKills = 2, 1000, 20
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	writing := make(chan error, writers)
	for w := range writers {
		cmd := exec.Command(python, "../../fixtures/dreamos/inbox_writer.py", mb.Dir, fmt.Sprintf("py%d", w), fmt.Sprint(each), "--no-ids")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { writing <- cmd.Wait() }()
	}
	env := []string{"MAILBOX_ROOT=" + root, "MAILBOX_AGENT=Agent-1", "MAILBOX_DONE=" + filepath.Join(root, "done")}
	running, kills, midSpool := writers, 0, 0
	for running > 0 || kills < minKills {
		c := startRole(t, "consume", env...)
		time.Sleep(time.Duration(rand.IntN(150_000)) * time.Microsecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		kills++
		if spools, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.IngestDir)); len(spools) > 0 {
			midSpool++
		}
		for drained := false; !drained; {
			select {
			case err := <-writing:
				if err != nil {
					t.Fatalf("Dream.OS writer: %v", err)
				}
				running--
			default:
				drained = true
			}
		}
	}
	if midSpool == 0 {
		t.Fatalf("none of %d kills left a spool file behind; the test killed no ingest mid-way", kills)
	}
	t.Logf("%d kills, %d of them while a spool file was being delivered", kills, midSpool)

	consumer := startRole(t, "consume", env...)
	var bodies map[string]int
	poll.Until(t, fmt.Sprintf("%d messages archived", writers*each), func() bool {
		bodies = archivedBodies(t, mb)
		return len(bodies) >= writers*each
	})
	stopConsumer(t, root, consumer)
	for w := range writers {
		for n := range each {
			if b := fmt.Sprintf("py%d-%d", w, n); bodies[b] != 1 {
				t.Errorf("%s archived %d times", b, bodies[b])
			}
		}
	}
	if len(bodies) != writers*each {
		t.Errorf("%d distinct messages archived, want %d", len(bodies), writers*each)
	}
	if left, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.InboxJSON)); strings.TrimSpace(string(left)) != "[]" {
		t.Errorf("inbox.json = %.100q", left)
	}
	for _, dir := range []string{mailbox.IngestDir, mailbox.DeadletterDir, mailbox.InboxDir, mailbox.ProcessingDir} {
		if left := names(t, filepath.Join(mb.Dir, dir)); len(left) != 0 {
			t.Errorf("%s/ holds %.5v", dir, left)
		}
	}
}
