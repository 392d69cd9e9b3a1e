package mailbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// locateOne finds exactly one entry for ref.
func locateOne(t *testing.T, mb *Mailbox, ref string) Entry {
	t.Helper()
	found, err := mb.Locate(ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("Locate(%s) in %s = %+v, want one entry", ref, mb.Agent, found)
	}
	return found[0]
}

func TestSettleArchivesAPendingMessageWithItsReceipt(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	e := locateOne(t, mb, "m1")
	if e.State != StatePending {
		t.Fatalf("state = %s", e.State)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := mb.Settle(e, Receipt{Outcome: "dropped", Data: json.RawMessage(`{"reason":"obsolete"}`)}, now); err != nil {
		t.Fatal(err)
	}
	done := locateOne(t, mb, "m1")
	if done.State != StateDone || done.Receipt == nil || done.Receipt.Outcome != "dropped" || string(done.Receipt.Data) != `{"reason":"obsolete"}` {
		t.Fatalf("after Settle: %+v (receipt %+v)", done, done.Receipt)
	}
	if got := archivedIDs(t, mb); got["m1"] != 1 || len(names(t, mb.path(InboxDir))) != 0 {
		t.Errorf("archive %v, inbox %v", got, names(t, mb.path(InboxDir)))
	}
	// Settling it again finds it gone rather than archiving twice.
	if err := mb.Settle(e, Receipt{Outcome: "dropped"}, now); !errors.Is(err, ErrMoved) {
		t.Errorf("second Settle = %v, want ErrMoved", err)
	}
}

func TestRequeueBringsADeadLetterBackPastItsSeenMarker(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb := openMailbox(t, root, "Agent-1")
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{MaxAttempts: 1}, now)
	cl, err := c.Claim(now)
	if err != nil {
		t.Fatal(err)
	}
	if dead, err := c.Retry(cl, errors.New("the agent crashed"), now); err != nil || !dead {
		t.Fatalf("Retry = %v, %v; want dead", dead, err)
	}
	c.Close()
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("a plain delivery of a dead id = %v, want ErrDuplicate", err)
	}

	dl := mb.ReadDeadLetter(locateOne(t, mb, "m1"))
	if !strings.Contains(dl.Reason, "the agent crashed") || !dl.DiedAt.Equal(now) {
		t.Fatalf("dead letter = %+v", dl)
	}
	back, err := mb.Requeue(dl, mb, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if back.Attempts != 0 || back.LastError != "" {
		t.Errorf("requeued message keeps its attempts: %+v", back)
	}
	if got := names(t, mb.path(DeadletterDir)); len(got) != 0 {
		t.Errorf("deadletter/ still holds %v", got)
	}
	pending := locateOne(t, mb, "m1")
	history, _ := pending.Message.Meta[HistoryKey].([]any)
	if pending.State != StatePending || len(history) != 1 {
		t.Fatalf("requeued: %+v", pending)
	}
	h := history[0].(map[string]any)
	if !strings.Contains(h["reason"].(string), "the agent crashed") || h["deadlettered_at"] != "2026-11-22T10:00:00Z" {
		t.Errorf("history = %v", h)
	}

	// The consumer takes it like any other message and archives it.
	c = consume(t, mb, Options{MaxAttempts: 1}, now.Add(time.Hour))
	cl, err = c.Claim(now.Add(time.Hour))
	if err != nil || cl.Message.ID != "m1" || cl.Progress.Attempt != 1 {
		t.Fatalf("Claim = %+v, %v", cl, err)
	}
	if err := c.Complete(cl, Receipt{}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func TestRequeueToAnotherAgentAndAfterACrashHalfWay(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	mb1, mb2 := openMailbox(t, root, "Agent-1"), openMailbox(t, root, "Agent-2")
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	// A Dream.OS queue entry for Agent-2 dropped into Agent-1's inbox.
	writeFile(t, inboxPath(mb1, "q.json"), []byte(`{"message_id": "q7", "sender": "Agent-3", "recipient": "Agent-2", "content": "hi"}`))
	c := consume(t, mb1, Options{}, now)
	c.Close()
	dl := mb1.ReadDeadLetter(locateOne(t, mb1, "q7"))
	if !strings.Contains(dl.Reason, "addressed to Agent-2") {
		t.Fatalf("reason = %q", dl.Reason)
	}
	// A crash after the copy was made and before the dead letter went
	// away: the same files as then, and Requeue run again.
	deadPath := filepath.Join(mb1.Dir, dl.File)
	data, _ := os.ReadFile(deadPath)
	reason, _ := os.ReadFile(deadPath + ReasonSuffix)
	if _, err := mb1.Requeue(dl, mb2, now); err != nil {
		t.Fatal(err)
	}
	writeFile(t, deadPath, data)
	writeFile(t, deadPath+ReasonSuffix, reason)
	if _, err := mb1.Requeue(mb1.ReadDeadLetter(locateOne(t, mb1, "q7")), mb2, now); err != nil {
		t.Fatalf("Requeue after a crash half-way = %v", err)
	}
	if got := names(t, mb1.path(DeadletterDir)); len(got) != 0 {
		t.Errorf("Agent-1's deadletter/ still holds %v", got)
	}
	if e := locateOne(t, mb2, "q7"); e.State != StatePending || e.Message.To != "Agent-2" {
		t.Errorf("in Agent-2: %+v", e)
	}
}

// unreadableDeadLetter makes Agent-1's mailbox hold one dead letter that
// never decoded, and returns the mailbox and the dead letter's name.
func unreadableDeadLetter(t *testing.T) (*Mailbox, string) {
	t.Helper()
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	writeFile(t, inboxPath(mb, "broken.json"), []byte(`{"from": "x", "to": "Agent-1"`))
	consume(t, mb, Options{Settle: time.Millisecond}, time.Now().Add(time.Hour)).Close()
	dead := names(t, mb.path(DeadletterDir))
	if len(dead) != 2 {
		t.Fatalf("deadletter/ = %v; want the file and its reason", dead)
	}
	for _, n := range dead {
		if !strings.HasSuffix(n, ReasonSuffix) {
			return mb, n
		}
	}
	t.Fatalf("deadletter/ = %v holds no dead letter", dead)
	return nil, ""
}

func TestRequeueLeavesAnUnreadableDeadLetter(t *testing.T) {
	mb, name := unreadableDeadLetter(t)
	e := locateOne(t, mb, name)
	if _, err := mb.Requeue(mb.ReadDeadLetter(e), mb, time.Now()); err == nil || !strings.Contains(err.Error(), "still cannot be read") {
		t.Fatalf("Requeue of an unreadable file = %v", err)
	}
	if got := names(t, mb.path(DeadletterDir)); len(got) != 2 {
		t.Errorf("deadletter/ = %v, want it left as it was", got)
	}
}

// An unreadable dead letter settled by hand keeps its own name in the
// archive, and is found there by that name: a second drop says it is done,
// not that no such message exists.
func TestSettledUnreadableDeadLetterIsFoundByItsName(t *testing.T) {
	mb, name := unreadableDeadLetter(t)
	if err := mb.Settle(locateOne(t, mb, name), Receipt{Outcome: "dropped"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e := locateOne(t, mb, name); e.State != StateDone || e.Receipt == nil || e.Receipt.Outcome != "dropped" {
		t.Fatalf("Locate(%s) after the drop = %+v (receipt %+v); want it archived, dropped", name, e, e.Receipt)
	}
}

func TestAbandonDeadLettersTheClaimUnderTheConsumerLock(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{}, now)
	if _, err := c.Claim(now); err != nil {
		t.Fatal(err)
	}
	var locked *LockedError
	if _, err := mb.Abandon("m1", "stuck", now); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("Abandon while a consumer holds the mailbox = %v", err)
	}
	c.Close() // the runner is gone, its claim left in flight
	msg, err := mb.Abandon("m1", "skipped by a person: stuck", now)
	if err != nil || msg.ID != "m1" {
		t.Fatalf("Abandon = %+v, %v", msg, err)
	}
	if got := names(t, mb.path(ProcessingDir)); len(got) != 0 {
		t.Errorf("processing/ = %v", got)
	}
	e := locateOne(t, mb, "m1")
	if e.State != StateDead || e.Reason != "skipped by a person: stuck" {
		t.Errorf("after Abandon: %+v", e)
	}
	if _, err := mb.Abandon("m1", "again", now); !errors.Is(err, ErrMoved) {
		t.Errorf("second Abandon = %v, want ErrMoved", err)
	}
}

// TestAbandonFinishesWhatItsRunnerHadSettled: a runner that recorded the
// turn's receipt, or its dead-lettering, and died before moving the
// message on left it in processing/. A skip then finishes the move the
// runner had decided on and says the skip came too late: dead-lettering a
// turn whose receipt is recorded would have a retry run it again, effects
// and all.
func TestAbandonFinishesWhatItsRunnerHadSettled(t *testing.T) {
	for _, c := range []struct {
		name   string
		settle func(c *Consumer, cl *Claim) error
		want   string
	}{
		{"receipt", func(c *Consumer, cl *Claim) error {
			cl.Progress.Receipt = &Receipt{ID: cl.Message.ID, Reply: "r", Outcome: "done", CompletedAt: t0}
			return c.Record(cl, StageDone, t0)
		}, StateDone},
		{"dead-lettering", func(c *Consumer, cl *Claim) error {
			cl.Progress.Reason = "it failed 5 times"
			return c.Record(cl, stageDeadlettering, t0)
		}, StateDead},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := newRuntime(t, "Agent-1")
			mb := openMailbox(t, root, "Agent-1")
			if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
				t.Fatal(err)
			}
			con := consume(t, mb, Options{}, t0)
			cl, err := con.Claim(t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.settle(con, cl); err != nil {
				t.Fatal(err)
			}
			con.Close() // the runner dies before it moves the message on

			_, err = mb.Abandon("m1", "skipped by a person: stuck", t0.Add(time.Minute))
			if !errors.Is(err, ErrSettled) {
				t.Fatalf("Abandon = %v, want ErrSettled", err)
			}
			if got := names(t, mb.path(ProcessingDir)); len(got) != 0 {
				t.Errorf("processing/ = %v", got)
			}
			e := locateOne(t, mb, "m1")
			if e.State != c.want {
				t.Fatalf("after Abandon: %+v, want it %s", e, c.want)
			}
			switch c.want {
			case StateDone:
				if e.Receipt == nil || e.Receipt.Reply != "r" {
					t.Errorf("archived with receipt %+v, want the runner's", e.Receipt)
				}
			case StateDead:
				if e.Reason != "it failed 5 times" {
					t.Errorf("dead-lettered for %q, want the runner's reason", e.Reason)
				}
			}
		})
	}
}

