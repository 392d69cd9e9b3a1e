package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// A runner stopped (Ctrl+C, SIGTERM) while it takes in a long inbox.json
// stops between two messages instead of finishing the file first; the
// next runner delivers the rest, and every entry is worked once.
func TestStopEndsTheStartUpIngest(t *testing.T) {
	const total = 300
	root := newRuntime(t, demoAgents)
	entries := make([]map[string]any, total)
	for i := range entries {
		entries[i] = map[string]any{"sender": "Agent-2", "recipient": "Agent-1", "content": fmt.Sprintf("entry %d", i)}
	}
	data, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(root, "agent_mailboxes", "Agent-1", mailbox.InboxJSON), data, 0o600); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{}) // the first runner's turns wait: only its ingest runs
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		<-hold
		return "done", nil
	}))
	stop := startRunner(t, s)
	inbox := filepath.Join(root, "agent_mailboxes", "Agent-1", "inbox")
	poll.Until(t, "the ingest to begin", func() bool { // cheap enough to look often
		names, _ := os.ReadDir(inbox)
		return len(names) >= 5
	})
	close(hold)
	if err := stop(); err != nil {
		t.Fatalf("the runner stopped with %v", err)
	}
	// Entries still in the spool count as pending; those delivered have
	// a file in inbox/.
	if names, _ := os.ReadDir(inbox); len(names) >= total {
		t.Fatalf("the runner delivered all %d entries before it stopped", total)
	}
	if c := counts(t, root, "Agent-1"); c.Pending+c.Processing+c.Done != total {
		t.Fatalf("after the stop: %+v, want all %d entries counted", c, total)
	}

	s = testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "done", nil }))
	startRunner(t, s)
	poll.Until(t, "every entry worked", func() bool { return counts(t, root, "Agent-1").Done == total })
	if c := counts(t, root, "Agent-1"); c.Pending+c.Processing+c.Dead != 0 {
		t.Errorf("once all were worked: %+v", c)
	}
}
