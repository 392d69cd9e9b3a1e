package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// longTurn is a driver whose turn lasts until its context ends; it tells
// started when one begins.
type longTurn struct{ started chan<- string }

func (d longTurn) Run(ctx context.Context, t cursor.Turn) (string, error) {
	d.started <- t.Prompt
	<-ctx.Done()
	return "", ctx.Err()
}

// A runner stopped from outside (Ctrl+C, 'agentctl down', a service
// restart) while a long turn runs leaves its message to the next runner at
// no cost: four stops in a row dead-letter nothing. Each used to count as
// an attempt, so the third dead-lettered the message.
func TestStoppingARunnerCostsNoAttempt(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "long", From: "Agent-2", To: "Agent-1", Body: "take your time"})
	started := make(chan string, 1)
	mb, _ := mailbox.Open(root, "Agent-1")
	for i := range 4 {
		s := testSettings(root, "Agent-1", demoAgents, longTurn{started})
		s.ShutdownGrace = 10 * time.Millisecond
		stop := startRunner(t, s)
		<-started
		stop()
		p, ok := readProgress(mb, "long")
		if c := counts(t, root, "Agent-1"); c.Processing != 1 || c.Dead != 0 || !ok || p.Attempt != 1 {
			t.Fatalf("after stop %d Agent-1 holds %+v, the claim at attempt %d; want it in flight, first attempt", i+1, c, p.Attempt)
		}
	}
}

// A message whose runners kept dying while working it is dead-lettered as
// every dead letter is: its sender is told and the devlog says so. The
// mailbox used to dead-letter it on its own, and nobody heard.
func TestMessageThatKeepsKillingItsRunnerIsToldOf(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "poison", From: "Agent-2", To: "Agent-1", Body: "crash"})
	mb, _ := mailbox.Open(root, "Agent-1")
	for range 3 {
		c, err := mb.Consume(mailbox.Options{Known: demoAgents, MaxAttempts: 3}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Claim(time.Now()); err != nil {
			t.Fatal(err)
		}
		c.Close() // dies with it in flight, saying nothing
	}
	stop := startRunner(t, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "worked", nil })))
	poll.Until(t, "the dead letter", func() bool { return counts(t, root, "Agent-1").Dead == 1 })
	stop()
	var told bool
	for _, m := range pendingOf(t, root, "Agent-2") {
		told = told || strings.Contains(m.Body, "its consumer stopped 3 times while processing it")
	}
	if !told {
		t.Error("the sender was not told of the dead letter")
	}
	var logged bool
	for _, e := range devlogOf(t, root, "Agent-1") {
		logged = logged || e.MessageID == "poison" && e.Outcome == "deadletter"
	}
	if !logged {
		t.Errorf("the devlog does not say so: %+v", devlogOf(t, root, "Agent-1"))
	}
}

// A turn that follows a quick one within a second is shown as the current
// one a second later, not at the next beat (run.heartbeat, 30s): its
// write, held back so that a stream of quick messages does not rewrite
// status.json for each, is the turn's first beat.
func TestHeartbeatShowsTheNextTurnWithinASecond(t *testing.T) {
	root := newRuntime(t, demoAgents)
	mb, _ := mailbox.Open(root, "Agent-1")
	clk := clocktest.New(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	h := newHeartbeat(mb, clk)
	if err := h.set("working", "ping", "are you there"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(200 * time.Millisecond)
	if err := h.set("working", "slow", "a slow job"); err != nil {
		t.Fatal(err)
	}
	stop := h.beatDuring(30 * time.Second)
	defer stop()
	clk.BlockUntil(1)
	clk.Advance(busyRewriteGap)
	poll.Until(t, "status.json to name the slow job", func() bool {
		st, err := mb.ReadStatus()
		return err == nil && st.Current == "slow"
	})
}

// A runner that dies while its message's turn is with another machine's
// seat (the hub's machine crashing, again and again) costs the message no
// attempt: it only waited. Once the reply is in, a crash counts again.
func TestCrashesWhileTheTurnIsAwayCostNoAttempt(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "remote", From: "Agent-2", To: "Agent-1", Body: "on another machine"})
	mb, _ := mailbox.Open(root, "Agent-1")
	opts := mailbox.Options{Known: demoAgents, MaxAttempts: 3, Interrupted: awayWhenStopped}
	for range 4 {
		c, err := mb.Consume(opts, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		cl, err := c.Claim(time.Now())
		if err != nil || cl == nil || cl.Exhausted != "" {
			t.Fatalf("claim: %+v, %v", cl, err)
		}
		if err := c.Record(cl, stageHanded, time.Now()); err != nil {
			t.Fatal(err)
		}
		c.Close() // the hub dies while the seat has the turn
	}
	stop := startRunner(t, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "worked", nil })))
	poll.Until(t, "the message to be settled", func() bool {
		c := counts(t, root, "Agent-1")
		return c.Done+c.Dead == 1
	})
	stop()
	if c := counts(t, root, "Agent-1"); c.Done != 1 {
		t.Fatalf("Agent-1 holds %+v; want the message done", c)
	}
	if away := awayWhenStopped(mailbox.Progress{Stages: map[string]time.Time{stageHanded: time.Now(), stageReply: time.Now()}}); away {
		t.Error("a crash after the reply came in is excused too")
	}
	handedOften := mailbox.Progress{Stages: map[string]time.Time{stageHanded: time.Now()}, Version: turnVersion,
		Data: json.RawMessage(fmt.Sprintf(`{"handed": %d}`, maxHandedCrashes+1))}
	if awayWhenStopped(handedOften) {
		t.Error("crashes past maxHandedCrashes are excused too: a message that brings the hub down would do so for ever")
	}
}
