package mailbox

import (
	"errors"
	"testing"
	"time"
)

// A message recorded as history is in the archive with its receipt, found
// as done, and never delivered as work afterwards.
func TestRecordArchivesHistoryOnce(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	now := time.Now()
	msg := testMessage("old-1", "Agent-1", Normal)
	if mb.Seen(msg.ID) {
		t.Fatal("seen before anything happened")
	}
	if err := mb.Record(msg, Receipt{Outcome: "imported history"}, now); err != nil {
		t.Fatal(err)
	}
	if err := mb.Record(msg, Receipt{Outcome: "imported history"}, now); !errors.Is(err, ErrDuplicate) {
		t.Errorf("recorded twice: %v", err)
	}
	if err := mb.Deliver(msg); !errors.Is(err, ErrDuplicate) {
		t.Errorf("delivered as work after it was history: %v", err)
	}
	if !mb.Seen(msg.ID) {
		t.Error("not seen after it was recorded")
	}
	done, err := mb.List(StateDone)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0].Message.ID != "old-1" || done[0].Receipt == nil || done[0].Receipt.Outcome != "imported history" {
		t.Errorf("done = %+v, want old-1 with its receipt", done)
	}
	if pending, _ := mb.List(StatePending); len(pending) != 0 {
		t.Errorf("pending = %+v", pending)
	}
}
