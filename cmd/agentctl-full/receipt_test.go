package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/mailbox"
)

// Messages archived by an earlier agentctl, whose receipts' data was an
// untyped object, list with their errors, driver notes and no_block as
// they did then.
func TestInboxListsReceiptsOfEarlierAgentctls(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "1")
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(mb.Dir, mailbox.ArchiveDir, "2026-11-26")
	if err := atomicfile.MkdirAll(day); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 5, 47, 0, 0, time.UTC)
	for i, name := range []string{"turn-with-errors", "without-block", "dropped"} {
		log, err := os.ReadFile(filepath.Join("..", "..", "agents", "receipt", "testdata", "v0", name+mailbox.ReceiptSuffix))
		if err != nil {
			t.Fatal(err)
		}
		msg := mailbox.Message{ID: name, From: "Agent-2", To: "Agent-1", Body: name, CreatedAt: at.Add(time.Duration(i) * time.Minute)}
		if err := os.WriteFile(filepath.Join(day, name+".json"), msg.Encode(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(day, name+mailbox.ReceiptSuffix), log, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var items []inboxItem
	out := mustAgentctl(t, root, "inbox", "Agent-1", "--state", "done", "--json")
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]inboxItem{}
	for _, it := range items {
		got[it.ID] = it
	}
	if len(got) != 3 {
		t.Fatalf("listed %s", out)
	}
	turn := got["turn-with-errors"]
	if turn.Outcome != "done with errors" || len(turn.Errors) != 2 || !strings.Contains(turn.Errors[0], "guardrails.many_sends: deny") ||
		!reflect.DeepEqual(turn.DriverNotes, []string{"the copy menu was slow; read the reply from the page", "second note"}) || turn.NoBlock != "" {
		t.Errorf("turn-with-errors listed as %+v", turn)
	}
	noBlock := got["without-block"]
	if noBlock.Outcome != "done without block" || !strings.Contains(noBlock.NoBlock, "asked for an agentctl block") || len(noBlock.DriverNotes) != 3 || noBlock.Errors != nil {
		t.Errorf("without-block listed as %+v", noBlock)
	}
	if dropped := got["dropped"]; dropped.Outcome != "dropped" || dropped.Errors != nil || dropped.DriverNotes != nil || dropped.NoBlock != "" {
		t.Errorf("dropped listed as %+v", dropped)
	}
	// The JSON keeps its keys: a field renamed by the typing would show here.
	for _, key := range []string{`"errors": [`, `"driver_notes": [`, `"no_block": "`, `"outcome": "dropped"`} {
		if !strings.Contains(out, key) {
			t.Errorf("inbox --json has no %s:\n%s", key, out)
		}
	}
}
