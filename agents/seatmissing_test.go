package agents

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// closedApp is a cdp seat whose app is closed until opened: the real cdp
// driver, pointed at a DevTools port nothing listens on, then the app's
// answer.
type closedApp struct {
	cdp    cursor.Driver
	opened atomic.Bool
	turns  atomic.Int32
}

func (a *closedApp) Run(ctx context.Context, t cursor.Turn) (string, error) {
	a.turns.Add(1)
	if !a.opened.Load() {
		return a.cdp.Run(ctx, t)
	}
	return "Done.\n", nil
}

// deadPort is a loopback port nothing listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A seat whose app is closed (nothing at its DevTools port) sent nothing:
// the message goes back to the inbox without spending an attempt, the seat
// waits and looks again (30 s, then 1 minute apart), the person is told
// once that the window is missing and once that it is back, and the
// message is worked when the app is open again. Nothing is dead-lettered,
// however many looks fail (more than run.max_attempts).
func TestASeatWhoseAppIsClosedWaitsForIt(t *testing.T) {
	root := newRuntime(t, demoAgents)
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	cdp, err := cursor.NewCDP(cursor.CDPSettings{Endpoint: "http://" + deadPort(t), Target: "^Cursor$",
		Composer: "textarea", Reply: ".reply", Copy: "button.copy", Busy: ".busy"}, cursor.Timings{}, cursor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := &closedApp{cdp: cdp}
	clock := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	s := testSettings(root, "Agent-1", demoAgents, app)
	s.People, s.Human, s.Clock, s.Log = []string{"human"}, "human", clock, logOnFailure(t)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "work", CreatedAt: clock.Now()})
	t0 := clock.Now()
	startRunner(t, s)

	probe := t0
	for i, wait := range []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute} {
		probe = probe.Add(wait)
		if i == 4 {
			app.opened.Store(true) // the person starts the app again
		}
		advanceTo(clock, probe, s.Heartbeat)
		poll.Until(t, "the look due at "+probe.Format(time.TimeOnly), func() bool {
			c := counts(t, root, "Agent-1")
			if i == 4 {
				return c.Done == 1
			}
			return int(app.turns.Load()) == i+1 && c.Pending == 1 && c.Processing == 0 && statusOf(t, root, "Agent-1").State == "seat-missing"
		})
		if i < 4 {
			mb, _ := mailbox.Open(root, "Agent-1")
			msgs, _ := mb.List(mailbox.StatePending)
			if len(msgs) != 1 || msgs[0].Message.Attempts != 0 {
				t.Fatalf("after look %d the inbox holds %+v, want the message with no attempt spent", i+1, msgs)
			}
		}
	}
	if c := counts(t, root, "Agent-1"); c.Done != 1 || c.Dead != 0 {
		t.Errorf("counts = %+v, want the message done and nothing dead", c)
	}
	notices := strings.Join(inboxSubjects(t, root, "human"), "\n")
	if strings.Count(notices, "its window is not there") != 1 || strings.Count(notices, "its window is back") != 1 {
		t.Errorf("the person got %q, want one notice that the window is missing and one that it is back", notices)
	}
	var outcomes []string
	for _, e := range devlogOf(t, root, "Agent-1") {
		outcomes = append(outcomes, e.Outcome)
	}
	if got := strings.Join(outcomes, " "); !strings.HasPrefix(got, "seat-missing seat-back") || strings.Count(got, "seat-missing") != 1 {
		t.Errorf("devlog outcomes %q, want the missing window said once, then its return", got)
	}
}
