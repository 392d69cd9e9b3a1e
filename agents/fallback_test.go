package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// A message read with fallbacks says so in the devlog, field by field.
func TestDevlogNotesFallbacks(t *testing.T) {
	msg, err := mailbox.Decode([]byte(`{"sender": "Agent-1", "priority": "Agent-7", "content": "x"}`), mailbox.Source{Name: "m.json", Owner: "Agent-2"})
	if err != nil {
		t.Fatal(err)
	}
	e := devlogEntry("Agent-2", msg, time.Now(), "done", "ok", "")
	if len(e.Actions) != 1 || !strings.Contains(e.Actions[0], `read with a fallback: priority: unknown priority "Agent-7"`) {
		t.Errorf("actions = %q", e.Actions)
	}
}
