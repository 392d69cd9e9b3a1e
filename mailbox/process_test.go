package mailbox

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// waitArchived waits until want receipts are archived. It only counts: a
// running consumer may be between archiving a message and its receipt.
func waitArchived(t *testing.T, mb *Mailbox, want int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%d receipts archived", want), func() bool { return countArchived(mb) >= want })
}

func stopConsumer(t *testing.T, root string, cmd *exec.Cmd) {
	t.Helper()
	writeFile(t, filepath.Join(root, "done"), nil)
	if err := cmd.Wait(); err != nil {
		t.Errorf("consumer: %v", err)
	}
}

// checkExactlyOnce reads the archive, once every consumer has stopped.
func checkExactlyOnce(t *testing.T, mb *Mailbox, want []string) {
	t.Helper()
	got := archivedIDs(t, mb)
	for _, id := range want {
		if got[id] != 1 {
			t.Errorf("%s archived %d times", id, got[id])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d distinct messages archived, want %d", len(got), len(want))
	}
	for _, dir := range []string{InboxDir, ProcessingDir, DeadletterDir} {
		if left := names(t, mb.path(dir)); len(left) != 0 {
			t.Errorf("%s/ still holds %d files: %.5v", dir, len(left), left)
		}
	}
}

// sendWhileConsuming runs a consumer process and one sender process per
// prefix, each delivering ids PREFIX-00000 on, then checks that exactly the
// distinct ids sent were archived, each once.
func sendWhileConsuming(t *testing.T, prefixes []string, each int) {
	t.Helper()
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	env := []string{"MAILBOX_ROOT=" + root, "MAILBOX_AGENT=Agent-1"}
	consumer := startRole(t, "consume", append(env, "MAILBOX_DONE="+filepath.Join(root, "done"))...)
	distinct := map[string]bool{}
	var procs []*exec.Cmd
	for _, prefix := range prefixes {
		for i := range each {
			distinct[fmt.Sprintf("%s-%05d", prefix, i)] = true
		}
		procs = append(procs, startRole(t, "send", append(env, "MAILBOX_PREFIX="+prefix, fmt.Sprintf("MAILBOX_COUNT=%d", each))...))
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("sender: %v", err)
		}
	}
	want := slices.Sorted(maps.Keys(distinct))
	waitArchived(t, mb, len(want))
	stopConsumer(t, root, consumer)
	checkExactlyOnce(t, mb, want)
}

// Eight processes deliver to one inbox while a consumer process claims and
// archives: every message exactly once.
func TestConcurrentSendersOneConsumer(t *testing.T) {
	sendWhileConsuming(t, []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}, 100)
}

// Four processes deliver the same ids at once while a consumer claims
// them: each id is stored, and archived, exactly once, and none is lost to
// a delivery that took another's copy for a duplicate.
func TestDuplicateDeliveriesRaceTheConsumer(t *testing.T) {
	sendWhileConsuming(t, []string{"same", "same", "same", "same"}, 150)
}

// A consumer killed with SIGKILL at random moments, again and again, and
// restarted each time: nothing lost, nothing archived twice, nothing left
// in processing/.
func TestConsumerKilledAtRandom(t *testing.T) {
	const total, kills = 600, 25
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	var want []string
	for i := range total {
		id := fmt.Sprintf("k-%05d", i)
		want = append(want, id)
		if err := mb.Deliver(testMessage(id, "Agent-1", Normal)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"MAILBOX_ROOT=" + root, "MAILBOX_AGENT=Agent-1", "MAILBOX_DONE=" + filepath.Join(root, "done")}
	for range kills {
		c := startRole(t, "consume", env...)
		// Kill only once this consumer is busy, at a random point of a
		// message's life cycle.
		before := countArchived(mb)
		for countArchived(mb) == before && before < total {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
	}
	if n := countArchived(mb); n >= total {
		t.Fatalf("all %d messages were archived before the last kill; the test killed nothing mid-way", n)
	}
	c := startRole(t, "consume", env...)
	waitArchived(t, mb, total)
	stopConsumer(t, root, c)
	checkExactlyOnce(t, mb, want)
}

// countArchived counts receipts without reading them: cheap enough to poll.
func countArchived(mb *Mailbox) int {
	n := 0
	days, _ := os.ReadDir(mb.path(ArchiveDir))
	for _, d := range days {
		entries, _ := os.ReadDir(mb.path(ArchiveDir, d.Name()))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ReceiptSuffix) {
				n++
			}
		}
	}
	return n
}
