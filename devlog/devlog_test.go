package devlog

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("DEVLOG_WORKER") == "append" {
		os.Exit(appendWorker(os.Args[1:]))
	}
	os.Exit(m.Run())
}

var t0 = time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)

func sampleEntry(i int) Entry {
	return Entry{
		Time: t0.Add(time.Duration(i) * time.Second), Agent: "Agent-3",
		MessageID: fmt.Sprintf("m-%d", i), Subject: "Fix the · login bug",
		From: "Agent-1", Outcome: "done",
		Actions: []string{"board T-12 status=done", "sent reply to Agent-1"},
		Reply:   "Done.\n\n## not a header\n    > not a quote either\ntrailing   ",
	}
}

func TestFormatReadRoundTrip(t *testing.T) {
	notes := Entry{Time: t0, Agent: "Agent-3", Note: "Paused the agent\nfor the release.", Author: "victor"}
	failed := Entry{Time: t0, Agent: "Agent-3", MessageID: "id with spaces", Subject: "multi\nline", Outcome: "failed", Error: "window not found"}
	var buf bytes.Buffer
	buf.WriteString("# Devlog of Agent-3 (a human wrote this title)\n\nfree text\n")
	for _, e := range []Entry{sampleEntry(1), notes, failed} {
		buf.Write(Format(e))
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want1 := sampleEntry(1)
	want1.Reply = "Done.\n\n## not a header\n    > not a quote either\ntrailing"
	notes.Subject = "Paused the agent for the release."
	failed.MessageID, failed.Subject = "id_with_spaces", "multi line"
	if len(got) != 3 {
		t.Fatalf("read %d entries, want 3: %+v", len(got), got)
	}
	for i, want := range []Entry{want1, notes, failed} {
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	if !got[1].IsNote() || got[0].IsNote() {
		t.Error("IsNote is wrong")
	}
	text := string(Format(sampleEntry(1)))
	if !strings.HasPrefix(text, "## 2026-11-21T20:00:01.000Z · Agent-3 · msg m-1 · Fix the · login bug\n- from: Agent-1\n") {
		t.Errorf("entry text:\n%s", text)
	}
}

func TestAppendRefusesBadNames(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"../x", "a/b", "", ".hidden"} {
		if err := Append(root, Entry{Time: t0, Agent: name, Note: "x"}); err == nil {
			t.Errorf("agent name %q accepted", name)
		}
	}
	if err := Append(root, Entry{Agent: "Agent-1", Note: "x"}); err == nil {
		t.Error("entry without a time accepted")
	}
}

// An entry appended to a devlog a person saved without a final line
// break starts on a line of its own, and reads back.
func TestAppendAfterALineWithoutBreak(t *testing.T) {
	root := t.TempDir()
	if err := Append(root, sampleEntry(1)); err != nil {
		t.Fatal(err)
	}
	path, _ := Path(root, "Agent-3")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("a person's line, saved without a break")
	f.Close()
	if err := Append(root, sampleEntry(2)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAgent(root, "Agent-3")
	if err != nil || len(got) != 2 || got[1].MessageID != "m-2" {
		t.Fatalf("read %+v, %v; want m-1 and m-2", got, err)
	}
}

// appendWorker appends n large entries for one writer id.
func appendWorker(args []string) int {
	root, id := args[0], args[1]
	n, _ := strconv.Atoi(args[2])
	for i := 0; i < n; i++ {
		e := sampleEntry(i)
		e.MessageID = fmt.Sprintf("%s-%d", id, i)
		e.Reply = strings.Repeat(id+" says hello. ", 300) // ~4-5 KB: larger than a pipe buffer
		if err := Append(root, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentAppends has several processes append to one devlog at once
// and checks that every entry reads back whole.
func TestConcurrentAppends(t *testing.T) {
	const writers, each = 6, 150
	root := t.TempDir()
	var cmds []*exec.Cmd
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], root, fmt.Sprintf("w%d", w), strconv.Itoa(each))
		cmd.Env = append(os.Environ(), "DEVLOG_WORKER=append")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ReadAgent(root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != writers*each {
		t.Fatalf("read %d entries, want %d", len(entries), writers*each)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		id, _, _ := strings.Cut(e.MessageID, "-")
		if e.Reply != strings.TrimSpace(strings.Repeat(id+" says hello. ", 300)) || len(e.Actions) != 2 || seen[e.MessageID] {
			t.Fatalf("entry %s is mixed with another or repeated: %+v", e.MessageID, e)
		}
		seen[e.MessageID] = true
	}
	st, _ := os.Stat(filepath.Join(root, "devlogs", "Agent-3.md"))
	if st.Mode().Perm()&0o022 != 0 {
		t.Errorf("devlog is writable by others: %v", st.Mode())
	}
}

func TestLastAndMerge(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 2000; i++ { // ~ 500 KB, several read-back chunks
		if err := Append(root, sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	path, _ := Path(root, "Agent-3")
	for _, n := range []int{1, 3, 700, 5000} {
		text, err := Last(path, n, -1)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := Read(bytes.NewReader(text))
		want := min(n, 2000)
		if len(entries) != want || entries[len(entries)-1].MessageID != "m-1999" || entries[0].MessageID != fmt.Sprintf("m-%d", 2000-want) {
			t.Errorf("Last(%d) gave %d entries", n, len(entries))
		}
	}
	if text, err := Last(filepath.Join(root, "missing.md"), 5, -1); err != nil || text != nil {
		t.Errorf("missing file: %q, %v", text, err)
	}
	a := []Entry{{Time: t0, Agent: "B"}, {Time: t0.Add(2 * time.Second), Agent: "B"}}
	b := []Entry{{Time: t0, Agent: "A"}, {Time: t0.Add(time.Second), Agent: "A"}}
	got := Merge(3, a, b)
	if len(got) != 3 || got[0].Agent != "B" || got[1].Agent != "A" || !got[2].Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("Merge = %+v", got)
	}
}
