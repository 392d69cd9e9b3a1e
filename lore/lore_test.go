package lore

import (
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/devlog"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func day(h, m int) time.Time { return time.Date(2026, 11, 21, h, m, 0, 0, time.UTC) }

func sampleDay() Input {
	return Input{
		Date: "2026-11-21",
		Entries: []devlog.Entry{
			{Time: day(9, 5), Agent: "Agent-3", MessageID: "m1", Subject: "Fix the login bug", From: "Agent-1", Outcome: "done", Actions: []string{"board T-12 status=done"}},
			{Time: day(9, 40), Agent: "Agent-1", MessageID: "m2", Subject: "Review T-12", From: "victor", Outcome: "failed", Error: "window not\nfound"},
			{Time: day(10, 0), Agent: "Agent-3", Note: "Paused for\nthe release.", Author: "victor"},
			{Time: day(10, 30), Agent: "Agent-3", Note: "Waiting on the schema.", Author: "Agent-3"},
			{Time: day(9, 5), Agent: "Agent-1", MessageID: "m0", Subject: "Same minute", Outcome: "retry"},
			{Time: day(23, 59).Add(time.Minute), Agent: "Agent-1", MessageID: "next-day", Subject: "tomorrow", Outcome: "done"},
		},
		Changes: []BoardChange{
			{Time: day(9, 6), TaskID: "T-12", Title: "Fix the login bug", Status: "done", Owner: "Agent-3"},
			{Time: day(8, 0), TaskID: "T-13", Title: "Write docs", Status: "blocked"},
			{Time: day(0, 0).Add(-time.Second), TaskID: "T-1", Title: "yesterday", Status: "done"},
		},
	}
}

func render(t *testing.T, in Input, d Dictionary) string {
	t.Helper()
	tmpl, err := ParseTemplate("lore", DefaultTemplate(), d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(in, d, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("lore differs from %s:\n%s", path, got)
	}
}

func TestDreamOSDictionaryLoadsAsIs(t *testing.T) {
	d, err := LoadDictionary(filepath.Join("..", "fixtures", "dreamos-samples", "victoros__runtime__operational_logs__config__dream_translation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Components["agent"] != "Shadow Disciple" || d.States["success"] != "Resonated True" || d.NarrativeTone.Style != "mythic cyberpunk" {
		t.Errorf("dictionary read as %+v", d)
	}
	checkGolden(t, "dreamos.md", render(t, sampleDay(), d))
}

func TestDefaultLoreIsDeterministic(t *testing.T) {
	want := render(t, sampleDay(), DefaultDictionary())
	checkGolden(t, "default.md", want)
	for i := 0; i < 20; i++ {
		in := sampleDay()
		r := rand.New(rand.NewSource(int64(i)))
		r.Shuffle(len(in.Entries), func(a, b int) { in.Entries[a], in.Entries[b] = in.Entries[b], in.Entries[a] })
		r.Shuffle(len(in.Changes), func(a, b int) { in.Changes[a], in.Changes[b] = in.Changes[b], in.Changes[a] })
		if got := render(t, in, DefaultDictionary()); got != want {
			t.Fatalf("shuffled input gave different lore:\n%s", got)
		}
	}
	if strings.Contains(want, "tomorrow") || strings.Contains(want, "yesterday") {
		t.Error("events from other days were told")
	}
}

func TestSilentDayAndBadInput(t *testing.T) {
	got := render(t, Input{Date: "2026-01-01"}, DefaultDictionary())
	if !strings.Contains(got, "The swarm was silent") {
		t.Errorf("silent day:\n%s", got)
	}
	if _, err := ParseDictionary("x.yaml", []byte("componentz: {}\n")); err == nil {
		t.Error("misspelt section accepted")
	}
	if _, err := Render(Input{Date: "21/11/2026"}, DefaultDictionary(), nil); err == nil {
		t.Error("bad date accepted")
	}
	if err := Write(t.TempDir(), "../../etc/x", nil); err == nil {
		t.Error("bad date accepted as a path")
	}
}

func TestGather(t *testing.T) {
	root := t.TempDir()
	if err := devlog.Append(root, devlog.Entry{Time: day(9, 5), Agent: "Agent-3", MessageID: "m1", Subject: "s", Outcome: "done"}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "project_board"), 0o755)
	os.WriteFile(filepath.Join(root, "project_board", "b.yaml"), []byte("tasks:\n  - id: T-1\n    title: t\n    status: done\n    owner: Agent-3\n    updated_at: 2026-11-21T09:06:00Z\n  - id: T-2\n    title: never touched\n    status: todo\n"), 0o644)
	os.WriteFile(filepath.Join(root, "project_board", "bad.yaml"), []byte("tasks: [\n"), 0o644)
	in, err := Gather(root, []string{"Agent-3", "Agent-1"}, "2026-11-21")
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("the invalid board was not reported: %v", err)
	}
	if len(in.Entries) != 1 || len(in.Changes) != 1 || in.Changes[0].TaskID != "T-1" {
		t.Errorf("gathered %+v", in)
	}
}
