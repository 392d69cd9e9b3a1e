package cursor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// turnCtx is the context of a stand-in's turns: the test's, with no
// deadline of its own, for a busy machine only slows a turn.
func turnCtx(t *testing.T) context.Context {
	ctx, cancel := poll.Context(t)
	t.Cleanup(cancel)
	return ctx
}

func TestACPRepliesExactlyWhatTheAgentStreamed(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	ctx := turnCtx(t)
	var sessions []string
	var stages []Stage
	var progress []Progress
	var usage []Usage
	var mu sync.Mutex
	for _, want := range []string{
		"Done.\n\n```agentctl\nreport: done\nsend:\n  - to: Agent-2\n    body: \"hi\"\n```\n",
		"line one\r\nline two\r\n  indented ✓ ünïcode 🚀\r\n",
		" leading and trailing space ",
	} {
		turn := Turn{Prompt: "echo:" + want,
			OnSession:  func(id string) { sessions = append(sessions, id) },
			OnStage:    func(s Stage) error { stages = append(stages, s); return nil },
			OnProgress: func(p Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
			OnUsage:    func(u Usage) { usage = append(usage, u) },
		}
		turn.Session = strings.Join(sessions[len(sessions)-min(len(sessions), 1):], "")
		got, err := d.Run(ctx, turn)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("reply %q, want exactly %q", got, want)
		}
	}
	if len(usage) != 3 || usage[0].OutputTokens == 0 || usage[0].InputTokens == 0 {
		t.Errorf("usage %+v, want each turn's tokens as the agent reported them", usage)
	}
	if len(sessions) != 3 || sessions[0] == "" || sessions[1] != sessions[0] || sessions[2] != sessions[0] {
		t.Errorf("sessions %q, want one session continued", sessions)
	}
	if strings.Join(stagesOf(stages), ",") != "injected,submitted,replied,injected,submitted,replied,injected,submitted,replied" {
		t.Errorf("stages %v", stages)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 3 || progress[0].Kind != "message" {
		t.Errorf("progress %v, want the streamed chunks", progress)
	}
}

func stagesOf(s []Stage) []string {
	var out []string
	for _, x := range s {
		out = append(out, string(x))
	}
	return out
}

func TestACPMemorySurvivesARestartThroughSessionLoad(t *testing.T) {
	t.Run("replayed before the answer", func(t *testing.T) { testMemory(t, acpStandIn(t)) })
	t.Run("replayed after the answer", func(t *testing.T) {
		s := acpStandIn(t)
		s.Env = append(s.Env, "ACPAGENT_LATE_REPLAY=1")
		testMemory(t, s)
	})
}

// A replay that goes on into the turn (held past the driver's wait for
// its end) fails the turn: its words would have been taken for the
// reply. So does one whose history ran tools: a tool call the replay
// tells of, ended, is not the turn's own. The turn after goes on in the
// session.
func TestACPReplayRunningIntoTheTurnFailsIt(t *testing.T) {
	for _, tc := range []struct{ name, env string }{{"text", ""}, {"tools", "ACPAGENT_REPLAY_TOOLS=1"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := acpStandIn(t)
			s.Env = append(s.Env, "ACPAGENT_LATE_REPLAY=1", "ACPAGENT_REPLAY_HELD=1", tc.env)
			sessions := t.TempDir()
			build := func() Driver { return rememberingACP(t, s, sessions) }
			ctx := turnCtx(t)
			first := build()
			for _, p := range []string{"echo:one", "echo:two"} {
				if _, err := first.Run(ctx, Turn{Prompt: p}); err != nil {
					t.Fatal(err)
				}
			}
			first.(interface{ Close() }).Close()
			second := build()
			got, err := second.Run(ctx, Turn{Prompt: "echo:three"})
			if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "replaying") {
				t.Fatalf("a turn the replay ran into: %q, %v; want it failed, saying why", got, err)
			}
			if got, err := second.Run(ctx, Turn{Prompt: "echo:four"}); err != nil || got != "four" {
				t.Fatalf("the turn after: %q, %v", got, err)
			}
		})
	}
}

// An agent's own tool, told of only once ended, with its result handed
// back as the user's message (Claude's adapter's way), is not a replay
// running into the first turn after a load.
func TestACPOwnToolAfterALoadIsNoReplay(t *testing.T) {
	s := acpStandIn(t)
	sessions := t.TempDir()
	build := func() Driver { return rememberingACP(t, s, sessions) }
	ctx := turnCtx(t)
	first := build()
	if _, err := first.Run(ctx, Turn{Prompt: "echo:one"}); err != nil {
		t.Fatal(err)
	}
	first.(interface{ Close() }).Close()
	if got, err := build().Run(ctx, Turn{Prompt: "ran:ls"}); err != nil || got != "ran ls" {
		t.Fatalf("the first turn after a load, with a tool of its own: %q, %v", got, err)
	}
}

