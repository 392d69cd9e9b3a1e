package mailbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecoveryStopsAtALogItCannotArchive crashes a consumer after its
// message reached the archive but before its progress log did. When the
// next consumer cannot move that log to the archive, it does not start
// (a runner would otherwise go on with the log stuck in processing/), and
// says why; once the way is clear, the next one archives it.
func TestRecoveryStopsAtALogItCannotArchive(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	opts := Options{Known: []string{"Agent-1"}}
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, opts, t0)
	cl, err := c.Claim(t0)
	if err != nil {
		t.Fatal(err)
	}
	cl.Progress.Receipt = &Receipt{ID: cl.Message.ID, Reply: "r", CompletedAt: t0}
	if err := c.Record(cl, StageDone, t0); err != nil {
		t.Fatal(err)
	}
	day := mb.path(ArchiveDir, t0.Format("2006-01-02"))
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(c.processing(cl.stem, ".json"), filepath.Join(day, cl.stem+".json")); err != nil {
		t.Fatal(err)
	}
	c.Close() // the lock dies with the process

	// Where the receipt goes, something a rename cannot replace.
	receipt := filepath.Join(day, cl.stem+ReceiptSuffix)
	if err := os.MkdirAll(filepath.Join(receipt, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Minute)
	if c2, err := mb.Consume(opts, later); err == nil {
		c2.Close()
		t.Fatalf("the consumer started with %v left in processing/", names(t, mb.path(ProcessingDir)))
	} else if !strings.Contains(err.Error(), "cannot archive "+cl.stem) {
		t.Errorf("err = %v, want it to say the log cannot be archived", err)
	}

	if err := os.RemoveAll(receipt); err != nil {
		t.Fatal(err)
	}
	consume(t, mb, opts, later)
	if p := names(t, mb.path(ProcessingDir)); len(p) != 0 {
		t.Errorf("processing/ still holds %v", p)
	}
	if _, err := os.Stat(receipt); err != nil {
		t.Errorf("the receipt is not in the archive: %v", err)
	}
	if a := archivedIDs(t, mb); a["m1"] != 1 {
		t.Errorf("archive = %v, want m1 once", a)
	}
}

// TestALogRemovedMidTurnIsWrittenAgain: a progress log someone removes, or
// moves away, while its claim is in flight is written afresh at the next
// record, so that the message is archived with its receipt.
func TestALogRemovedMidTurnIsWrittenAgain(t *testing.T) {
	for name, away := range map[string]func(path string) error{
		"removed": os.Remove,
		"moved":   func(path string) error { return os.Rename(path, path+".aside") },
	} {
		t.Run(name, func(t *testing.T) {
			root := newRuntime(t, "Agent-1")
			mb := openMailbox(t, root, "Agent-1")
			if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
				t.Fatal(err)
			}
			c := consume(t, mb, Options{Known: []string{"Agent-1"}}, t0)
			cl, err := c.Claim(t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Record(cl, "submitted", t0); err != nil {
				t.Fatal(err)
			}
			if err := away(c.processing(cl.stem, ProgressSuffix)); err != nil {
				t.Fatal(err)
			}
			if err := c.Complete(cl, Receipt{Reply: "r"}, t0); err != nil {
				t.Fatal(err)
			}
			done, err := mb.List(StateDone)
			if err != nil || len(done) != 1 || done[0].Receipt == nil || done[0].Receipt.Reply != "r" {
				t.Fatalf("archived: %+v %v; want m1 with its receipt", done, err)
			}
		})
	}
}
