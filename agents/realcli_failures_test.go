package agents

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// What the runner does when the model API refuses a turn, proven against
// the real tools of each exec preset, not their recorded output: each
// tool talks to fakemodel with its own retries turned off
// (agentcli.NoRetries), so that it gives up at the first refusal as it
// does after its last retry, and the runner's clock is the test's.

// execSeats are the exec presets' seats of demoSeats.
func execSeats() []demoSeat {
	var out []demoSeat
	for _, s := range demoSeats {
		if s.driver == config.DriverExec {
			out = append(out, s)
		}
	}
	return out
}

// failPrompt is the first line of the message the tests send, by which
// they tell its turns from the tools' other requests.
const failPrompt = "Please note the word kumquat."

// realFailSetup makes a runtime with a person to tell, and a runner for
// Agent-1 on a clock of its own, seated in seat's real tool without its
// retries; m1 waits in Agent-1's inbox, its body failPrompt and then
// directive, a line of its own.
func realFailSetup(t *testing.T, seat demoSeat, directive string) (root string, srv *fakemodel.Server, clock *clocktest.Clock, s Settings) {
	t.Helper()
	root = newRuntime(t, demoAgents)
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	srv = fakemodel.Start(t)
	tool := agentcli.Get(t, seat.tool, srv.URL)
	if err := tool.NoRetries(); err != nil {
		t.Fatal(err)
	}
	clock = clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	s = testSettings(root, "Agent-1", demoAgents, seatDriver(t, root, "Agent-1", seat, tool))
	s.People, s.Human = []string{"human"}, "human"
	s.Clock = clock
	s.Consumer.Backoff = 5 * time.Second
	s.Log = logOnFailure(t)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Subject: "a word",
		Body: strings.TrimSpace(failPrompt + "\n" + directive), CreatedAt: clock.Now()})
	return root, srv, clock, s
}

// tries are the model requests of m1's turns, in order.
func tries(srv *fakemodel.Server) []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range srv.Turns() {
		if r.Count(failPrompt) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// awaitRefusal waits for m1's first turn, refused with status, to be
// back in the inbox, and the seat to show it waits in state.
func awaitRefusal(t *testing.T, root string, srv *fakemodel.Server, status int, state string) {
	t.Helper()
	poll.Until(t, "the refused turn, and the seat "+state, func() bool {
		c := counts(t, root, "Agent-1")
		return len(tries(srv)) == 1 && c.Pending == 1 && c.Processing == 0 && statusOf(t, root, "Agent-1").State == state
	})
	if got := tries(srv)[0].Status; got != status {
		t.Fatalf("the first try was answered %d, want %d", got, status)
	}
}

// A 429 whose server names its wait (7 s, in the Retry-After header and
// in the body where each provider puts it) holds the message as long as
// the tool's output says: Gemini CLI prints "Suggested retry after 7s.",
// from Google's RetryInfo; Claude Code and Codex print only that the
// request was rate limited, so the seat waits rateLimitUnnamed. The
// message is then worked, no attempt spent, and no one is told.
func TestRealToolsRateLimitWaitsWhatTheToolSays(t *testing.T) {
	waits := map[string]time.Duration{agentcli.Claude: rateLimitUnnamed, agentcli.Codex: rateLimitUnnamed, agentcli.Gemini: 7 * time.Second}
	for _, seat := range execSeats() {
		t.Run(seat.tool, func(t *testing.T) {
			t.Parallel()
			root, srv, clock, s := realFailSetup(t, seat, "fakemodel: fail429 1 7")
			t0 := clock.Now()
			startRunner(t, s)
			awaitRefusal(t, root, srv, 429, "rate-limited")
			expectTry(t, root, clock, s, t0.Add(waits[seat.tool]), 2, true, func() int { return len(tries(srv)) })
			checkWorkedOnce(t, root, srv)
			if n := counts(t, root, "human").Pending; n != 0 {
				t.Errorf("the person got %d notices about a rate limit, want none", n)
			}
		})
	}
}

// An outage of several minutes (Claude Code meets 529, Codex and Gemini
// CLI 503) parks the seat: it tries again 30 s, 1, 2 and 4 minutes
// apart, more tries than run.max_attempts, dead-letters nothing, tells
// the person once that it began and once that it passed, and works the
// message after.
func TestRealToolsRideOutAnOutage(t *testing.T) {
	for _, seat := range execSeats() {
		t.Run(seat.tool, func(t *testing.T) {
			t.Parallel()
			root, srv, clock, s := realFailSetup(t, seat, "")
			srv.SetDown(true)
			t0 := clock.Now()
			startRunner(t, s)
			status := 503
			if seat.tool == agentcli.Claude {
				status = 529
			}
			awaitRefusal(t, root, srv, status, "api-outage")
			probe := t0
			waits := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}
			if len(waits) < s.Consumer.MaxAttempts {
				t.Fatalf("%d tries prove nothing of max attempts %d", len(waits), s.Consumer.MaxAttempts)
			}
			for i, wait := range waits {
				if i == len(waits)-1 {
					srv.SetDown(false) // back before the last try
				}
				probe = probe.Add(wait)
				expectTry(t, root, clock, s, probe, i+2, i == len(waits)-1, func() int { return len(tries(srv)) })
			}
			checkWorkedOnce(t, root, srv)
			notices := inboxSubjects(t, root, "human")
			if len(notices) != 2 || !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "down or overloaded") }) ||
				!slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "works again") }) {
				t.Errorf("the person got %q, want one notice that the outage began and one that it passed", notices)
			}
			var outcomes []string
			for _, e := range devlogOf(t, root, "Agent-1") {
				outcomes = append(outcomes, e.Outcome)
			}
			if got := strings.Join(outcomes, " "); !strings.HasPrefix(got, "api-outage api-resumed") || strings.Count(got, "api-outage") != 1 {
				t.Errorf("devlog outcomes %q, want the outage said once, then its end", got)
			}
		})
	}
}

// checkWorkedOnce checks that m1 was done, nothing dead, and that the
// turn that worked carried its prompt once: a refused try left nothing
// in the session the next one continued.
func checkWorkedOnce(t *testing.T, root string, srv *fakemodel.Server) {
	t.Helper()
	if c := counts(t, root, "Agent-1"); c.Done != 1 || c.Dead != 0 {
		t.Errorf("counts = %+v, want the message done and nothing dead", c)
	}
	tr := tries(srv)
	last := tr[len(tr)-1]
	if last.Status != 200 {
		t.Errorf("the last try was answered %d, want 200", last.Status)
	}
	if n := last.Count(failPrompt); n != 1 {
		t.Errorf("the try that worked carries the prompt %d times, want once", n)
	}
}
