package dreamos

import (
	"strings"
	"testing"
)

const appended = "\ufeff# Message from Agent-2\r\n**From**: Agent-2\r\n**Priority**: high\r\n---\r\nFirst, with a line\r\n**Status**: in the body\r\n\r\n" +
	"---\n# Message\n**From:** Agent-3\n**To:** Agent-1\n\nSecond.\nFrom: the docs, a plain line in a body\n\n" +
	"[A2A] AGENT-7 → Agent-1\nThird.\n"

func TestSplitAppendedMessages(t *testing.T) {
	parts := Split([]byte(appended))
	want := []struct{ from, body string }{{"Agent-2", "First, with a line\n**Status**: in the body"}, {"Agent-3", "Second.\nFrom: the docs, a plain line in a body"}, {"AGENT-7", "Third."}}
	if len(parts) != len(want) {
		t.Fatalf("split into %d parts, want %d: %v", len(parts), len(want), parts)
	}
	end := 0
	for i, p := range parts {
		if p.Start != end {
			t.Errorf("part %d starts at %d, want %d (parts must tile the file)", i, p.Start, end)
		}
		end = p.End
		m, err := Decode([]byte(appended[p.Start:p.End]), Source{Name: "inbox.txt", Owner: "Agent-1"})
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if m.From != want[i].from || m.Body != want[i].body {
			t.Errorf("part %d: from %q body %q, want %q %q", i, m.From, m.Body, want[i].from, want[i].body)
		}
	}
	if end != len(appended) {
		t.Errorf("parts end at %d, want %d", end, len(appended))
	}
}

func TestSplitGrowingFile(t *testing.T) {
	// Each prefix splits into parts whose starts are a prefix of the whole
	// file's starts: a message once complete never moves.
	whole := Split([]byte(appended))
	for n := 0; n <= len(appended); n++ {
		parts := Split([]byte(appended[:n]))
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] != whole[i] {
				t.Fatalf("prefix %d: part %d = %v, want %v", n, i, parts[i], whole[i])
			}
		}
	}
	if Split([]byte(" \n")) != nil {
		t.Error("blank text has parts")
	}
	if p := Split([]byte("no headers at all\n")); len(p) != 1 || !strings.Contains(appended, "") {
		t.Errorf("headerless text = %v, want one part", p)
	}
}
