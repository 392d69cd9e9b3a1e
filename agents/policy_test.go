package agents

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

func pendingOf(t *testing.T, root, agent string) []mailbox.Message {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	es, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	var out []mailbox.Message
	for _, e := range es {
		out = append(out, e.Message)
	}
	return out
}

// TestRunnerAnswersWithoutATurn: a status request, a ping, a board update
// and a receipt are settled by the runner alone: no turn, a receipt that
// says so, a devlog entry, and answers with derived ids.
func TestRunnerAnswersWithoutATurn(t *testing.T) {
	root := newRuntime(t, demoAgents)
	var turns atomic.Int32
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		turns.Add(1)
		return "a turn", nil
	}))
	s = withHuman(t, root, s)
	s.Policy = map[string]string{"status-request": PolicyRunner, "ping": PolicyRunner, "board-update": PolicyRunner, "receipt": PolicyRunner}
	startRunner(t, s)
	msgs := []mailbox.Message{
		{ID: "status", From: "human", To: "Agent-1", Type: "status-request", Body: "how are you doing?"},
		{ID: "ping", From: "Agent-2", To: "Agent-1", Type: "ping", Body: "are you there?"},
		{ID: "board", From: "human", To: "Agent-1", Type: "board-update", Body: block(`{"board": [{"id": "DEMO-1", "status": "review"}]}`)},
		{ID: "receipt", From: "Agent-3", To: "Agent-1", Type: "receipt", Body: "your message was done"},
	}
	for _, m := range msgs {
		deliverTo(t, root, m)
	}
	poll.Until(t, "all four archived", func() bool { return counts(t, root, "Agent-1").Done == 4 })
	if turns.Load() != 0 {
		t.Errorf("%d turns taken, want none", turns.Load())
	}
	for _, m := range msgs {
		if r := receiptOf(t, root, "Agent-1", m.ID); r.Outcome != outcomeRunner || (r.Data.Turn == nil || *r.Data.Turn) {
			t.Errorf("%s: receipt %+v, want %q without a turn", m.ID, r, outcomeRunner)
		}
		if es := entriesFor(devlogOf(t, root, "Agent-1"), m.ID); len(es) != 1 || es[0].Outcome != outcomeRunner {
			t.Errorf("%s: devlog %+v, want one entry", m.ID, es)
		}
	}
	human := pendingOf(t, root, "human")
	if len(human) != 1 || human[0].Type != "status-report" || human[0].ID != derivedID("status", "send", "0", "human") {
		t.Fatalf("human's inbox: %+v, want one status report with a derived id", human)
	}
	if b := human[0].Body; !strings.Contains(b, "Agent-1: runner pid") || !strings.Contains(b, "Tasks:\n- DEMO-1 todo") {
		t.Errorf("status report body:\n%s", b)
	}
	if p := pendingOf(t, root, "Agent-2"); len(p) != 1 || p[0].Type != "pong" {
		t.Errorf("Agent-2's inbox: %+v, want a pong", p)
	}
	if tk := task(t, root, "DEMO-1"); tk.Status != "review" {
		t.Errorf("DEMO-1 is %s, want the board update applied", tk.Status)
	}
}

