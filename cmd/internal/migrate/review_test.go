package migrate

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/mailbox"
)

// A message whose recipient names several agents, or none, is not guessed
// and not lost: it goes to the human's mailbox as a review item quoting
// the original and saying why, counted apart in the report; a sender in
// upper case on a bracketed header is the configured agent; a priority
// that could not be read is noted. A second run delivers none again.
func TestUnclearRecipientsGoToTheHuman(t *testing.T) {
	tree := buildTree(t)
	root := t.TempDir()
	cfg := fiveAgents(t, root)
	p := run(t, tree, root, cfg)

	const shared = "dadudekc-swarm/runtime/agent_comms/inbox/"
	for _, c := range []struct{ rel, why, note string }{
		{shared + "msg_20250601_170000_pair.md", `addressed to "Agent-1 and Agent-2", which names 2 agents (Agent-1, Agent-2)`, ""},
		{shared + "msg_20250601_171500_team.md", `addressed to "the documentation team", which names no agent`, `priority P9 not read, taken as normal`},
		{shared + "msg_20250601_173000_nobody.md", "neither the message nor where it sat says whom it is for", ""},
	} {
		ms := messagesOf(t, p, c.rel)
		if len(ms) != 1 || ms[0].As != "review" || ms[0].To != "human" || !strings.HasPrefix(ms[0].Reason, c.why) || ms[0].Note != c.note {
			t.Errorf("%s: %+v, want one review for human (%s) noting %q", c.rel, ms, c.why, c.note)
		}
	}
	if p.Messages.Review != 3 {
		t.Errorf("report counts %d for review, want 3", p.Messages.Review)
	}
	// The misrouted message of the samples ("Agent" from Discord text) lay
	// in an archive: kept in the human's archive, not as work.
	ms := messagesOf(t, p, "victor-dreamos/agent_workspaces/archive/invalid_workspaces/Agent_INBOX_MESSAGE_20251206_081844_899125_1fe934c2.md")
	if len(ms) != 1 || ms[0].As != "history" || ms[0].To != "human" {
		t.Errorf("the misrouted archived message: %+v, want history in human's archive", ms)
	}

	human, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	pending, err := human.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]mailbox.Message{}
	for _, e := range pending {
		bodies[e.Message.Meta["migrated_from"].(string)] = e.Message
	}
	if len(pending) != 3 {
		t.Fatalf("human has %d pending, want the 3 review items", len(pending))
	}
	pair := bodies[shared+"msg_20250601_170000_pair.md"]
	if pair.Priority != mailbox.Urgent {
		t.Errorf("the review item has priority %q, want the original's **Urgency:** critical, urgent", pair.Priority)
	}
	for _, want := range []string{"One of you take the release checklist today.", "which names 2 agents", "Agent-4"} {
		if !strings.Contains(pair.Body, want) {
			t.Errorf("the review item does not quote %q:\n%s", want, pair.Body)
		}
	}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		mb, _ := mailbox.Open(root, a)
		entries, _ := mb.List(mailbox.StatePending)
		for _, e := range entries {
			if strings.Contains(e.Message.Body, "release checklist") {
				t.Errorf("%s was given the message for two agents", a)
			}
		}
	}

	a2a := messagesOf(t, p, "dadudekc-swarm/agent_workspaces/Agent-3/inbox/A2A_20250601_140000.md")
	if len(a2a) != 1 || a2a[0].To != "Agent-1" || a2a[0].As != "pending" || a2a[0].msg.From != "Agent-5" {
		t.Errorf("[A2A] AGENT-5 → Agent-1: %+v from %q, want pending for Agent-1 from Agent-5", a2a, a2a[0].msg.From)
	}

	again := run(t, tree, root, cfg)
	if again.Messages.Review != 0 || again.Messages.Pending != 0 || again.Messages.Before != p.Messages.Pending+p.Messages.Review+p.Messages.History {
		t.Errorf("the second run: %+v, want everything imported before (first: %+v)", again.Messages, p.Messages)
	}
	if after, _ := human.List(mailbox.StatePending); len(after) != 3 {
		t.Errorf("human has %d pending after a second run, want 3", len(after))
	}
}

// Every priority the samples of every generation wrote (priority words in
// any case, priority_score) is read: the report notes as unread only the
// priorities the fixture tree garbles on purpose ("P9", and "Agent-7"
// where a writer put its name), never one of a real sample.
func TestEveryPriorityOfTheSamplesIsRead(t *testing.T) {
	tree := buildTree(t)
	root := t.TempDir()
	p := plan(t, tree, root, fiveAgents(t, root))
	var notes []string
	for _, f := range p.Files {
		for _, m := range f.Messages {
			if m.Note != "" {
				notes = append(notes, f.Path+m.At+": "+m.Note)
			}
		}
	}
	want := []string{
		"dadudekc-swarm/runtime/agent_comms/agent_mailboxes/Agent-2/20250601T101500_Agent-5.json: priority Agent-7 not read, taken as normal",
		"dadudekc-swarm/runtime/agent_comms/inbox/msg_20250601_171500_team.md: priority P9 not read, taken as normal",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
}
