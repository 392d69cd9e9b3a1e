package agents

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// pressingDriver is a chat driver's turn as the runner sees it: the
// prompt is put in, the send key pressed, and the turn ends with
// outcome(attempt), the attempt counted from 1.
type pressingDriver struct {
	mu      sync.Mutex
	turns   []cursor.Turn
	outcome func(attempt int) error
}

func (d *pressingDriver) run(t cursor.Turn) (string, error) {
	d.mu.Lock()
	d.turns = append(d.turns, t)
	n := len(d.turns)
	d.mu.Unlock()
	if !t.Resume {
		for _, s := range []cursor.Stage{cursor.StageInjected, cursor.StagePressed} {
			if err := t.OnStage(s); err != nil {
				return "", err
			}
		}
	}
	if err := d.outcome(n); err != nil {
		return "", err
	}
	if err := t.OnStage(cursor.StageSubmitted); err != nil {
		return "", err
	}
	return "Done; nothing to send.", nil
}

func (d *pressingDriver) taken() []cursor.Turn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]cursor.Turn(nil), d.turns...)
}

// A chat turn that fails once its send key was pressed, with nothing to
// show whether the chat took the prompt, is not sent again (the agent may
// be at work on it): the message is dead-lettered saying so. One whose
// driver saw the prompt still in the chat's input is known not sent, and
// is retried as any failed turn.
func TestATurnPressedButUnprovenIsNotSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failure error
		// settled is the message's end: dead-lettered with a reason
		// holding why, or done after turns.
		dead  string
		turns int
	}{
		{"unknown", fmt.Errorf("%w: nothing changed", cursor.ErrSubmitUnknown), "the prompt may have been submitted (its send key was pressed)", 1},
		// Its reply lost with no proof of the submission: no more is said
		// than that the key went.
		{"reply lost", fmt.Errorf("%w: the page reloaded", cursor.ErrReplyLost), "the prompt may have been submitted (its send key was pressed) but its reply was lost", 1},
		{"still in the input", fmt.Errorf("%w: the input box still holds the prompt", cursor.ErrNotSubmitted), "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRuntime(t, demoAgents)
			d := &pressingDriver{outcome: func(attempt int) error {
				if attempt == 1 {
					return tc.failure
				}
				return nil
			}}
			s := testSettings(root, "Agent-1", demoAgents, hookDriver(d.run))
			s.Resend = false // as for any chat window
			s.Log = logOnFailure(t)
			deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "Say hello."})
			startRunner(t, s)
			poll.Until(t, "m1 to settle", func() bool {
				c := counts(t, root, "Agent-1")
				return c.Dead+c.Done == 1
			})
			mb, _ := mailbox.Open(root, "Agent-1")
			dead, err := mb.List(mailbox.StateDead)
			if err != nil {
				t.Fatal(err)
			}
			turns := d.taken()
			switch {
			case tc.dead != "" && (len(dead) != 1 || !strings.Contains(dead[0].Reason, tc.dead)):
				t.Fatalf("dead letters %+v; want m1, saying %q", dead, tc.dead)
			case tc.dead == "" && len(dead) != 0:
				t.Fatalf("m1 dead-lettered (%s); want it retried and done", dead[0].Reason)
			case len(turns) != tc.turns:
				t.Fatalf("%d turns, want %d", len(turns), tc.turns)
			}
			for i, turn := range turns {
				if turn.Resume {
					t.Errorf("turn %d resumed; want the prompt sent as new", i+1)
				}
			}
		})
	}
}

// A runner that died between pressing the send key and seeing the chat
// take the prompt left its claim recorded as pressed: the next runner
// resumes the turn, reading the reply back, and never pastes the prompt
// again.
func TestATurnPressedWhenItsRunnerDiedIsResumed(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "Say hello."})
	d := &pressingDriver{outcome: func(int) error { return nil }}
	s := testSettings(root, "Agent-1", demoAgents, hookDriver(d.run))
	s.Resend = false
	s.Log = logOnFailure(t)

	// What the runner that died left: m1 claimed, the key pressed.
	mb, _ := mailbox.Open(root, "Agent-1")
	now := time.Now()
	c, err := mb.Consume(s.Consumer, now)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(now)
	if err != nil || cl == nil {
		t.Fatalf("claim %v, %v", cl, err)
	}
	if err := c.Record(cl, stagePressed, now); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	startRunner(t, s)
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	turns := d.taken()
	if len(turns) != 1 || !turns[0].Resume || turns[0].ID != "m1/1" {
		t.Fatalf("turns %+v; want m1/1 resumed, the prompt not sent again", turns)
	}
}

// A prompt the agent's app or the hub cannot take as it is (VS Code's
// chat reading a leading / as a command, a prompt over the hub's message
// size) is dead-lettered at once with the reason: each retry would be
// refused the same way, only later.
func TestAPromptRefusedAsItIsIsNotTriedAgain(t *testing.T) {
	root := newRuntime(t, demoAgents)
	var turns atomic.Int32
	s := testSettings(root, "Agent-1", demoAgents, hookDriver(func(cursor.Turn) (string, error) {
		turns.Add(1)
		return "", fmt.Errorf("%w: the prompt starts with /; nothing was sent", cursor.ErrPromptRefused)
	}))
	s.Log = logOnFailure(t)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "/help"})
	startRunner(t, s)
	poll.Until(t, "m1 to be dead-lettered", func() bool { return counts(t, root, "Agent-1").Dead == 1 })
	mb, _ := mailbox.Open(root, "Agent-1")
	dead, err := mb.List(mailbox.StateDead)
	if err != nil || len(dead) != 1 || !strings.Contains(dead[0].Reason, "its prompt cannot be given to the agent") {
		t.Fatalf("dead letters %+v, %v; want m1, saying its prompt was refused", dead, err)
	}
	if n := turns.Load(); n != 1 {
		t.Errorf("%d turns, want the one refused", n)
	}
}