func TestSkipRequestIsForOneMessage(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	if _, ok := mb.SkipRequested("m1"); ok {
		t.Fatal("a request without a file")
	}
	if err := mb.RequestSkip(SkipRequest{ID: "m1", Reason: "stuck", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, ok := mb.SkipRequested("m2"); ok {
		t.Error("the request for m1 was taken for m2")
	}
	if err := mb.ClearSkipRequest("m2"); err != nil {
		t.Fatal(err)
	}
	if r, ok := mb.SkipRequested("m1"); !ok || r.Reason != "stuck" {
		t.Errorf("SkipRequested(m1) = %+v, %v", r, ok)
	}
	if err := mb.ClearSkipRequest("m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mb.Dir, SkipJSON)); !os.IsNotExist(err) {
		t.Errorf("skip.json still there: %v", err)
	}
}

// A dropped file without an id keeps, dead-lettered, the id it was listed
// under while pending: that id is derived from the file's name, which the
// move to deadletter/ changes, so the reason file keeps it.
func TestDeadLetterKeepsTheIDItWasListedUnder(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	writeFile(t, inboxPath(mb, "note.md"), []byte("**From:** Agent-2\n**To:** Agent-9\n\nFor someone not here.\n"))
	pending, err := mb.List(StatePending)
	if err != nil || len(pending) != 1 || pending[0].Message.ID == "" {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	id := pending[0].Message.ID
	consume(t, mb, Options{Known: []string{"Agent-1", "Agent-2"}, Settle: time.Millisecond}, time.Now().Add(time.Hour)).Close()
	e := locateOne(t, mb, id)
	if e.State != StateDead || e.Message.ID != id {
		t.Fatalf("Locate(%s) = %+v; want the dead letter under the same id", id, e)
	}
	msg, err := mb.Requeue(mb.ReadDeadLetter(e), mb, time.Now())
	if err != nil || msg.ID != id {
		t.Fatalf("requeued %s, %v; want it back under %s", msg.ID, err, id)
	}
}
