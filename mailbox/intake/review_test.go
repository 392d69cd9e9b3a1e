package intake

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// What a shared place holds for several agents or none goes to the person
// as a review item, quoting it, exactly once though two runners watch the
// place and restart, and though one crashed before it remembered what it
// had done; the place is never changed, and what names one agent that is
// not configured is still dead-lettered.
func TestUnclearRecipientGoesToReview(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2", "human")
	shared := t.TempDir()
	files := map[string]string{
		"both.json":          `{"from": "Agent-3", "to": "Agent-1 and Agent-2", "body": "One of you take the release checklist."}`,
		"role.md":            "**From**: Agent-2\n**To**: the QA lead\n\nCheck the release notes.\n",
		"nobody.json":        `{"from": "Agent-2", "body": "Who reads this?"}`,
		"seven.json":         `{"from": "Agent-2", "to": "Agent-7", "body": "For an agent not configured."}`,
		"mine.json":          `{"from": "Agent-1", "to": "Agent-2", "body": "For two."}`,
		"human.json":         `{"from": "Agent-1", "to": "human", "body": "For the person, not an agent."}`,
		"Agent-2/inbox.json": `[{"sender": "Agent-1", "recipient": "the whole QA team", "content": "Rerun the suite."}, {"sender": "Agent-1", "content": "Two's by folder."}]`,
	}
	for name, text := range files {
		p := filepath.Join(shared, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, []byte(text))
	}
	before := snapshot(t, shared)
	places := []string{shared, filepath.Join(shared, "*", "inbox.json")}
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Shared: places, Human: "human", People: []string{"human"}}
	now := time.Now().Add(time.Minute)
	mb1, mb2 := openMailbox(t, root, "Agent-1"), openMailbox(t, root, "Agent-2")
	var got1, got2 []string
	for round := range 3 {
		// Agent-1's runner (listed first) is charged with what is no
		// agent's. Round 2: it crashed before it remembered what it did.
		o1, o2 := opts, opts
		o1.SharedDeadletters = true
		if round == 2 {
			if err := os.RemoveAll(filepath.Join(mb1.Dir, WatchedDir)); err != nil {
				t.Fatal(err)
			}
		}
		c2 := consume(t, mb2, o2, now)
		c1 := consume(t, mb1, o1, now)
		for _, c := range []consumer{c1, c2, c1} {
			if err := c.Scan(now); err != nil {
				t.Fatal(err)
			}
		}
		got1 = append(got1, claimBodies(t, c1, now)...)
		got2 = append(got2, claimBodies(t, c2, now)...)
		c1.Close()
		c2.Close()
		now = now.Add(time.Minute)
	}
	if len(got1) != 0 {
		t.Errorf("Agent-1 got %q", got1)
	}
	slices.Sort(got2)
	if want := []string{"For two.", "Two's by folder."}; !slices.Equal(got2, want) {
		t.Errorf("Agent-2 got %q, want %q", got2, want)
	}

	human := openMailbox(t, root, "human")
	var reviews []mailbox.Message
	for _, name := range names(t, filepath.Join(human.Dir, mailbox.InboxDir)) {
		data, err := os.ReadFile(filepath.Join(human.Dir, mailbox.InboxDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m mailbox.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reviews = append(reviews, m)
	}
	want := map[string]string{
		"One of you take the release checklist.": `which names 2 agents (Agent-1, Agent-2)`,
		"Check the release notes.":               `addressed to "the QA lead", which names no agent`,
		"Who reads this?":                        "neither the message nor where it sat says whom it is for",
		"Rerun the suite.":                       `addressed to "the whole QA team", which names no agent`,
	}
	for _, r := range reviews {
		quoted := ""
		for text := range want {
			if strings.Contains(r.Body, text) {
				quoted = text
			}
		}
		switch {
		case quoted == "":
			t.Errorf("a review quotes none of the unclear messages: %s", r.Body)
		case r.Type != "review" || r.From != "agentctl" || !strings.Contains(r.Body, want[quoted]) || !strings.Contains(r.Body, shared):
			t.Errorf("the review of %q: type %q from %q, body:\n%s", quoted, r.Type, r.From, r.Body)
		}
		delete(want, quoted)
	}
	if len(reviews) != 4 || len(want) != 0 {
		t.Errorf("the person has %d reviews; never reviewed: %q", len(reviews), want)
	}
	// Not the person's to review: one agent that is not configured, and a
	// message to the person; the runner charged with what is no agent's
	// dead-letters them as before.
	var dead []string
	for _, mb := range []*mailbox.Mailbox{mb1, mb2} {
		for _, n := range names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)) {
			if !strings.HasSuffix(n, mailbox.ReasonSuffix) {
				dead = append(dead, mb.Agent+":"+n[strings.LastIndexByte(n, '-')+1:])
			}
		}
	}
	slices.Sort(dead)
	if want := []string{"Agent-1:human.json", "Agent-1:seven.json"}; !slices.Equal(dead, want) {
		t.Errorf("dead letters %q, want %q", dead, want)
	}
	if after := snapshot(t, shared); !maps.Equal(before, after) {
		t.Errorf("the shared place changed:\nbefore %v\nafter  %v", before, after)
	}
}

