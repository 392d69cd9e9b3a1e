package actions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// newRuntime is a runtime folder with the mailboxes of two agents and the
// default person, as agentctl init leaves it.
func newRuntime(t *testing.T) Runtime {
	t.Helper()
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1", "Agent-2"}))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	return Runtime{Root: root, Config: cfg}
}

func pending(t *testing.T, rt Runtime, agent string) []mailbox.Entry {
	t.Helper()
	mb, err := mailbox.Open(rt.Root, agent)
	if err != nil {
		t.Fatal(err)
	}
	es, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestSendToAllSkipsTheSender(t *testing.T) {
	rt := newRuntime(t)
	sent, err := rt.Send(Draft{To: "all", From: "Agent-1", Body: "standup", Priority: "high"})
	if err != nil || len(sent) != 1 || sent[0].To != "Agent-2" || sent[0].Priority != mailbox.High {
		t.Fatalf("sent %+v, %v; want one high message to Agent-2", sent, err)
	}
	if es := pending(t, rt, "Agent-2"); len(es) != 1 || es[0].Message.ID != sent[0].ID {
		t.Errorf("Agent-2's inbox holds %v", es)
	}
	if es := pending(t, rt, "Agent-1"); len(es) != 0 {
		t.Errorf("the sender got its own message: %v", es)
	}
}

// A request that is wrong as written is an *InputError, with the fix where
// it is known; a name nobody has is not the request's form but the
// runtime's, and says who is there.
func TestSendRefusals(t *testing.T) {
	rt := newRuntime(t)
	for _, d := range []Draft{{To: "Agent-2", Body: " \n"}, {To: "Agent-2", Body: "x", Priority: "asap"}, {To: "Agent-2", Body: "x", From: "no one"}} {
		var in *InputError
		if _, err := rt.Send(d); !errors.As(err, &in) {
			t.Errorf("%+v: err = %v, want an InputError", d, err)
		}
	}
	_, err := rt.Send(Draft{To: "Agent-3", Body: "x", Priority: "normal"})
	var h interface{ Hint() string }
	var in *InputError
	if err == nil || errors.As(err, &in) || !errors.As(err, &h) || !strings.Contains(h.Hint(), "Agent-1") {
		t.Errorf("err = %v, want an unknown name with the names as the hint", err)
	}
}

// claimed is a message to agent, claimed by a consumer as a runner would:
// in flight. The consumer is returned still holding the mailbox.
// The agents are read only when an owner is set, and a key that cannot be
// set is refused before any board is touched.
func TestSetTaskChecksBeforeItWrites(t *testing.T) {
	rt := newRuntime(t)
	store := &projectboard.Store{Root: rt.Root}
	if err := store.CreateBoard(context.Background(), "board.yaml", []byte("tasks:\n  - id: T-1\n    title: Parser\n    status: todo\n")); err != nil {
		t.Fatal(err)
	}
	read := 0
	b := Board{Store: store, Agents: func() ([]string, error) { read++; return rt.Config.AgentNames(), nil }}
	task, err := b.SetTask(context.Background(), "T-1", []string{"status=in_progress"})
	if err != nil || task.Status != "in_progress" || read != 0 {
		t.Fatalf("task %+v, %v, agents read %d times", task, err, read)
	}
	var in *InputError
	if _, err := b.SetTask(context.Background(), "T-1", []string{"owner=agent-2", "colour=red"}); !errors.As(err, &in) {
		t.Fatalf("err = %v, want an InputError", err)
	}
	if task, _ := store.Find("T-1"); task.Owner != "" {
		t.Errorf("a refused change touched the board: owner %q", task.Owner)
	}
	if task, err := b.SetTask(context.Background(), "T-1", []string{"owner=agent-2"}); err != nil || task.Owner != "Agent-2" || read != 2 {
		t.Errorf("task %+v, %v, agents read %d times", task, err, read)
	}
}

// A send given its ids delivers each once: asked again, it delivers
// nothing and says the messages went before.
func TestSendOnceWithChosenIDs(t *testing.T) {
	rt := newRuntime(t)
	d := Draft{To: "all", From: "human", Body: "release at 5", IDFor: func(to string) string { return "msg_release_" + strings.ToLower(to) }}
	first, err := rt.SendOnce(d)
	if err != nil || first.Before || len(first.Messages) != 2 || first.Messages[0].ID != "msg_release_agent-1" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	again, err := rt.SendOnce(d)
	if err != nil || !again.Before || len(again.Messages) != 2 || again.Messages[1].ID != first.Messages[1].ID {
		t.Fatalf("again: %+v, %v", again, err)
	}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		if es := pending(t, rt, a); len(es) != 1 {
			t.Errorf("%s holds %d messages, want 1", a, len(es))
		}
	}
}

