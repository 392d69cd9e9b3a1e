package agents

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

func TestJudgeAPIFailure(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rate := cursor.Failure{Kind: cursor.FailureRateLimited, Status: 429}
	outage := cursor.Failure{Kind: cursor.FailureOutage, Status: 529}
	parked := func(kind cursor.FailureKind, delay time.Duration) *seatPark {
		return &seatPark{kind: kind, since: now.Add(-time.Hour), until: now, delay: delay}
	}
	for _, tc := range []struct {
		name      string
		f         cursor.Failure
		prev      *seatPark
		wait      time.Duration
		tell      bool
		stop      bool
		sinceKept bool
	}{
		{"429 naming its wait", cursor.Failure{Kind: cursor.FailureRateLimited, RetryAfter: 30 * time.Second}, nil, 30 * time.Second, false, false, false},
		{"429 naming its wait, again", cursor.Failure{Kind: cursor.FailureRateLimited, RetryAfter: 30 * time.Second}, parked(cursor.FailureRateLimited, 30*time.Second), 30 * time.Second, false, false, true},
		{"quota reset named", cursor.Failure{Kind: cursor.FailureRateLimited, ResetAt: now.Add(2 * time.Hour)}, nil, 2 * time.Hour, false, false, false},
		{"quota reset already past", cursor.Failure{Kind: cursor.FailureRateLimited, ResetAt: now.Add(-time.Minute)}, nil, rateLimitUnnamed, false, false, false},
		{"429 naming nothing", rate, nil, rateLimitUnnamed, false, false, false},
		{"429 naming nothing, again", rate, parked(cursor.FailureRateLimited, rateLimitUnnamed), 2 * rateLimitUnnamed, false, false, true},
		{"outage begins", outage, nil, outageFirstProbe, true, false, false},
		{"outage after a rate limit", outage, parked(cursor.FailureRateLimited, time.Minute), outageFirstProbe, true, false, false},
		{"outage goes on", outage, parked(cursor.FailureOutage, 2*time.Minute), 4 * time.Minute, false, false, true},
		{"outage at its cap", outage, parked(cursor.FailureOutage, outageMaxProbe), outageMaxProbe, false, false, true},
		{"bad key", cursor.Failure{Kind: cursor.FailureAuth, Status: 401}, nil, 0, false, true, false},
	} {
		v := judgeAPIFailure(tc.f, tc.prev, now)
		if v.stop != tc.stop || v.tell != tc.tell {
			t.Errorf("%s: stop %v tell %v, want %v %v", tc.name, v.stop, v.tell, tc.stop, tc.tell)
		}
		if tc.stop {
			continue
		}
		if got := v.park.until.Sub(now); got != tc.wait || v.park.delay != tc.wait {
			t.Errorf("%s: waits %s (delay %s), want %s", tc.name, got, v.park.delay, tc.wait)
		}
		if kept := v.park.since.Equal(now.Add(-time.Hour)); kept != tc.sinceKept {
			t.Errorf("%s: since %s, kept = %v, want %v", tc.name, v.park.since, kept, tc.sinceKept)
		}
	}
}

// apiStandIn is an exec driver whose command fails the way a real agent
// tool does when its model API refuses (the recorded fixture's stdout and
// stderr, exit status 1) until dir/up exists, and then replies. Each run
// appends a line to dir/turns.
func apiStandIn(t *testing.T, dir, fixture string) cursor.Driver {
	t.Helper()
	base := filepath.Join(repoRoot(), "cursor", "testdata", "apierrors", fixture)
	if _, err := os.Stat(base + ".stdout"); err != nil {
		if _, err := os.Stat(base + ".stderr"); err != nil {
			t.Fatalf("no fixture %s", base)
		}
	}
	script := `cat >/dev/null; echo turn >> "$1/turns"
if [ -e "$1/up" ]; then echo done; exit 0; fi
cat "$2.stdout" 2>/dev/null; cat "$2.stderr" >&2 2>/dev/null; exit 1`
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/bin/sh", "-c", script, "sh", dir, base}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func turnsRun(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "turns"))
	return bytes.Count(b, []byte("\n"))
}

