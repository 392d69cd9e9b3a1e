package agents

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/lore"
	"github.com/agentctl/agentctl/mailbox"
)

// TestLoreOnTaskDone: the day's lore is written when a runner sees a task
// become done, told by the narrating command.
func TestLoreOnTaskDone(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		return block(`{"board": [{"id": "DEMO-1", "status": "done"}]}`), nil
	}))
	s.Lore = LoreSettings{OnTaskDone: true, Narrate: []string{"/bin/sh", "-c", "echo 'Thus spake the narrator.'; cat"}, NarrateTimeout: 10 * time.Second}
	startRunner(t, s)
	path := lore.Path(root, time.Now().UTC().Format(time.DateOnly))
	stopAfterIdle(t, root, "Agent-1")
	if _, err := os.Stat(path); err == nil {
		t.Fatal("lore written before any task was done")
	}
	deliverTo(t, root, mailbox.Message{ID: "finish", From: "human", To: "Agent-1", Type: "task", TaskID: "DEMO-1", Body: "finish it"})
	poll.Until(t, "the lore", func() bool { _, err := os.Stat(path); return err == nil })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "Thus spake the narrator.\n") || !strings.Contains(string(data), "DEMO-1") {
		t.Errorf("lore:\n%s\nwant the narrator's telling of DEMO-1", data)
	}
}

// TestLoreEveryNMessages: with every_messages 2 the lore is written after
// the second message, and a failing narrator leaves the plain lore.
func TestLoreEveryNMessages(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "ok", nil }))
	s.Lore = LoreSettings{EveryMessages: 2, Narrate: []string{"/bin/sh", "-c", "echo broken >&2; exit 3"}}
	startRunner(t, s)
	path := lore.Path(root, time.Now().UTC().Format(time.DateOnly))
	deliverTo(t, root, mailbox.Message{ID: "one", From: "human", To: "Agent-1", Subject: "first", Body: "one"})
	poll.Until(t, "the first message", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if _, err := os.Stat(path); err == nil {
		t.Fatal("lore written after one message")
	}
	deliverTo(t, root, mailbox.Message{ID: "two", From: "human", To: "Agent-1", Subject: "second", Body: "two"})
	poll.Until(t, "the lore", func() bool { _, err := os.Stat(path); return err == nil })
	stopAfterIdle(t, root, "Agent-1")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if narrated, err := RefreshLore(context.Background(), root, demoAgents, time.Now(), LoreSettings{}); err != nil || narrated {
		t.Fatalf("plain refresh: %v, %v", narrated, err)
	}
	want, _ := os.ReadFile(path)
	if string(got) != string(want) || !strings.Contains(string(got), "«second»") {
		t.Errorf("the runner wrote\n%s\nwant the plain lore of both messages\n%s", got, want)
	}
}
