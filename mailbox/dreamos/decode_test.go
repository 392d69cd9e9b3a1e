package dreamos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var mod = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func decode(t *testing.T, name, data string) Message {
	t.Helper()
	m, err := Decode([]byte(data), Source{Name: name, ModTime: mod, Owner: "Agent-1"})
	if err != nil {
		t.Fatalf("Decode(%s): %v", name, err)
	}
	return m
}

// fallbackFor returns the noted fallback of field, or nil.
func fallbackFor(m Message, field string) map[string]any {
	list, _ := m.Meta[FallbacksKey].([]any)
	for _, f := range list {
		if f := f.(map[string]any); f["field"] == field {
			return f
		}
	}
	return nil
}

// One unreadable field never costs the message: it falls back, and the
// original is kept with the reason.
func TestUnreadableFieldsFallBack(t *testing.T) {
	m := decode(t, "a.json", `{"id": "{{uuid}}", "sender": "Agent-7", "recipient": "{{AgentName}}",
		"priority": "Agent-3", "timestamp": "runtime/agent_comms/agent_mailboxes/Agent-1", "content": "Please rebase."}`)
	if m.Body != "Please rebase." || m.From != "Agent-7" || m.To != "Agent-1" || m.Priority != Normal || !m.CreatedAt.Equal(mod) {
		t.Errorf("decoded as %+v", m)
	}
	if !strings.HasPrefix(m.ID, "drop_") {
		t.Errorf("id = %q, want a derived one", m.ID)
	}
	for field, original := range map[string]string{"id": "{{uuid}}", "to": "{{AgentName}}", "priority": "Agent-3",
		"created_at": "runtime/agent_comms/agent_mailboxes/Agent-1"} {
		fb := fallbackFor(m, field)
		if fb == nil || fb["original"] != original || fb["reason"] == "" {
			t.Errorf("fallback for %s = %v, want the original %q kept with a reason", field, fb, original)
		}
	}
	again := decode(t, "a.json", `{"id": "{{uuid}}", "sender": "Agent-7", "recipient": "{{AgentName}}",
		"priority": "Agent-3", "timestamp": "runtime/agent_comms/agent_mailboxes/Agent-1", "content": "Please rebase."}`)
	if again.ID != m.ID {
		t.Errorf("the same bytes got ids %q and %q", m.ID, again.ID)
	}
}

func TestOtherTypesFallBack(t *testing.T) {
	m := decode(t, "b.json", `{"from": 42, "to": ["Agent-2"], "priority": [1], "timestamp": true,
		"requires_ack": "maybe", "attempts": "two", "deliver_after": "soon", "body": "x"}`)
	if m.From != "42" || m.To != "Agent-1" || m.Priority != Normal || m.Attempts != 0 || m.DeliverAfter != nil || m.Body != "x" {
		t.Errorf("decoded as %+v", m)
	}
	for _, f := range []string{"to", "priority", "created_at", "requires_ack", "attempts", "deliver_after"} {
		if fallbackFor(m, f) == nil {
			t.Errorf("no fallback noted for %s: %v", f, m.Meta)
		}
	}
}

func TestByteOrderMarks(t *testing.T) {
	m := decode(t, "bom.json", "\ufeff{\"from\": \"Agent-2\", \"body\": \"hi\"}\r\n")
	if m.From != "Agent-2" || m.Body != "hi" {
		t.Errorf("UTF-8 BOM: %+v", m)
	}
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range "**From**: Agent-3\r\n\r\nhello" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	m2, err := Decode(utf16, Source{Name: "ps.md", ModTime: mod, Owner: "Agent-1"})
	if err != nil || m2.From != "Agent-3" || m2.Body != "hello" {
		t.Errorf("UTF-16 LE: %+v, %v", m2, err)
	}
}

func TestTextUnderKeysNotYetKnown(t *testing.T) {
	for _, tt := range []struct{ data, body, from, to, subject string }{
		{`{"sender_id": "Agent-2", "recipient_id": "Agent-1", "instructions": "Run the tests."}`, "Run the tests.", "Agent-2", "Agent-1", ""},
		{`{"origin_agent_id": "Agent-5", "dest_agent_id": "Agent-1", "intent": "sync", "description": "Sync the board with main."}`, "Sync the board with main.", "Agent-5", "Agent-1", ""},
		{`{"title": "Message from Agent-4 to Agent-1", "description": "Ship it."}`, "Ship it.", "Agent-4", "Agent-1", "Message from Agent-4 to Agent-1"},
		{`{"task_id": "T-1", "title": "Fix the parser"}`, "", "unknown", "Agent-1", "Fix the parser"},
		{`{"senderAgentId": "Agent-6", "weird_field": "Please look at the failing build on main.", "status": "new"}`, "Please look at the failing build on main.", "Agent-6", "Agent-1", ""},
	} {
		m := decode(t, "k.json", tt.data)
		if m.Body != tt.body || m.From != tt.from || m.To != tt.to || m.Subject != tt.subject {
			t.Errorf("%s decoded as from %q to %q subject %q body %q", tt.data, m.From, m.To, m.Subject, m.Body)
		}
	}
}

