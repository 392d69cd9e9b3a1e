package hub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJournalKeepsEachTurnsStage(t *testing.T) {
	j, err := OpenJournal(filepath.Join(t.TempDir(), "seats", "Agent-5"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := j.Load("m1/1"); ok || err != nil {
		t.Fatalf("Load of an unknown turn = %v, %v", ok, err)
	}
	e := Entry{Turn: "m1/1", Stage: stageSubmitted, Ask: &Ask{Turn: "m1/1", Ask: "m1/1@a"}}
	if err := j.Save(e); err != nil {
		t.Fatal(err)
	}
	got, ok, err := j.Load("m1/1")
	if err != nil || !ok || !got.Delivered() || got.Ask == nil {
		t.Fatalf("Load = %+v, %v, %v", got, ok, err)
	}
	open, err := j.Unanswered()
	if err != nil || len(open) != 1 {
		t.Fatalf("Unanswered = %v, %v; want the one turn", open, err)
	}
}

// Turn ids come from message ids other programs chose: they never become
// file names as they are.
func TestJournalFileNamesAreNotTurnIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Save(Entry{Turn: "../../etc/passwd/1", Stage: stageReceived}); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil || len(names) != 1 {
		t.Fatalf("journal holds %v, %v", names, err)
	}
	if _, ok, _ := j.Load("../../etc/passwd/1"); !ok {
		t.Fatal("the record was not found again")
	}
}

// A record that cannot be read may have said the prompt went out: the turn
// is resumed, never sent as new.
func TestUnreadableRecordCountsAsDelivered(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.file("m1/1"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, ok, err := j.Load("m1/1")
	if err != nil || !ok || !e.Delivered() || e.Answer != nil {
		t.Fatalf("Load = %+v, %v, %v; want a delivered turn without answer", e, ok, err)
	}
}

// TestPruneRemovesOnlyOldSettledRecords: a seat switched off for longer
// than the journal keeps turns finds its unanswered ask still waiting on
// the server; the record that says the prompt went out must still be
// there, or the agent gets the prompt twice. So must an answer the hub
// never had.
func TestPruneRemovesOnlyOldSettledRecords(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(turn string) *Ask { return &Ask{Turn: turn, Ask: turn + "@a", Prompt: "P"} }
	records := map[string]Entry{
		"old-answered/1":  {Turn: "old-answered/1", Stage: stageAnswered, Ask: ask("old-answered/1"), Answer: &Answer{Turn: "old-answered/1", Reply: "r"}},
		"old-received/1":  {Turn: "old-received/1", Stage: stageReceived, Ask: ask("old-received/1")},
		"old-submitted/1": {Turn: "old-submitted/1", Stage: stageSubmitted, Ask: ask("old-submitted/1")},
		"new-answered/1":  {Turn: "new-answered/1", Stage: stageAnswered, Ask: ask("new-answered/1"), Answer: &Answer{Turn: "new-answered/1", Reply: "r"}},
		// Answered a week ago, the answer never reached the hub: the
		// hub's ask, offered again, is answered from here.
		"old-unsent/1": {Turn: "old-unsent/1", Stage: stageAnswered, Ask: ask("old-unsent/1"), Answer: &Answer{Turn: "old-unsent/1", Reply: "r"}, Unsent: true},
		// Its answer went once the seat was back.
		"old-sent/1": {Turn: "old-sent/1", Stage: stageAnswered, Ask: ask("old-sent/1"), Answer: &Answer{Turn: "old-sent/1", Reply: "r"}, Unsent: true},
	}
	for _, e := range records {
		if err := j.Save(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(j.file("old-unreadable/1"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.Sent("old-sent/1"); err != nil {
		t.Fatal(err)
	}
	week := time.Now().Add(-8 * 24 * time.Hour)
	for _, turn := range []string{"old-answered/1", "old-received/1", "old-submitted/1", "old-unreadable/1", "old-unsent/1", "old-sent/1"} {
		if err := os.Chtimes(j.file(turn), week, week); err != nil {
			t.Fatal(err)
		}
	}
	n, err := j.Prune(time.Now().Add(-DefaultKeep))
	if err != nil || n != 3 {
		t.Fatalf("Prune = %d, %v; want 3 (the old answered turns the hub had and the one never given to the agent)", n, err)
	}
	for turn, kept := range map[string]bool{"old-answered/1": false, "old-received/1": false, "old-submitted/1": true, "old-unreadable/1": true,
		"new-answered/1": true, "old-unsent/1": true, "old-sent/1": false} {
		if _, ok, _ := j.Load(turn); ok != kept {
			t.Errorf("%s kept = %v, want %v", turn, ok, kept)
		}
	}
}

// A record that is not whole (no turn, an ask of another turn, a record
// under another turn's name) is never taken up by itself: only an ask the
// server offers again resumes it.
func TestUnansweredSkipsRecordsThatAreNotWhole(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"a/1": `{"turn": "", "stage": "started", "ask": {"turn": "", "ask": "x", "prompt": "P"}}`,
		"b/1": `{"turn": "b/1", "stage": "started", "ask": {"turn": "c/1", "ask": "x", "prompt": "P"}}`,
		"d/1": `{"turn": "e/1", "stage": "started", "ask": {"turn": "e/1", "ask": "x", "prompt": "P"}}`,
		"f/1": `{"turn": "f/1", "stage": "started", "ask": {"turn": "f/1", "ask": "", "prompt": "P"}}`,
		"g/1": `[1, 2`,
	}
	for turn, data := range bad {
		if err := os.WriteFile(j.file(turn), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Save(Entry{Turn: "ok/1", Stage: stageStarted, Ask: &Ask{Turn: "ok/1", Ask: "ok/1@a", Prompt: "P"}}); err != nil {
		t.Fatal(err)
	}
	open, err := j.Unanswered()
	if err != nil || len(open) != 1 || open[0].Turn != "ok/1" {
		t.Fatalf("Unanswered = %+v, %v; want only ok/1", open, err)
	}
}

// A turn whose record says only "received" (a seat stopped as it took up
// again a turn whose agent never had the prompt) waits for its ask, which
// the server offers again: taken up unasked, its prompt could go to an
// agent the hub no longer asks.
func TestUnansweredLeavesATurnTheAgentNeverHad(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{
		{Turn: "received/1", Stage: stageReceived, Ask: &Ask{Turn: "received/1", Ask: "received/1@b", Prompt: "P"}},
		{Turn: "pressed/1", Stage: stagePressed, Ask: &Ask{Turn: "pressed/1", Ask: "pressed/1@a", Prompt: "P"}},
	} {
		if err := j.Save(e); err != nil {
			t.Fatal(err)
		}
	}
	open, err := j.Unanswered()
	if err != nil || len(open) != 1 || open[0].Turn != "pressed/1" {
		t.Fatalf("Unanswered = %+v, %v; want only the turn the agent may have", open, err)
	}
}

// A step cut short by a crash leaves part of a line, never synced: the
// turn is where the last whole line says, and the steps after the crash
// are read again past the broken line.
func TestJournalReadsPastALineCutShort(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ask := &Ask{Turn: "m1/1", Ask: "m1/1@a", Prompt: "P"}
	if err := j.Save(Entry{Turn: "m1/1", Stage: stageStarted, Ask: ask}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(j.file("m1/1"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"turn":"m1/1","stage":"answered","answer":{"tu`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e, ok, err := j.Load("m1/1")
	if err != nil || !ok || e.Stage != stageStarted || e.Answer != nil || e.Ask == nil {
		t.Fatalf("Load after a line cut short = %+v, %v, %v; want the started turn", e, ok, err)
	}
	if open, err := j.Unanswered(); err != nil || len(open) != 1 {
		t.Fatalf("Unanswered = %+v, %v; want the started turn", open, err)
	}
	e.Stage, e.Answer = stageAnswered, &Answer{Turn: "m1/1", Ask: "m1/1@a", Reply: "R"}
	if err := j.Save(e); err != nil {
		t.Fatal(err)
	}
	if e, _, err := j.Load("m1/1"); err != nil || e.Answer == nil || e.Answer.Reply != "R" {
		t.Fatalf("Load after the answer = %+v, %v; want it answered", e, err)
	}
	if open, err := j.Unanswered(); err != nil || len(open) != 0 {
		t.Fatalf("Unanswered = %+v, %v; want none", open, err)
	}
}

// A record written whole in one piece, as seats of earlier releases did,
// is still read.
func TestJournalReadsARecordOfOnePiece(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := "{\n  \"turn\": \"m1/1\",\n  \"stage\": \"answered\",\n  \"answer\": {\"turn\": \"m1/1\", \"ask\": \"m1/1@a\", \"reply\": \"R\"}\n}\n"
	if err := os.WriteFile(j.file("m1/1"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := j.Load("m1/1"); err != nil || !ok || e.Answer == nil || e.Answer.Reply != "R" {
		t.Fatalf("Load = %+v, %v, %v; want the answered turn", e, ok, err)
	}
}

// Every step is written in this release's shape, with its version.
func TestJournalWritesItsVersion(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Save(Entry{Turn: "m1/1", Stage: stageReceived}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(j.file("m1/1"))
	if err != nil || !strings.Contains(string(data), `{"version":1,"turn":"m1/1"`) {
		t.Fatalf("the record holds %q, %v; want its line to start with version 1", data, err)
	}
}

// A turn that a seat of an earlier release left waiting (its chat showed
// the prompt, the reply not begun) is a submitted turn: it is finished
// unasked, never sent again, and its next step is written in this
// release's shape.
func TestJournalReadsAnEarlierReleasesWaitingTurn(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := `{"turn":"m1/1","stage":"waiting","ask":{"turn":"m1/1","ask":"m1/1@a","prompt":"P"},"received_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}` + "\n"
	if err := os.WriteFile(j.file("m1/1"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	e, ok, err := j.Load("m1/1")
	if err != nil || !ok || e.Stage != stageSubmitted || !e.Delivered() || e.Version != journalVersion {
		t.Fatalf("Load = %+v, %v, %v; want a submitted turn in this release's shape", e, ok, err)
	}
	if open, err := j.Unanswered(); err != nil || len(open) != 1 || open[0].Stage != stageSubmitted {
		t.Fatalf("Unanswered = %+v, %v; want the waiting turn, submitted", open, err)
	}
}

// A record a newer release wrote may mean what this one cannot tell: it
// counts as a turn whose prompt went out, as an unreadable one does, and
// is neither finished unasked nor pruned.
func TestJournalDoesNotTrustANewerReleasesRecord(t *testing.T) {
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newer := `{"version":2,"turn":"m1/1","stage":"received","ask":{"turn":"m1/1","ask":"m1/1@a","prompt":"P"}}` + "\n"
	path := j.file("m1/1")
	if err := os.WriteFile(path, []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}
	e, ok, err := j.Load("m1/1")
	if err != nil || !ok || !e.Delivered() || e.Answer != nil {
		t.Fatalf("Load = %+v, %v, %v; want a delivered turn without answer", e, ok, err)
	}
	if open, err := j.Unanswered(); err != nil || len(open) != 0 {
		t.Fatalf("Unanswered = %+v, %v; want none: its ask is not this release's to read", open, err)
	}
	old := time.Now().Add(-365 * 24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := j.Prune(time.Now()); err != nil || n != 0 {
		t.Fatalf("Prune removed %d, %v; want the newer record kept", n, err)
	}
}
