package dreamos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Titles as the old writers wrote them: the words that say how pressing a
// message is, and those that only look as if they did.
func TestPriorityInTitle(t *testing.T) {
	for _, c := range []struct{ title, want string }{
		// The samples' titles: a 🚨 on every message, regular ones too.
		{"🚨 CAPTAIN MESSAGE - JET FUEL", ""},
		{"🚨 INBOX MESSAGE - TEXT", ""},
		{"🚨 CAPTAIN MESSAGE - RESUME DIRECTIVE", ""},
		{"Phase 3 Tool Fixes Completed - Runtime Error Resolution", ""},
		{"RESUME DIRECTIVE - IMMEDIATE ACTION REQUIRED", Urgent},
		{"🚨 URGENT MESSAGE", Urgent},
		{"urgent: the board is locked", Urgent},
		{"Re: URGENT - deploy blocked", Urgent},
		{"[URGENT] Agent-4 needs help", Urgent},
		{"[HIGH PRIORITY] Review the mailbox refactor", High},
		{"[high-priority] Review", High},
		{"[LOW] Tidy the devlog", Low},
		{"[P0] Production down", Urgent},
		{"(P1) flaky tests", High},
		{"CRITICAL: disk full on the runner", Urgent},
		{"Critical: disk full", Urgent},
		{"⚠️ EMERGENCY stop all agents", Urgent},
		{"HIGH PRIORITY: rebase before Friday", High},
		{"Low priority - rename the fixtures", Low},
		{"Priority: high — merge the parser", High},
		{"Important: read before the sprint", High},
		{"[NORMAL PRIORITY] weekly sync", Normal},
		// Words that say nothing about this message.
		{"Fix the critical path in the scheduler", ""},
		{"Not urgent: rename the fixtures", ""},
		{"A non-urgent clean-up", ""},
		{"High availability notes", ""},
		{"[A2A] Agent-7 to Agent-6", ""},
		{"Normal: weekly sync", ""},
		{"", ""},
	} {
		if got := PriorityInTitle(c.title); got != c.want {
			t.Errorf("PriorityInTitle(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

// A title's words count only where no field or header gives a priority:
// the real sample's "**Priority**: regular" under a 🚨 title stays normal.
func TestPriorityFromTitleOnlyWithoutField(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"a.json", `{"from": "Agent-2", "subject": "[HIGH PRIORITY] Review", "content": "x"}`, High},
		{"b.json", `{"from": "Agent-2", "subject": "[HIGH PRIORITY] Review", "priority": "low", "content": "x"}`, Low},
		{"c.json", `{"from": "Agent-2", "title": "CRITICAL: disk full", "content": "x"}`, Urgent},
		{"d.json", `{"from": "Agent-2", "subject": "CRITICAL: disk full", "priority": 2, "content": "x"}`, Normal},
		{"e.json", `{"from": "Agent-2", "subject": "URGENT", "priority_score": 0.1, "content": "x"}`, Low},
		{"f.msg", `{"sender": "THEA", "target": "ALL", "payload": {"subject": "URGENT: stand-up", "body": "x"}}`, Urgent},
		{"g.md", "# 🚨 URGENT MESSAGE\n\n**From**: Agent-2\n**To**: Agent-1\n\nThe build is red.\n", Urgent},
		{"h.md", "# 🚨 URGENT MESSAGE\n\n**From**: Agent-2\n**Priority**: low\n\nThe build is red.\n", Low},
		{"i.md", "# 🚨 INBOX MESSAGE - TEXT\n\n**From**: Agent-2\n\nThe build is red.\n", Normal},
	} {
		m := decode(t, c.name, c.data)
		if m.Priority != c.want {
			t.Errorf("%s (subject %q): priority %q, want %q", c.name, m.Subject, m.Priority, c.want)
		}
	}
	files, _ := filepath.Glob("../../fixtures/dreamos-samples/victor-dreamos__agent_workspaces__Agent-1__inbox__*.md")
	if len(files) < 3 {
		t.Fatalf("found %d Markdown inbox samples, want 3", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, filepath.Base(f), string(data))
		want := Normal
		if strings.Contains(strings.ToLower(string(data)), "**priority**: urgent") {
			want = Urgent
		}
		if m.Priority != want || !strings.Contains(m.Subject, "🚨") {
			t.Errorf("%s: subject %q priority %q, want %q as its field says", filepath.Base(f), m.Subject, m.Priority, want)
		}
	}
}