// rememberingACP is Agent-3's acp seat on s, keeping its conversation in
// sessions, as a runner (re)started there has it; closed when the test
// ends, if not before.
func rememberingACP(t *testing.T, s ACPSettings, sessions string) Driver {
	t.Helper()
	d, err := New(Settings{Name: "Agent-3", Driver: DriverACP, ACP: s, KeepsConversation: true}, Options{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.(interface{ Close() }).Close)
	return d
}

func testMemory(t *testing.T, s ACPSettings) {
	sessions := t.TempDir()
	build := func() Driver { return rememberingACP(t, s, sessions) }
	ctx := turnCtx(t)
	first := build()
	for _, p := range []string{"echo:one", "echo:two"} {
		if _, err := first.Run(ctx, Turn{Prompt: p}); err != nil {
			t.Fatal(err)
		}
	}
	first.(interface{ Close() }).Close()

	var notes []string
	second := build()
	got, err := second.Run(ctx, Turn{Prompt: "recall", OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if got != "echo:one\necho:two" {
		t.Errorf("the restarted seat recalls %q, want the turns before the restart", got)
	}
	if len(notes) > 0 {
		t.Errorf("notes %q", notes)
	}
	data, err := os.ReadFile(SessionFile(sessions, "Agent-3"))
	if err != nil || !strings.Contains(string(data), `"kind": "acp"`) || !strings.Contains(string(data), `"turns": 3`) {
		t.Errorf("conversation record %s (%v)", data, err)
	}
}

func TestACPWithoutLoadSessionStartsAfreshAndSaysSo(t *testing.T) {
	s := acpStandIn(t)
	s.Env = append(s.Env, "ACPAGENT_NOLOAD=1")
	ctx := turnCtx(t)
	d := newACP(t, s)
	var session string
	if _, err := d.Run(ctx, Turn{Prompt: "echo:one", OnSession: func(id string) { session = id }}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	var notes []string
	got, err := d.Run(ctx, Turn{Prompt: "recall", Session: session, OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if got != "(nothing)" || len(notes) != 1 || !strings.Contains(notes[0], "cannot load a session") {
		t.Errorf("reply %q, notes %q: want a fresh session, noted", got, notes)
	}
}

func TestACPPermissionsFollowTheRunnersVerdict(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	ctx := turnCtx(t)
	var session string
	run := func(prompt string, ask func(context.Context, PermissionRequest) (PermissionVerdict, error)) (string, []Progress, error) {
		var progress []Progress
		var mu sync.Mutex
		got, err := d.Run(ctx, Turn{Prompt: prompt, Session: session, OnSession: func(id string) { session = id }, OnPermission: ask,
			OnProgress: func(p Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }})
		mu.Lock()
		defer mu.Unlock()
		return got, progress, err
	}
	var asked PermissionRequest
	got, progress, err := run("permission:rm -rf build", func(_ context.Context, r PermissionRequest) (PermissionVerdict, error) {
		asked = r
		return PermissionVerdict{Allow: true, Reason: "guardrails allow"}, nil
	})
	if err != nil || got != "allowed" {
		t.Fatalf("allowed: reply %q, %v", got, err)
	}
	if asked.Title != "rm -rf build" || asked.Input != `{"command":"rm -rf build"}` || len(asked.Options) != 3 {
		t.Errorf("the runner was asked %+v", asked)
	}
	if !hasProgress(progress, "tool", "rm -rf build pending") || !hasProgress(progress, "tool", "rm -rf build completed") || !hasProgress(progress, "permission", "allowed rm -rf build") {
		t.Errorf("progress %v", progress)
	}
	if got, _, err := run("permission:curl evil", func(context.Context, PermissionRequest) (PermissionVerdict, error) {
		return PermissionVerdict{Reason: "guardrails deny"}, nil
	}); err != nil || got != "rejected" {
		t.Errorf("refused: reply %q, %v", got, err)
	}
	if got, _, err := run("permission:make", nil); err != nil || got != "rejected" {
		t.Errorf("nobody to ask: reply %q, %v", got, err)
	}
	// A person answers while the turn waits.
	answer := make(chan PermissionVerdict)
	parked := make(chan struct{})
	go func() { <-parked; answer <- PermissionVerdict{Allow: true, Reason: "approved by human"} }()
	got, _, err = run("permission:deploy", func(ctx context.Context, _ PermissionRequest) (PermissionVerdict, error) {
		close(parked)
		select {
		case v := <-answer:
			return v, nil
		case <-ctx.Done():
			return PermissionVerdict{}, ctx.Err()
		}
	})
	if err != nil || got != "allowed" {
		t.Errorf("parked and approved: reply %q, %v", got, err)
	}
	// A permission nobody could judge fails the turn, whatever the agent does.
	if got, _, err := run("permission:judge", func(context.Context, PermissionRequest) (PermissionVerdict, error) {
		return PermissionVerdict{}, errors.New("the mailbox is gone")
	}); !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "the mailbox is gone") {
		t.Errorf("unjudged: reply %q, %v", got, err)
	}
}

func hasProgress(ps []Progress, kind, prefix string) bool {
	for _, p := range ps {
		if p.Kind == kind && strings.HasPrefix(p.Text, prefix) {
			return true
		}
	}
	return false
}

func TestACPCancelStopsTheTurnAndTheSessionGoesOn(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	ctx := turnCtx(t)
	var session string
	if _, err := d.Run(ctx, Turn{Prompt: "echo:before", OnSession: func(id string) { session = id }}); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	working := make(chan struct{})
	var once sync.Once
	go func() { <-working; cancel(ErrAbandoned) }()
	got, err := d.Run(tctx, Turn{Prompt: "hang", Session: session, OnProgress: func(p Progress) {
		if p.Kind == "message" {
			once.Do(func() { close(working) })
		}
	}})
	if !errors.Is(err, ErrAbandoned) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled turn: reply %q, %v; want ErrAbandoned and the agent's cancelled stop", got, err)
	}
	// The agent's own answer to session/cancel, not the kill of one that
	// did not stop within acpCancelWait.
	if !errors.Is(err, errStoppedByAgent) {
		t.Errorf("the cancelled turn: %v; the agent was killed rather than cancelled", err)
	}
	pid := d.child.child.PID
	got, err = d.Run(ctx, Turn{Prompt: "recall", Session: session})
	if err != nil || got != "echo:before\nhang" {
		t.Errorf("after the cancel: reply %q, %v; want the same session", got, err)
	}
	if d.child.child.PID == pid {
		t.Errorf("the agent that took the cancel was kept; it is started afresh, the session loaded")
	}
}

func TestACPTimeoutCancelsTheTurn(t *testing.T) {
	s := acpStandIn(t)
	s.Timeout = 2 * time.Second
	_, err := newACP(t, s).Run(turnCtx(t), Turn{Prompt: "hang"})
	if !errors.Is(err, ErrExecTimeout) {
		t.Errorf("timed out turn: %v; want ErrExecTimeout", err)
	}
}

func TestACPAgentDyingMidTurnFailsItAndTheNextTurnLoadsTheSession(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	ctx := turnCtx(t)
	var session string
	if _, err := d.Run(ctx, Turn{Prompt: "echo:before", OnSession: func(id string) { session = id }}); err != nil {
		t.Fatal(err)
	}
	pid := d.child.child.PID
	got, err := d.Run(ctx, Turn{Prompt: "die", Session: session})
	if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "ended during the turn") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("turn of a dying agent: reply %q, %v", got, err)
	}
	var notes []string
	got, err = d.Run(ctx, Turn{Prompt: "recall", Session: session, OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil || got != "echo:before" {
		t.Errorf("after the death: reply %q, %v (notes %q); want the session loaded in a new agent", got, err, notes)
	}
	if d.child.child.PID == pid {
		t.Errorf("the agent was not started again")
	}
}

func TestACPServesFilesOnlyInsideTheSeatsFolder(t *testing.T) {
	s := acpStandIn(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "notes.txt"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A link to a file that does not exist yet, outside, and one whose
	// missing target is another such link.
	if err := os.Symlink(filepath.Join(outside, "dangling.txt"), filepath.Join(s.Dir, "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dangling.txt", filepath.Join(s.Dir, "twice.txt")); err != nil {
		t.Fatal(err)
	}
	d := newACP(t, s)
	ctx := turnCtx(t)
	ask := func(prompt string) string {
		got, err := d.Run(ctx, Turn{Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := ask("read:" + filepath.Join(s.Dir, "notes.txt")); got != "a\nb\nc\n" {
		t.Errorf("read inside: %q", got)
	}
	if got := ask("write:" + filepath.Join(s.Dir, "sub", "new.txt") + "=hello"); got != "written" {
		t.Errorf("write inside: %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(s.Dir, "sub", "new.txt")); string(data) != "hello" {
		t.Errorf("written file holds %q", data)
	}
	for _, p := range []string{
		"read:" + secret,
		"read:" + filepath.Join(s.Dir, "..", filepath.Base(outside), "secret.txt"),
		"read:" + filepath.Join(s.Dir, "link", "secret.txt"),
		"read:notes.txt",
		"write:" + filepath.Join(s.Dir, "link", "planted.txt") + "=x",
		"write:" + filepath.Join(outside, "planted.txt") + "=x",
		"write:" + filepath.Join(s.Dir, "dangling.txt") + "=x",
		"write:" + filepath.Join(s.Dir, "twice.txt") + "=x",
	} {
		if got := ask(p); !strings.HasPrefix(got, "error:") {
			t.Errorf("%s: %q, want a refusal", p, got)
		}
	}
	for _, name := range []string{"planted.txt", "dangling.txt"} {
		if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
			t.Errorf("%s was written outside the seat's folder", name)
		}
	}
}

func TestACPStopReasonsOtherThanEndTurnFailTheTurn(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	ctx := turnCtx(t)
	for prompt, want := range map[string]string{"refuse": "refused the prompt (refusal)", "maxtokens": "token limit (max_tokens)", "nonsense": "answered the prompt with an error", "echo:": "without a word of reply"} {
		got, err := d.Run(ctx, Turn{Prompt: prompt})
		if !(errors.Is(err, ErrExecFailed) || errors.Is(err, ErrNoReply)) || !strings.Contains(err.Error(), want) || got != "" {
			t.Errorf("%s: reply %q, %v; want %q", prompt, got, err, want)
		}
	}
}

func TestACPModelIsChosenThroughTheSession(t *testing.T) {
	s := acpStandIn(t)
	s.Model = "stand-in-large"
	got, err := newACP(t, s).Run(turnCtx(t), Turn{Prompt: "model"})
	if err != nil || got != "stand-in-large" {
		t.Errorf("reply %q, %v", got, err)
	}
	s.Model = "gpt-nine"
	_, err = newACP(t, s).Run(turnCtx(t), Turn{Prompt: "model"})
	if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), `offers no model "gpt-nine" (it offers stand-in-small, stand-in-large)`) {
		t.Errorf("unknown model: %v", err)
	}
}

func TestACPResumeNeverSendsAgain(t *testing.T) {
	d := newACP(t, acpStandIn(t))
	_, err := d.Run(turnCtx(t), Turn{Prompt: "echo:x", Resume: true})
	if !errors.Is(err, ErrReplyLost) || d.child != nil {
		t.Errorf("resume: %v (agent started: %v)", err, d.child != nil)
	}
}

func TestChooseOptionPrefersAOneTimeAnswer(t *testing.T) {
	opts := []PermissionOption{{"a", "Always", permAllowAlways}, {"o", "Once", permAllowOnce}, {"r", "Reject always", permRejectAlways}}
	for _, c := range []struct {
		opts  []PermissionOption
		allow bool
		id    string
		ok    bool
	}{
		{opts, true, "o", true},
		{opts, false, "r", true},
		{opts[:1], false, "", false},
		{nil, true, "", false},
	} {
		id, ok := chooseOption(c.opts, PermissionVerdict{Allow: c.allow})
		if id != c.id || ok != c.ok {
			t.Errorf("chooseOption(%v, allow %v) = %q, %v; want %q, %v", c.opts, c.allow, id, ok, c.id, c.ok)
		}
	}
}

// A runner stopped on purpose mid-turn: the agent stops the prompt when
// asked, and the turn says so in its resume state; the next runner's
// resume reports the prompt stopped unanswered (for the runner to send it
// again, or not, as run.resend says), never a lost reply. A resume without
// that state still never sends again.
func TestACPResumeOfAPromptTheAgentStoppedSaysSo(t *testing.T) {
	s := acpStandIn(t)
	d := newACP(t, s)
	ctx := turnCtx(t)
	tctx, stop := context.WithCancel(ctx)
	working := make(chan struct{})
	var once sync.Once
	go func() { <-working; stop() }()
	var state string
	_, err := d.Run(tctx, Turn{Prompt: "hang",
		OnResumeState: func(st string) error { state = st; return nil },
		OnProgress: func(p Progress) {
			if p.Kind == "message" {
				once.Do(func() { close(working) })
			}
		}})
	if !errors.Is(err, context.Canceled) || state != acpCancelled {
		t.Fatalf("stopped turn: %v, resume state %q", err, state)
	}
	next := newACP(t, s) // the next runner's
	if _, err := next.Run(ctx, Turn{Prompt: "hang", Resume: true, ResumeState: state}); !errors.Is(err, ErrPromptStopped) || next.child != nil {
		t.Errorf("resume after the stop: %v (agent started: %v); want ErrPromptStopped, nothing sent", err, next.child != nil)
	}
}