// The folder or file of the old per-agent layouts says whose a message
// that names no one is.
func TestAgentOfPlace(t *testing.T) {
	for _, c := range []struct{ path, folder, file string }{
		{"/s/agent_mailboxes/Agent-3/inbox.json", "Agent-3", ""},
		{"/s/agent_workspaces/Agent-3/inbox/m.md", "Agent-3", ""},
		{"/s/inboxes/Agent-3.txt", "", "Agent-3"},
		{"/s/inboxes/Agent-4_incoming.txt@120", "", "Agent-4"},
		{"/s/inboxes/agent_12.txt", "", "agent_12"},
		{"/s/inboxes/Agent-notes.txt", "", ""},
		{"/s/runtime/agent_comms/inbox/msg_1_Agent-5_to_Agent-1.json", "", ""},
	} {
		if got := AgentFolder(c.path); got != c.folder {
			t.Errorf("AgentFolder(%s) = %q, want %q", c.path, got, c.folder)
		}
		if got := AgentFile(c.path); got != c.file {
			t.Errorf("AgentFile(%s) = %q, want %q", c.path, got, c.file)
		}
	}
}

// Taken, an inbox.json in a shared glob of agents' folders is emptied only
// by the runner of the agent whose folder holds it; the others leave it.
func TestSharedInboxJSONTakenByItsAgent(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	shared := t.TempDir()
	box := filepath.Join(shared, "Agent-2", "inbox.json")
	if err := os.MkdirAll(filepath.Dir(box), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, box, []byte(`[{"sender": "Agent-1", "content": "first"}, {"sender": "Agent-1", "recipient": "Agent-2", "content": "second"}]`))
	glob := filepath.Join(shared, "*", "inbox.json")
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Shared: []string{glob}, Take: []string{glob}}
	now := time.Now().Add(time.Minute)
	o1 := opts
	o1.SharedDeadletters = true
	c1 := consume(t, openMailbox(t, root, "Agent-1"), o1, now)
	if got := claimBodies(t, c1, now); len(got) != 0 {
		t.Errorf("Agent-1 got %q", got)
	}
	if data, _ := os.ReadFile(box); !strings.Contains(string(data), "second") {
		t.Fatalf("Agent-1's runner emptied Agent-2's inbox.json: %s", data)
	}
	c2 := consume(t, openMailbox(t, root, "Agent-2"), opts, now)
	got := claimBodies(t, c2, now)
	slices.Sort(got)
	if !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("Agent-2 got %q", got)
	}
	if data, _ := os.ReadFile(box); strings.TrimSpace(string(data)) != "[]" {
		t.Errorf("Agent-2's inbox.json holds %s after its runner took it", data)
	}
}

// Taken, an inbox.json in a shared folder that names no agent is no one's
// to empty: each runner reads its agent's entries out of it, as if it
// were not taken, rather than every runner leaving it unread.
func TestSharedInboxJSONOfNoAgentIsReadByEach(t *testing.T) {
	root := newRuntime(t, "Agent-1", "Agent-2")
	box := filepath.Join(t.TempDir(), "comms", "inbox.json")
	if err := os.MkdirAll(filepath.Dir(box), 0o755); err != nil {
		t.Fatal(err)
	}
	content := `[{"sender": "Agent-1", "recipient": "Agent-2", "content": "for two"}, {"sender": "Agent-2", "recipient": "Agent-1", "content": "for one"}]`
	writeFile(t, box, []byte(content))
	opts := settings{Known: []string{"Agent-1", "Agent-2"}, Shared: []string{box}, Take: []string{box}}
	now := time.Now().Add(time.Minute)
	for agent, want := range map[string]string{"Agent-1": "for one", "Agent-2": "for two"} {
		o := opts
		o.SharedDeadletters = agent == "Agent-1"
		c := consume(t, openMailbox(t, root, agent), o, now)
		if got := claimBodies(t, c, now); !slices.Equal(got, []string{want}) {
			t.Errorf("%s got %q, want %q", agent, got, want)
		}
	}
	if data, _ := os.ReadFile(box); string(data) != content {
		t.Errorf("a runner changed the inbox.json no agent owns: %s", data)
	}
}
