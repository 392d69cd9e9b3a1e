package cursor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// The real ACP adapters, installed by scripts/agentclis, against the fake
// model API: they skip with the reason where the tools cannot be had,
// unless AGENTCTL_REQUIRE_AGENT_CLIS is set.

// realSeat is an acp seat running tool against srv, in a fresh folder.
func realSeat(t *testing.T, preset, tool string, srv *fakemodel.Server) ACPSettings {
	t.Helper()
	if testing.Short() {
		t.Skip("the real adapters take seconds a turn; not in -short")
	}
	tl := agentcli.Get(t, tool, srv.URL)
	return ACPSettings{Preset: preset, Command: []string{tl.Path}, Dir: t.TempDir(), Env: tl.Env}
}

// logTurn makes a turn that logs what the agent does, for a failing
// test's reader.
func logTurn(t *testing.T, prompt string) Turn {
	return Turn{Prompt: prompt,
		OnProgress: func(p Progress) { t.Logf("progress %s: %q", p.Kind, p.Text) },
		OnNote:     func(n string) { t.Logf("note: %s", n) },
	}
}

func directive(reply string) string { return "fakemodel: reply " + strconv.Quote(reply) }

func TestRealClaudeACP(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "claude", agentcli.ClaudeACP, srv)
	sessions := t.TempDir()
	ctx, cancel := poll.Context(t)
	defer cancel()

	d := rememberingACP(t, s, sessions)
	exact := "Done.\r\n\r\n```agentctl\nreport: done\nsend:\n  - to: Agent-2\n    body: \"ünïcode ✓\"\n```\n"
	got, err := d.Run(ctx, logTurn(t, "hello\n"+directive(exact)))
	if err != nil || got != exact {
		t.Fatalf("turn 1: reply %q, %v; want exactly %q", got, err, exact)
	}
	// The fake model names the turn by the person's prompts it was sent,
	// and the adapter's own /model command rides in the first one, so the
	// memory is proven by the count and by the request itself.
	remembers := func(what, prompt string, turn int) {
		t.Helper()
		got, err := d.Run(ctx, logTurn(t, prompt))
		if want := "fakemodel turn " + strconv.Itoa(turn) + ";"; err != nil || !strings.HasPrefix(got, want) {
			t.Errorf("%s: reply %q, %v; want it to begin %q", what, got, err, want)
		}
		last := srv.Turns()[len(srv.Turns())-1]
		if last.Count("hello") != 1 || last.Count(prompt) != 1 {
			t.Errorf("%s: the request carries the first prompt %d times and this one %d times, want once each", what, last.Count("hello"), last.Count(prompt))
		}
	}
	remembers("turn 2", "and again", 2)

	// A runner restart: a new adapter loads the session and remembers.
	d.(interface{ Close() }).Close()
	d = rememberingACP(t, s, sessions)
	remembers("after a restart", "after the restart", 3)
}

func TestRealClaudeACPPermissionsAndCancel(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "claude", agentcli.ClaudeACP, srv)
	ctx, cancel := poll.Context(t)
	defer cancel()
	d := newACP(t, s)
	a := &askedSession{t: t}
	turn := a.turn
	file := filepath.Join(s.Dir, "made.txt")
	got, err := d.Run(ctx, turn("make it\nfakemodel: tool Bash "+`{"command":"echo made > made.txt","description":"make a file"}`, true))
	t.Logf("allowed: reply %q, %v", got, err)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "made\n" {
		t.Errorf("the allowed command did not run: %q, %v", data, err)
	}
	// Once a session used a tool, Claude Code sends every later prompt in
	// one user message with the tool's result and the prompts between,
	// where the fake model reads the first directive of them all: each
	// tool turn, and the cancel, go to a session of their own.
	got, err = d.Run(ctx, fresh(turn("remove it\nfakemodel: tool Bash "+`{"command":"rm made.txt","description":"remove the file"}`, false)))
	t.Logf("denied: reply %q, %v", got, err)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	if n := a.askedTimes(); n != 2 {
		t.Errorf("the runner was asked %d times, want 2", n)
	}
	cancelAndGoOn(t, ctx, d, srv, a)
}

