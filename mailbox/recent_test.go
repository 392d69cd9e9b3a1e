package mailbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecentDoneReadsTheNewestArchivedMessagesOnly(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	c := consume(t, mb, Options{}, base)
	var ids []string
	for i := range 5 {
		now := base.Add(time.Duration(i) * 24 * time.Hour / 2) // spans three archive days
		msg := testMessage(NewID(now), "Agent-1", Normal)
		if err := mb.Deliver(msg); err != nil {
			t.Fatal(err)
		}
		if err := c.Scan(now); err != nil {
			t.Fatal(err)
		}
		cl, err := c.Claim(now)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Complete(cl, Receipt{Outcome: "done"}, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, msg.ID)
		// The receipt's modification time is when it was settled: the
		// test's time, not however fast the loop ran.
		receipts, _ := filepath.Glob(filepath.Join(mb.path(ArchiveDir), "*", "*"+ReceiptSuffix))
		set := 0
		for _, r := range receipts {
			if strings.Contains(filepath.Base(r), msg.ID) {
				if err := os.Chtimes(r, now, now); err != nil {
					t.Fatal(err)
				}
				set++
			}
		}
		if set != 1 {
			t.Fatalf("%d receipts of %s among %v", set, msg.ID, receipts)
		}
	}
	got, err := mb.RecentDone(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d entries, want 3", len(got))
	}
	for i, e := range got {
		if want := ids[4-i]; e.Message.ID != want {
			t.Errorf("entry %d is %s, want %s", i, e.Message.ID, want)
		}
		if e.Receipt == nil || e.Receipt.Outcome != "done" {
			t.Errorf("entry %d has receipt %+v", i, e.Receipt)
		}
	}
}