// TestDigestNotesRideTheNextTurn: notes wait without a turn, go into the
// next real turn's prompt, and are archived only once that turn is done,
// with a receipt naming it. A turn that fails leaves them waiting; a note
// nothing carries gets its own turn once digest_wait has passed.
func TestDigestNotesRideTheNextTurn(t *testing.T) {
	root := newRuntime(t, demoAgents)
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var prompts []string
	delivered := make(chan struct{})
	fail := atomic.Bool{}
	fail.Store(true)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(p string) (string, error) {
		mu.Lock()
		prompts = append(prompts, p)
		mu.Unlock()
		if fail.Swap(false) {
			<-delivered // fail only once the delivery is over, not while it marks the id seen
			return "", errors.New("the chat did not answer")
		}
		return block(`{"devlog": "read the notes"}`), nil
	}))
	promptCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(prompts)
	}
	s.Clock, s.Consumer.Backoff = clock, time.Minute
	// No rescans: the watcher's wake-up would pass for the loop's on Sleeping.
	s.Watch.RescanInterval = 1000 * time.Hour
	s.Policy = map[string]string{"note": PolicyDigest}
	s.DigestWait = time.Hour
	startRunner(t, s)
	for i := 1; i <= 3; i++ {
		deliverTo(t, root, mailbox.Message{ID: fmt.Sprintf("note-%d", i), From: "Agent-2", To: "Agent-1", Type: "note", Priority: mailbox.Low,
			Body: fmt.Sprintf("FYI %d: the build is green", i), CreatedAt: clock.Now(), RequiresAck: i == 1})
	}
	poll.Until(t, "the notes to wait", func() bool {
		c := counts(t, root, "Agent-1")
		return c.Pending == 3 && c.Processing == 0 && len(pendingOf(t, root, "Agent-1")) == 3 && allPostponed(t, root)
	})
	deliverTo(t, root, mailbox.Message{ID: "work", From: "Agent-2", To: "Agent-1", Type: "task", Body: "do the work", CreatedAt: clock.Now()})
	close(delivered)
	poll.Until(t, "the failed turn to be retried later", func() bool {
		return counts(t, root, "Agent-1").Pending == 4 && promptCount() == 1
	})
	if c := counts(t, root, "Agent-1"); c.Done != 0 {
		t.Fatalf("after a failed turn: %+v, want the notes still waiting", c)
	}
	clock.Advance(time.Minute)
	poll.Until(t, "the retried turn", func() bool { return counts(t, root, "Agent-1").Done == 4 })
	mu.Lock()
	last := prompts[len(prompts)-1]
	mu.Unlock()
	for i := 1; i <= 3; i++ {
		if !strings.Contains(last, fmt.Sprintf("FYI %d: the build is green", i)) {
			t.Errorf("the turn's prompt lacks note %d:\n%s", i, last)
		}
		r := receiptOf(t, root, "Agent-1", fmt.Sprintf("note-%d", i))
		if r.Outcome != "carried by a turn" || r.Data.CarriedBy != "work" {
			t.Errorf("note %d: receipt %+v, want carried by work", i, r)
		}
	}
	if r := receiptOf(t, root, "Agent-1", "work"); len(r.Data.Carried) != 3 {
		t.Errorf("work's receipt data %v, want the notes it carried", r.Data)
	}
	if n := promptCount(); n != 2 {
		t.Errorf("%d prompts, want 2 (one failed, one retried)", n)
	}
	if p := pendingOf(t, root, "Agent-2"); len(p) != 1 || p[0].Type != "receipt" || !strings.Contains(p[0].Body, "carried by the turn of work") {
		t.Errorf("Agent-2's inbox %+v, want the receipt note-1 asked for", p)
	}

	// A lone note waits out digest_wait, then takes a turn of its own.
	deliverTo(t, root, mailbox.Message{ID: "lone", From: "Agent-2", To: "Agent-1", Type: "note", Body: "nobody carries me", CreatedAt: clock.Now()})
	poll.Until(t, "the lone note to wait", func() bool { return allPostponed(t, root) && counts(t, root, "Agent-1").Pending == 1 })
	due, _ := digestUntil(pendingOf(t, root, "Agent-1")[0])
	if want := clock.Now().Add(time.Hour); !due.Equal(want) {
		t.Errorf("the note waits until %s, want %s (digest_wait)", due, want)
	}
	clock.Advance(59 * time.Minute)
	<-clock.Sleeping()
	if c := counts(t, root, "Agent-1"); c.Done != 4 {
		t.Fatalf("before digest_wait: %+v", c)
	}
	poll.Until(t, "the lone note's own turn", func() bool {
		clock.Advance(time.Second)
		return counts(t, root, "Agent-1").Done == 5
	})
	r := receiptOf(t, root, "Agent-1", "lone")
	if r.Outcome != outcomeDone || promptCount() != 3 || r.ClaimedAt.Before(due) {
		t.Errorf("lone note: receipt %+v after %d prompts, want its own turn from %s", r, promptCount(), due)
	}
}

// allPostponed: every pending message of Agent-1 waits as a digest note.
func allPostponed(t *testing.T, root string) bool {
	for _, m := range pendingOf(t, root, "Agent-1") {
		if _, ok := digestUntil(m); !ok || m.DeliverAfter == nil {
			return false
		}
	}
	return true
}

// TestMixedRunSavesTurns works 100 messages of mixed types through one
// runner and prints how many turns the policies saved.
func TestMixedRunSavesTurns(t *testing.T) {
	root := newRuntime(t, demoAgents)
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	var turns atomic.Int32
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		turns.Add(1)
		return "done", nil
	}))
	s = withHuman(t, root, s)
	s.Clock = clock
	s.Policy = map[string]string{"status-request": PolicyRunner, "ping": PolicyRunner, "receipt": PolicyRunner, "note": PolicyDigest}
	// Each kind in the share a busy swarm sees: 40 tasks, 30 notes, 15
	// status requests, 10 receipts, 5 pings.
	kinds := []struct {
		typ  string
		n    int
		prio mailbox.Priority
	}{{"task", 40, mailbox.Normal}, {"note", 30, mailbox.Low}, {"status-request", 15, mailbox.Normal}, {"receipt", 10, mailbox.Normal}, {"ping", 5, mailbox.Normal}}
	i := 0
	for _, k := range kinds {
		for j := 0; j < k.n; j++ {
			i++
			deliverTo(t, root, mailbox.Message{ID: fmt.Sprintf("m%03d", i), From: "human", To: "Agent-1", Type: k.typ, Priority: k.prio,
				Body: fmt.Sprintf("%s %d", k.typ, j), CreatedAt: clock.Now().Add(time.Duration(i) * time.Millisecond)})
		}
	}
	startRunner(t, s)
	poll.Until(t, "the tasks and answers", func() bool { return counts(t, root, "Agent-1").Done >= 70 })
	clock.Advance(2 * DefaultDigestWait) // notes nothing carried take turns of their own
	poll.Until(t, "all 100 archived", func() bool { return counts(t, root, "Agent-1").Done == 100 })
	if c := counts(t, root, "Agent-1"); c.Dead != 0 || c.Pending != 0 {
		t.Fatalf("counts %+v", c)
	}
	saved := 100 - int(turns.Load())
	t.Logf("mixed run: 100 messages, %d turns, %d turns saved (%d%%)", turns.Load(), saved, saved)
	if turns.Load() < 40 || turns.Load() > 70 {
		t.Errorf("%d turns for 40 tasks and 30 notes", turns.Load())
	}
}