// An agent answers only messages in its own mailbox; a person's name is
// refused with what people do instead.
func TestAnswerIsAnAgentsOwn(t *testing.T) {
	rt := newRuntime(t)
	if _, err := rt.Answer(context.Background(), "human", "m-1", "x"); err == nil || !strings.Contains(err.Error(), "human is a person, not an agent") {
		t.Errorf("Answer as human: %v", err)
	}
	if _, err := rt.Answer(context.Background(), "Agent-1", "m-1", " "); err == nil || err.Error() != "reply: no answer text" {
		t.Errorf("an empty answer: %v", err)
	}
	if _, err := rt.Answer(context.Background(), "Agent-1", "m-1", "x"); err == nil || err.Error() != "no message m-1 in Agent-1's mailbox" {
		t.Errorf("an unknown message: %v", err)
	}
}

func TestNoteGoesToTheAgentsDevlog(t *testing.T) {
	rt := newRuntime(t)
	rt.Clock = clocktest.New(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	n, err := rt.Note("agent-2", "", "paused")
	if err != nil || n.Agent != "Agent-2" || !strings.HasSuffix(n.Path, "Agent-2.md") {
		t.Fatalf("Note: %+v, %v", n, err)
	}
	for name, want := range map[string]string{"../x": "not a valid agent name", "human": "is a person", "Agent-1\x00": "not a valid agent name"} {
		if _, err := rt.Note(name, "", "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Note(%q): %v, want %q", name, err, want)
		}
	}
	var in *InputError
	if _, err := rt.Note("Agent-1", "", "  "); !errors.As(err, &in) {
		t.Errorf("an empty note: %v, want an input error", err)
	}
}

// A send to all checks every mailbox before it delivers to any: with one
// missing, nobody gets the message (sending again would otherwise give
// the first ones a second copy). And a send to all with nobody to send to
// says so rather than sending nothing in silence.
func TestSendToAllIsWholeOrNothing(t *testing.T) {
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1", "Agent-2", "Agent-3"}))
	if err != nil {
		t.Fatal(err)
	}
	rt := Runtime{Root: t.TempDir(), Config: cfg}
	for _, name := range []string{"Agent-1", "Agent-3", "human"} {
		if err := mailbox.Create(rt.Root, name); err != nil {
			t.Fatal(err)
		}
	}
	sent, err := rt.Send(Draft{To: "all", Body: "standup", Priority: "normal"})
	if err == nil || !strings.Contains(err.Error(), "nothing was sent") || len(sent) != 0 {
		t.Fatalf("sent %+v, %v; want nothing sent, and why", sent, err)
	}
	for _, a := range []string{"Agent-1", "Agent-3"} {
		if es := pending(t, rt, a); len(es) != 0 {
			t.Errorf("%s got %v", a, es)
		}
	}

	one, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1"}))
	if err != nil {
		t.Fatal(err)
	}
	rt.Config = one
	if sent, err := rt.Send(Draft{To: "all", From: "Agent-1", Body: "standup", Priority: "normal"}); err == nil || len(sent) != 0 {
		t.Errorf("a send to all from the only agent gave %+v, %v; want an error", sent, err)
	}
}
