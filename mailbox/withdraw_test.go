package mailbox

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestDeliveryKeepsAMessageItsConsumerPutBack: the consumer claims a
// message the moment it lands and puts it back (a postponed note, a quick
// retry) before the delivery has marked its id seen; the delivery must
// neither remove the message put back nor call itself a duplicate.
func TestDeliveryKeepsAMessageItsConsumerPutBack(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	c := consume(t, mb, Options{MaxAttempts: 3, Backoff: time.Minute}, t0)
	mb.afterLink = func() {
		mb.afterLink = nil
		if err := c.Notice(t0, "note.json"); err != nil {
			t.Fatal(err)
		}
		cl, err := c.Claim(t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Postpone(cl, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mb.Deliver(testMessage("note", "Agent-1", Low)); err != nil {
		t.Fatalf("Deliver = %v, want the delivery to count: the consumer took it", err)
	}
	data, err := os.ReadFile(inboxPath(mb, "note.json"))
	if err != nil {
		t.Fatalf("the message put back is gone: %v", err)
	}
	msg, err := Decode(data, Source{Name: "note.json"})
	if err != nil || msg.DeliverAfter == nil {
		t.Errorf("inbox holds %s (%v), want the postponed message", data, err)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 1 {
		t.Errorf("inbox = %v, want the one message", got)
	}
}

// TestDuplicateDeliveryIsWithdrawn: a delivery whose id another copy took
// while it was linking removes its own copy and says it is a duplicate.
func TestDuplicateDeliveryIsWithdrawn(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	mb.afterLink = func() {
		if _, err := mb.markSeen(Stem("dup")); err != nil {
			t.Fatal(err)
		}
	}
	if err := mb.Deliver(testMessage("dup", "Agent-1", Normal)); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("Deliver = %v, want ErrDuplicate", err)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 0 {
		t.Errorf("inbox = %v, want the duplicate withdrawn", got)
	}
	if entries, _ := os.ReadDir(mb.path(InboxDir)); len(entries) != 0 {
		t.Errorf("inbox holds %v, want nothing set aside", entries)
	}
}

// TestWithdrawnMessageIsRestored: a message a delivery set aside and died
// before putting back is put back by the next scan once it is old enough.
func TestWithdrawnMessageIsRestored(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	aside := inboxPath(mb, ".held.json.00000000000000ff"+withdrawSuffix)
	writeFile(t, aside, testMessage("held", "Agent-1", Normal).Encode())
	old := t0.Add(-2 * leftoverAge)
	if err := os.Chtimes(aside, old, old); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{MaxAttempts: 3, Backoff: time.Minute}, t0)
	cl, err := c.Claim(t0)
	if err != nil || cl.Message.ID != "held" {
		t.Fatalf("Claim = %v, %v; want the restored message", cl, err)
	}
	if _, err := os.Stat(aside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the set-aside copy is still there: %v", err)
	}
}

// TestWithdrawnDuplicateIsNotWorkedAgain: a duplicate a delivery set aside
// and died before removing is removed, not put back, when its message is
// handled already: it used to be restored and worked a second time.
func TestWithdrawnDuplicateIsNotWorkedAgain(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	msg := testMessage("once", "Agent-1", Normal)
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{MaxAttempts: 3, Backoff: time.Minute}, t0)
	cl, err := c.Claim(t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Complete(cl, Receipt{Outcome: "done"}, t0); err != nil {
		t.Fatal(err)
	}
	aside := inboxPath(mb, ".once.json.00000000000000ff"+withdrawSuffix)
	writeFile(t, aside, msg.Encode())
	old := t0.Add(-2 * leftoverAge)
	if err := os.Chtimes(aside, old, old); err != nil {
		t.Fatal(err)
	}
	if err := c.Scan(t0); err != nil {
		t.Fatal(err)
	}
	if cl, err := c.Claim(t0); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Claim = %v, %v; want nothing: the set-aside copy is a duplicate of a message done", cl, err)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 0 {
		t.Errorf("inbox = %v, want the duplicate gone", got)
	}
	if _, err := os.Stat(aside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the set-aside duplicate is still there: %v", err)
	}
}
