package missioncontrol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/mailbox"
)

// TestFeedSeesAReceiptWrittenInTheArchive settles a message the way a
// person's reply or drop does: it moves from inbox/ straight into the
// archive's day folder, and its receipt is written there last. The view
// taken between the two steps shows it done by nobody yet; the receipt
// must still show, by its own file event, long before the feed's rescan.
func TestFeedSeesAReceiptWrittenInTheArchive(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1")
	f := startFeed(t, root, cfg)
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	deliver := func(id string) {
		t.Helper()
		if err := mb.Deliver(mailbox.Message{ID: id, From: "human", To: "Agent-1", Subject: id, Body: "b", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}

	// One message settled whole: today's day folder is there from now on.
	deliver("m1")
	pending, err := mb.List(mailbox.StatePending)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if err := mb.Settle(pending[0], mailbox.Receipt{Outcome: "dropped"}, now); err != nil {
		t.Fatal(err)
	}
	await(t, f, "m1 done", func(s Snapshot) bool { return s.Agents[0].Done == 1 && s.Agents[0].Pending == 0 })

	// The second, step by step, with a view between the steps.
	deliver("m2")
	await(t, f, "m2 pending", func(s Snapshot) bool { return s.Agents[0].Pending == 1 })
	day := filepath.Join(mb.Dir, mailbox.ArchiveDir, now.Format("2006-01-02"))
	stem := mailbox.Stem("m2")
	if err := os.Rename(filepath.Join(mb.Dir, mailbox.InboxDir, stem+".json"), filepath.Join(day, stem+".json")); err != nil {
		t.Fatal(err)
	}
	s := await(t, f, "m2 gone from the inbox", func(s Snapshot) bool { return s.Agents[0].Pending == 0 })
	if s.Agents[0].Done != 1 {
		t.Fatalf("m2 counts as done before its receipt: %+v", s.Agents[0])
	}
	receipt := mailbox.Receipt{ID: "m2", Agent: "Agent-1", Outcome: "dropped", ClaimedAt: now, CompletedAt: now}
	line, err := json.Marshal(mailbox.Progress{ID: "m2", Agent: "Agent-1", ClaimedAt: now, Stage: mailbox.StageDone, Receipt: &receipt})
	if err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Create(filepath.Join(day, stem+mailbox.ReceiptSuffix), append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	await(t, f, "m2 done", func(s Snapshot) bool { return s.Agents[0].Done == 2 })
}