// askedSession is one real seat's session across its turns: each turn
// answers the agent's permission requests as the turn was told, and the
// requests are counted.
type askedSession struct {
	t       *testing.T
	session string
	mu      sync.Mutex
	asked   int
}

// turn is a turn of the session whose permission requests get allow.
func (a *askedSession) turn(prompt string, allow bool) Turn {
	tn := logTurn(a.t, prompt)
	tn.Session = a.session
	tn.OnSession = func(id string) { a.session = id }
	tn.OnPermission = func(_ context.Context, r PermissionRequest) (PermissionVerdict, error) {
		a.mu.Lock()
		a.asked++
		a.mu.Unlock()
		a.t.Logf("permission asked: %+v", r)
		return PermissionVerdict{Allow: allow, Reason: "test"}, nil
	}
	return tn
}

// askedTimes is how many permission requests the turns heard.
func (a *askedSession) askedTimes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

// fresh starts tn in a session of its own.
func fresh(tn Turn) Turn { tn.NewChat = true; return tn }

// cancelAndGoOn gives the seat a prompt its model hangs on, cancels the
// turn once the model has it, and checks that the session still answers.
func cancelAndGoOn(t *testing.T, ctx context.Context, d Driver, srv *fakemodel.Server, a *askedSession) {
	t.Helper()
	tctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		for tctx.Err() == nil && !strings.Contains(lastPrompt(srv), "wait forever") {
			time.Sleep(20 * time.Millisecond)
		}
		stop(ErrAbandoned)
	}()
	start := time.Now()
	got, err := d.Run(tctx, fresh(a.turn("wait forever\nfakemodel: hang", true)))
	t.Logf("cancelled after %s: reply %q, %v", time.Since(start), got, err)
	if !errors.Is(err, ErrAbandoned) {
		t.Fatalf("cancelled turn: %v", err)
	}
	got, err = d.Run(ctx, a.turn("still there?\n"+directive("yes"), true))
	if err != nil || got != "yes" {
		t.Errorf("after the cancel: reply %q, %v", got, err)
	}
}

func lastPrompt(srv *fakemodel.Server) string {
	turns := srv.Turns()
	if len(turns) == 0 {
		return ""
	}
	var b strings.Builder
	for _, m := range turns[len(turns)-1].Messages {
		b.WriteString(m.Text)
	}
	return b.String()
}

// Codex's ACP adapter: the model chosen through the session (the fake
// model's configured gpt-5 is one Codex knows no metadata of, and it says
// so in the reply's text), exact replies, memory across a restart.
func TestRealCodexACP(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "codex", agentcli.CodexACP, srv)
	s.Model = "gpt-5.4"
	sessions := t.TempDir()
	ctx, cancel := poll.Context(t)
	defer cancel()
	d := rememberingACP(t, s, sessions)
	exact := "Done.\r\n\r\n```agentctl\nreport: done\n```\n"
	got, err := d.Run(ctx, logTurn(t, "hello\n"+directive(exact)))
	if err != nil || got != exact {
		t.Fatalf("turn 1: reply %q, %v; want exactly %q", got, err, exact)
	}
	if m := srv.Turns()[0].Model; m != "gpt-5.4" {
		t.Errorf("the model asked was %q, want the seat's gpt-5.4", m)
	}
	d.(interface{ Close() }).Close()
	d = rememberingACP(t, s, sessions)
	got, err = d.Run(ctx, logTurn(t, "after the restart"))
	if want := `fakemodel turn 2; first prompt: "hello"`; err != nil || got != want {
		t.Errorf("after a restart: reply %q, %v; want %q", got, err, want)
	}
}