// apiSetup makes a runtime with a person to tell, and a runner for
// Agent-1 on a clock of its own, whose agent is apiStandIn.
func apiSetup(t *testing.T, fixture string) (root, dir string, clock *clocktest.Clock, s Settings) {
	root = newRuntime(t, demoAgents)
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	clock = clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	s = testSettings(root, "Agent-1", demoAgents, apiStandIn(t, dir, fixture))
	s.People, s.Human = []string{"human"}, "human"
	s.Clock = clock
	s.Consumer.Backoff = 5 * time.Second
	s.Log = logOnFailure(t)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "work", CreatedAt: clock.Now()})
	return root, dir, clock, s
}

// advanceTo moves the clock to at, a heartbeat at a time as time passes
// for a runner. Between steps it lets the runner go to sleep again; what
// a test proves it proves by conditions, not by these pauses.
func advanceTo(clock *clocktest.Clock, at time.Time, heartbeat time.Duration) {
	for clock.Now().Before(at) {
		select { // a sleep from before the advance says nothing
		case <-clock.Sleeping():
		default:
		}
		clock.Advance(min(heartbeat, at.Sub(clock.Now())))
		select {
		case <-clock.Sleeping():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// expectProbe checks that the refused message waits in the inbox until
// exactly probe, with no attempt counted, then moves the clock there and
// waits for the try: with works, for the message done; else for it
// refused again, and the seat shown waiting for the API.
func expectProbe(t *testing.T, root, dir string, clock *clocktest.Clock, s Settings, probe time.Time, turns int, works bool) {
	t.Helper()
	expectTry(t, root, clock, s, probe, turns, works, func() int { return turnsRun(dir) })
}

// expectTry is expectProbe for an agent whose turns run counts.
func expectTry(t *testing.T, root string, clock *clocktest.Clock, s Settings, probe time.Time, turns int, works bool, turnsRun func() int) {
	t.Helper()
	mb, _ := mailbox.Open(root, "Agent-1")
	msgs, err := mb.List(mailbox.StatePending)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("pending = %+v, %v; want the refused message", msgs, err)
	}
	m := msgs[0].Message
	if m.DeliverAfter == nil || !m.DeliverAfter.Equal(probe) || m.Attempts != 0 {
		t.Fatalf("the refused message waits until %v with %d attempts, want until %s with none", m.DeliverAfter, m.Attempts, probe.Format(time.TimeOnly))
	}
	advanceTo(clock, probe, s.Heartbeat)
	poll.Until(t, "the try due at "+probe.Format(time.TimeOnly), func() bool {
		c := counts(t, root, "Agent-1")
		if works {
			return turnsRun() == turns && c.Done == 1
		}
		return turnsRun() == turns && c.Pending == 1 && c.Processing == 0 && statusOf(t, root, "Agent-1").State == "api-outage"
	})
}

// A 429 whose output names its wait (Gemini CLI's "Suggested retry after
// 30s") holds the message exactly that long, without counting it as
// failed; then it is worked.
func TestRunnerWaitsOutARateLimit(t *testing.T) {
	root, dir, clock, s := apiSetup(t, "gemini-429")
	t0 := clock.Now()
	startRunner(t, s)
	poll.Until(t, "the refused turn", func() bool {
		return turnsRun(dir) == 1 && counts(t, root, "Agent-1").Pending == 1
	})
	if err := os.WriteFile(filepath.Join(dir, "up"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	expectProbe(t, root, dir, clock, s, t0.Add(30*time.Second), 2, true)
	if c := counts(t, root, "Agent-1"); c.Done != 1 || c.Dead != 0 {
		t.Errorf("counts = %+v, want the message done", c)
	}
	if n := counts(t, root, "human").Pending; n != 0 {
		t.Errorf("the person got %d notices about a rate limit, want none", n)
	}
}

// An outage of several minutes (Claude Code's "API Error: 529
// Overloaded") parks the seat: it tries again 30 s, 1, 2 and 4 minutes
// apart, dead-letters nothing though every try fails (more tries than
// run.max_attempts), tells the person once that it began and once that
// it passed, and works the message after.
func TestRunnerRidesOutAnOutage(t *testing.T) {
	root, dir, clock, s := apiSetup(t, "claude-529")
	t0 := clock.Now()
	startRunner(t, s)
	poll.Until(t, "the refused turn", func() bool {
		return turnsRun(dir) == 1 && counts(t, root, "Agent-1").Pending == 1
	})
	probe := t0
	for i, wait := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute} {
		if i == 3 {
			// The API is back before the fifth try.
			if err := os.WriteFile(filepath.Join(dir, "up"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		probe = probe.Add(wait)
		expectProbe(t, root, dir, clock, s, probe, i+2, i == 3)
	}
	if c := counts(t, root, "Agent-1"); c.Done != 1 || c.Dead != 0 {
		t.Errorf("counts = %+v, want the message done and nothing dead", c)
	}
	notices := inboxSubjects(t, root, "human")
	if len(notices) != 2 || !strings.Contains(notices[0]+notices[1], "down or overloaded") || !strings.Contains(notices[0]+notices[1], "works again") {
		t.Errorf("the person got %q, want one notice that the outage began and one that it passed", notices)
	}
	var outcomes []string
	for _, e := range devlogOf(t, root, "Agent-1") {
		outcomes = append(outcomes, e.Outcome)
	}
	if got := strings.Join(outcomes, " "); !strings.HasPrefix(got, "api-outage api-resumed") || strings.Count(got, "api-outage") != 1 {
		t.Errorf("devlog outcomes %q, want the outage said once, then its end", got)
	}
}

// Bad credentials (Claude Code's "Invalid API key") stop the runner with
// a hint; the message waits in the inbox, not counted as failed.
func TestRunnerStopsOnBadCredentials(t *testing.T) {
	root, dir, _, s := apiSetup(t, "claude-401")
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	err = r.Run(ctx)
	var h interface{ Hint() string }
	if !errors.As(err, &h) || !strings.Contains(err.Error(), "refused the agent command's credentials") || !strings.Contains(h.Hint(), "API key") {
		t.Fatalf("Run = %v, want it stopped for the credentials, with a hint", err)
	}
	if p, ok := errors.AsType[interface {
		error
		NeedsPerson() bool
	}](err); !ok || !p.NeedsPerson() {
		t.Errorf("Run = %v does not say a person must mend it, so up would restart into the refusal", err)
	}
	if strings.Contains(err.Error(), "(success)") || strings.Contains(err.Error(), "--new-session") {
		t.Errorf("the error misleads: %v", err)
	}
	if c := counts(t, root, "Agent-1"); c.Pending != 1 || c.Dead != 0 || turnsRun(dir) != 1 {
		t.Errorf("counts = %+v after %d turns, want the message back in the inbox after one", c, turnsRun(dir))
	}
	mb, _ := mailbox.Open(root, "Agent-1")
	msgs, _ := mb.List(mailbox.StatePending)
	if len(msgs) != 1 || msgs[0].Message.Attempts != 0 {
		t.Errorf("inbox = %+v, want m1 with no attempt counted", msgs)
	}
	// A runner started again into the same refusal stops again, and the
	// person, told the first time, is not told twice.
	r, err = New(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); !errors.As(err, &h) {
		t.Fatalf("second run = %v, want it stopped for the credentials", err)
	}
	if notices := inboxSubjects(t, root, "human"); len(notices) != 1 || !strings.Contains(notices[0], "refused its credentials") {
		t.Errorf("the person got %q, want one notice", notices)
	}
}

func inboxSubjects(t *testing.T, root, who string) []string {
	t.Helper()
	mb, err := mailbox.Open(root, who)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, m := range msgs {
		subjects = append(subjects, m.Message.Subject)
	}
	return subjects
}
