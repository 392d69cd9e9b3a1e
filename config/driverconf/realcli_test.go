package driverconf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
)

// realSeat is an exec seat running a real agent tool.
type realSeat struct {
	name    string
	tool    string
	preset  string
	command []string // empty: the preset's own
}

var realSeats = []realSeat{
	{name: "claude stream-json", tool: agentcli.Claude, preset: config.PresetClaude},
	{name: "claude json", tool: agentcli.Claude, preset: config.PresetClaude, command: []string{"claude", "-p", "--output-format", "json"}},
	{name: "codex", tool: agentcli.Codex, preset: config.PresetCodex},
	{name: "gemini", tool: agentcli.Gemini, preset: config.PresetGemini},
}

// realTurnTimeout bounds a turn generously: a real tool starts Node.js
// and talks to the server, a few seconds on a loaded machine.
const realTurnTimeout = 5 * time.Minute

// realAgent is the seat's agent as agentctl.yaml would have it: the
// preset, the tool's environment in env, a folder of its own in cwd. The
// tool is put first on PATH, so that the preset's own command runs it.
func realAgent(t *testing.T, s realSeat, srv *fakemodel.Server) config.Agent {
	t.Helper()
	tool := agentcli.Get(t, s.tool, srv.URL)
	t.Setenv("PATH", filepath.Dir(tool.Path)+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := map[string]string{}
	for _, kv := range tool.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return config.Agent{Name: "Agent-1", Driver: config.DriverExec,
		Exec:    config.Exec{Preset: s.preset, Command: s.command, Timeout: config.Duration(realTurnTimeout)},
		Program: config.Program{Cwd: t.TempDir(), Env: env}}
}

// realDriver is the seat's driver as a runner builds it, keeping the
// conversation in sessions.
func realDriver(t *testing.T, a config.Agent, sessions string) cursor.Driver {
	t.Helper()
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := cursor.New(Settings(a, config.DefaultGUI()), cursor.Options{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// exactReply is what a reply must carry byte for byte: an agentctl block,
// Unicode, a tab and trailing spaces.
const exactReply = "Done: wrote greet() — héllo 😀\n\n```agentctl\n{\"devlog\": \"Wrote greet()\",\n \"report\": \"tab\\there\"}\n```\ntrailing   \n"

// Two turns of each real tool: the first reply is what the server was
// told to say, byte for byte; the second, in the session the first
// began, counts two turns and quotes the first prompt.
func TestRealToolsTwoTurnsExactWithMemory(t *testing.T) {
	for _, s := range realSeats {
		t.Run(s.name, func(t *testing.T) {
			srv := fakemodel.Start(t)
			a := realAgent(t, s, srv)
			d := realDriver(t, a, t.TempDir())
			replyFile := filepath.Join(t.TempDir(), "reply.txt")
			if err := os.WriteFile(replyFile, []byte(exactReply), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var usage []cursor.Usage
			turn := func(prompt string) string {
				start := time.Now()
				reply, err := d.Run(ctx, cursor.Turn{Prompt: prompt, OnUsage: func(u cursor.Usage) { usage = append(usage, u) }})
				if err != nil {
					t.Fatalf("turn %q: %v", prompt, err)
				}
				t.Logf("turn took %s", time.Since(start).Round(time.Millisecond))
				return reply
			}
			if got := turn("Remember the word kumquat.\nfakemodel: reply-file " + replyFile); got != exactReply {
				t.Errorf("first reply = %q, want %q", got, exactReply)
			}
			want := `fakemodel turn 2; first prompt: "Remember the word kumquat."`
			if got := turn("What was the word?"); got != want {
				t.Errorf("second reply = %q, want %q", got, want)
			}
			if len(usage) != 2 || usage[1].InputTokens == 0 || usage[1].OutputTokens == 0 {
				t.Errorf("usage reported = %+v, want two turns' tokens", usage)
			}
			turns := srv.Turns()
			if last := turns[len(turns)-1]; last.Count("What was the word?") != 1 || last.Count("Remember the word kumquat.") != 1 {
				t.Errorf("the second turn's request carries each prompt %d and %d times, want once",
					last.Count("Remember the word kumquat."), last.Count("What was the word?"))
			}
		})
	}
}

// A turn killed while the model answers, then sent again, leaves the
// session holding its prompt once: Claude Code and Codex fork the session
// each turn continues, and the failed attempt's fork is never continued.
// Gemini CLI cannot fork, so its retry continues the session with the
// failed attempt in it, as config/preset.go says: the prompt twice.
func TestRealToolsRetryDoesNotPileUpThePrompt(t *testing.T) {
	for _, s := range realSeats {
		if s.name == "claude json" {
			continue // the same tool and session handling as stream-json
		}
		// Gemini CLI sends the failed attempt and the retry as one user
		// message, which the server counts as one turn.
		copies, turn := 1, 2
		if s.preset == config.PresetGemini {
			copies = 2
		}
		t.Run(s.name, func(t *testing.T) {
			srv := fakemodel.Start(t)
			a := realAgent(t, s, srv)
			d := realDriver(t, a, t.TempDir())
			ctx := context.Background()
			if _, err := d.Run(ctx, cursor.Turn{Prompt: "Remember the word kumquat."}); err != nil {
				t.Fatal(err)
			}
			// The server hangs on the first request of this prompt; the
			// turn is stopped once the request arrived.
			prompt := "What was the word?\nfakemodel: hang"
			stopCtx, stop := context.WithCancel(ctx)
			before := len(srv.Turns())
			go func() {
				for len(srv.Turns()) == before && stopCtx.Err() == nil {
					time.Sleep(20 * time.Millisecond)
				}
				stop()
			}()
			if _, err := d.Run(stopCtx, cursor.Turn{Prompt: prompt}); err == nil {
				t.Fatal("the stopped turn returned a reply")
			}
			var notes []string
			reply, err := d.Run(ctx, cursor.Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, n) }})
			if err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(strings.Join(notes, "\n"), "cannot fork a session"); said != (copies > 1) {
				t.Errorf("notes %q: a note of the earlier attempt left in the session is %v, want %v", notes, said, copies > 1)
			}
			if want := fmt.Sprintf(`fakemodel turn %d; first prompt: "Remember the word kumquat."`, turn); reply != want {
				t.Errorf("the retry's reply = %q, want %q", reply, want)
			}
			turns := srv.Turns()
			if n := turns[len(turns)-1].Count("What was the word?"); n != copies {
				t.Errorf("the retry's request carries the prompt %d times, want %d", n, copies)
			}
		})
	}
}

// A model API that is down fails the turn as one (ErrModelAPI), and the
// next turn, once it is up, continues the conversation as it was.
func TestRealClaudeAPIDownThenUp(t *testing.T) {
	srv := fakemodel.Start(t)
	a := realAgent(t, realSeats[0], srv)
	a.Env["CLAUDE_CODE_MAX_RETRIES"] = "0"
	d := realDriver(t, a, t.TempDir())
	ctx := context.Background()
	if _, err := d.Run(ctx, cursor.Turn{Prompt: "first"}); err != nil {
		t.Fatal(err)
	}
	srv.SetDown(true)
	_, err := d.Run(ctx, cursor.Turn{Prompt: "second"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 529") || strings.Contains(err.Error(), "(success)") || strings.Contains(err.Error(), "--new-session") {
		t.Fatalf("err = %v, want the API's 529, without (success) or --new-session", err)
	}
	srv.SetDown(false)
	reply, err := d.Run(ctx, cursor.Turn{Prompt: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "fakemodel turn 2; first prompt: " + strconv.Quote("first"); reply != want {
		t.Errorf("reply = %q, want %q", reply, want)
	}
}