func TestMarkdownHeaderStyles(t *testing.T) {
	for name, data := range map[string]string{
		"bold-outside": "# Note\n\n**From**: Agent-2\n**To**: Agent-1\n**Priority**: HIGH\n\n---\n\nDo the thing.\n",
		"bold-inside":  "# Note\n\n**From:** Agent-2\n**To:** Agent-1\n**Priority:** high\n\nDo the thing.\n",
		"plain":        "From: Agent-2\nTo: Agent-1\nPriority: High\nSubject: Note\n\nDo the thing.\n",
		"lower-list":   "# Note\n- **from**: Agent-2\n- **to**: Agent-1\n- **PRIORITY**: high\n\nDo the thing.",
		"crlf":         "# Note\r\n**From**: Agent-2\r\n**To**: Agent-1\r\n**Priority**: high\r\n---\r\nDo the thing.\r\n",
		"bracketed":    "[A2A] AGENT-2 → Agent-1: Note\n**Priority**: high\n\nDo the thing.\n",
		"framed":       "# Note\n**From**: Agent-2\n**To**: Agent-1\n**Priority**: high\n---\n\nDo the thing.\n\n---\n*Message delivered via Unified Messaging Service*\n*WE. ARE. SWARM.*\n",
		"banner":       "[HEADER] Note\nFrom: Agent-2\nTo: Agent-1\nPriority: high\nMessage ID: m-1\nTimestamp: 2025-12-01T10:00:00\n\nDo the thing.\n",
		"emoji-banner": "🔄 **Note**\nFrom: Agent-2\nAssigned to: Agent-1\n\nDo the thing.\n\nPriority: high",
	} {
		t.Run(name, func(t *testing.T) {
			m := decode(t, name+".md", data)
			if !strings.EqualFold(m.From, "Agent-2") || m.To != "Agent-1" || m.Priority != High || m.Body != "Do the thing." {
				t.Errorf("decoded as from %q to %q priority %q body %q", m.From, m.To, m.Priority, m.Body)
			}
			if want := map[string]string{"banner": "[HEADER] Note", "emoji-banner": "🔄 Note"}[name]; want != "" && m.Subject != want || want == "" && m.Subject != "Note" {
				t.Errorf("subject = %q", m.Subject)
			}
		})
	}
}

func TestTextWithoutHeaders(t *testing.T) {
	m := decode(t, "note.txt", "just some notes\n")
	if m.Body != "just some notes" || m.From != "unknown" || m.To != "Agent-1" {
		t.Errorf("decoded as %+v", m)
	}
	m = decode(t, "t.md", "# Message from Agent-3 to Agent-1\n\nThe build is green.\n")
	if m.From != "Agent-3" || m.To != "Agent-1" || m.Body != "The build is green." {
		t.Errorf("title-only headers decoded as %+v", m)
	}
}

func TestRefusals(t *testing.T) {
	for name, data := range map[string]string{
		"empty.json":  "",
		"blank.md":    " \n\t",
		"trunc.json":  `{"from": "Agent-2", "body": "hel`,
		"binary.json": "\x00\xff\xfe\x01",
		"array.json":  `[1, 2]`,
		"nobody.json": `{"from": "a", "priority": "high"}`,
		"null.json":   `null`,
		"tail.json":   `{"body": "x"} {"body": "y"}`,
	} {
		if m, err := Decode([]byte(data), Source{Name: name, Owner: "Agent-1"}); err == nil {
			t.Errorf("Decode(%s) = %+v, want an error", name, m)
		}
	}
}

func TestSamplesDecode(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/dreamos-samples/*")
	decoded := 0
	for _, f := range files {
		if !strings.Contains(f, "inbox") && !strings.Contains(f, "mailboxes__Agent-1__agent8") && !strings.Contains(f, ".msg") && !strings.Contains(f, "template") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(data, Source{Name: filepath.Base(f), ModTime: mod, Owner: "Agent-1"})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if m.Body == "" || m.ID == "" {
			t.Errorf("%s: decoded as %+v", filepath.Base(f), m)
		}
		decoded++
	}
	if decoded < 8 {
		t.Errorf("decoded %d samples, want at least 8", decoded)
	}
}

func TestFramingLeftOutOfSampleBody(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/dreamos-samples/victor-dreamos__agent_workspaces__Agent-1__inbox__INBOX_MESSAGE_20251206_063526_041170_4a9687d0.md")
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, "INBOX_MESSAGE.md", string(data))
	if strings.Contains(m.Body, "Message created via inbox utility") || !strings.Contains(m.Body, "How to Respond") {
		t.Errorf("body kept the footer or lost the instructions:\n%s", m.Body)
	}
}

// Writers put roles where names belong; the agent a role names is the
// recipient or sender, and the role is kept as a fallback.
func TestRoleTextNamesTheAgent(t *testing.T) {
	for _, c := range []struct{ data, from, to string }{
		{`{"from": "Captain Agent-4", "to": "Agent-2 (Architecture & Design Specialist)", "content": "x"}`, "Agent-4", "Agent-2"},
		{`{"from": "AGENT-5", "to": "agent_1", "content": "x"}`, "AGENT-5", "agent_1"},
		{`{"from": "THEA", "to": "Agent 3", "content": "x"}`, "THEA", "Agent-3"},
		{`{"from": "Agent-1 and Agent-2", "to": "Agent-3", "content": "x"}`, "Agent-1 and Agent-2", "Agent-3"},
		{"[A2A] AGENT-5 → Agent-1\n\nRebase.\n", "AGENT-5", "Agent-1"},
		{"**From:** Captain Agent-4\n**To:** Agent-1 (Integration)\n\nShip it.\n", "Agent-4", "Agent-1"},
	} {
		name := "a.json"
		if !strings.HasPrefix(c.data, "{") {
			name = "a.md"
		}
		m := decode(t, name, c.data)
		if m.From != c.from || m.To != c.to {
			t.Errorf("%s: from %q to %q, want from %q to %q", c.data, m.From, m.To, c.from, c.to)
		}
	}
	m := decode(t, "a.json", `{"from": "Captain Agent-4", "to": "Agent-1", "content": "x"}`)
	if f := fallbackFor(m, "from"); f == nil || f["original"] != "Captain Agent-4" {
		t.Errorf("the role text is not kept: %v", m.Meta)
	}
}