// Gemini CLI's ACP mode: exact replies and memory while it runs. Its
// session/load (0.61) finds no session it wrote itself, so after a
// restart the driver starts a new one and says so in the turn's notes.
func TestRealGeminiACP(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "gemini", agentcli.Gemini, srv)
	s.Command = append(s.Command, "--experimental-acp")
	sessions := t.TempDir()
	ctx, cancel := poll.Context(t)
	defer cancel()
	d := rememberingACP(t, s, sessions)
	exact := "Done.\r\n\r\n```agentctl\nreport: done\n```\n"
	got, err := d.Run(ctx, logTurn(t, "hello\n"+directive(exact)))
	if err != nil || got != exact {
		t.Fatalf("turn 1: reply %q, %v; want exactly %q", got, err, exact)
	}
	got, err = d.Run(ctx, logTurn(t, "and again"))
	if want := `fakemodel turn 2; first prompt: "hello"`; err != nil || got != want {
		t.Errorf("turn 2: reply %q, %v; want %q", got, err, want)
	}
	d.(interface{ Close() }).Close()
	d = rememberingACP(t, s, sessions)
	var notes []string
	tn := logTurn(t, "after the restart")
	tn.OnNote = func(n string) { notes = append(notes, n) }
	got, err = d.Run(ctx, tn)
	switch {
	case err != nil:
		t.Errorf("after a restart: %v", err)
	case got == `fakemodel turn 3; first prompt: "hello"`:
		t.Logf("Gemini CLI loaded its session: memory survives the restart")
	case got != `fakemodel turn 1; first prompt: "after the restart"` || len(notes) != 1 || !strings.Contains(notes[0], "a new one began without the conversation so far"):
		t.Errorf("after a restart: reply %q, notes %q; want the session loaded, or a new one and a note saying so", got, notes)
	}
}

// Codex asks before a command that leaves its sandbox: one approved, one
// denied; then a cancel, after which the session goes on.
func TestRealCodexACPPermissionsAndCancel(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "codex", agentcli.CodexACP, srv)
	s.Model = "gpt-5.4"
	ctx, cancel := poll.Context(t)
	defer cancel()
	d := newACP(t, s)
	a := &askedSession{t: t}
	turn := a.turn
	escalated := func(cmd string) string {
		return "fakemodel: tool exec_command " + `{"cmd":` + strconv.Quote(cmd) + `,"sandbox_permissions":"require_escalated","justification":"the test asks"}`
	}
	if _, err := d.Run(ctx, turn("make it\n"+escalated("echo made > made.txt"), true)); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(s.Dir, "made.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("the approved command did not run: %q, %v", data, err)
	}
	// Refused, Codex ends its turn, cancelled.
	if _, err := d.Run(ctx, fresh(turn("remove it\n"+escalated("rm made.txt"), false))); !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), `after it was refused to run ["rm made.txt"]`) {
		t.Errorf("denied: %v; want the turn failed, saying why", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "made.txt")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	if n := a.askedTimes(); n != 2 {
		t.Errorf("the runner was asked %d times, want 2", n)
	}
	cancelAndGoOn(t, ctx, d, srv, a)
}

// Gemini CLI asks before a shell command: one approved, one denied; then a
// cancel, after which its session goes on.
func TestRealGeminiACPPermissionsAndCancel(t *testing.T) {
	srv := fakemodel.Start(t)
	s := realSeat(t, "gemini", agentcli.Gemini, srv)
	s.Command = append(s.Command, "--experimental-acp")
	ctx, cancel := poll.Context(t)
	defer cancel()
	d := newACP(t, s)
	a := &askedSession{t: t}
	turn := a.turn
	shell := func(cmd string) string {
		return "fakemodel: tool run_shell_command " + `{"command":` + strconv.Quote(cmd) + `,"description":"the test asks"}`
	}
	got, err := d.Run(ctx, turn("make it\n"+shell("echo made > made.txt"), true))
	t.Logf("allowed: %q, %v", got, err)
	if data, err := os.ReadFile(filepath.Join(s.Dir, "made.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("the approved command did not run: %q, %v", data, err)
	}
	got, err = d.Run(ctx, fresh(turn("remove it\n"+shell("rm made.txt"), false)))
	t.Logf("denied: %q, %v", got, err)
	if _, err := os.Stat(filepath.Join(s.Dir, "made.txt")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	if n := a.askedTimes(); n != 2 {
		t.Errorf("the runner was asked %d times, want 2", n)
	}
	cancelAndGoOn(t, ctx, d, srv, a)
}
