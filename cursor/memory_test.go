package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// useFakeCLIs puts the stand-ins for claude and cursor-agent
// (fixtures/fakecli) first on PATH, so that the presets' own commands run
// them, with a fresh home for their conversations.
func useFakeCLIs(t *testing.T) (home string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "fixtures", "fakecli"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	home = t.TempDir()
	t.Setenv("FAKE_AGENT_HOME", home)
	t.Setenv("FAKE_AGENT_OUTPUT", "")
	return home
}

// Presets of the exec driver the stand-ins answer as.
const (
	presetClaude      = "claude"
	presetCursorAgent = "cursor-agent"
)

// presetAgent is an exec agent of a preset with the settings the preset
// gives (config/driverconf hands them over the same way; its tests run a
// turn through them).
func presetAgent(preset string, nc NewChatPolicy) Settings {
	command := map[string][]string{
		presetClaude:      {"claude", "-p", "--output-format", "json"},
		presetCursorAgent: {"cursor-agent", "-p", "--output-format", "json", PromptPlaceholder},
	}[preset]
	return Settings{Name: "Agent-4", Driver: DriverExec, NewChat: nc, KeepsConversation: true, Exec: ExecSettings{
		Preset: preset, Command: command, Resume: []string{"--resume", SessionPlaceholder}, ReplyField: "result", SessionField: "session_id",
	}}
}

func newDriver(t *testing.T, a Settings, opts Options) Driver {
	t.Helper()
	d, err := New(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var turnPattern = regexp.MustCompile(`turn (\d+) of session (\S+); it began with: (.*)`)

// turn runs one turn and returns what the stand-in says of its memory.
func turn(t *testing.T, d Driver, prompt, thread string) (n, session, began string) {
	t.Helper()
	reply, err := d.Run(context.Background(), Turn{Prompt: prompt, Thread: thread})
	if err != nil {
		t.Fatalf("turn %q: %v", prompt, err)
	}
	m := turnPattern.FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("reply %q is not the stand-in's", reply)
	}
	return m[1], strings.TrimSuffix(m[2], ";"), m[3]
}

func readRecord(t *testing.T, sessions string) conversation {
	return readRecordOf(t, sessions, "Agent-4")
}

func readRecordOf(t *testing.T, sessions, agent string) conversation {
	t.Helper()
	data, err := os.ReadFile(SessionFile(sessions, agent))
	if err != nil {
		t.Fatal(err)
	}
	var c conversation
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// A preset's session is continued turn after turn, by the next runner too,
// until --new-session starts another; the one left is remembered.
func TestPresetSessionSurvivesARestart(t *testing.T) {
	for _, preset := range []string{presetClaude, presetCursorAgent} {
		t.Run(preset, func(t *testing.T) {
			useFakeCLIs(t)
			sessions := t.TempDir()
			d := newDriver(t, presetAgent(preset, NewChatPolicy{}), Options{Sessions: sessions})
			n, s1, began := turn(t, d, "first prompt\nsecond line", "")
			if n != "1" || began != "first prompt" {
				t.Fatalf("first turn: turn %s, began with %q", n, began)
			}
			if n, s, began := turn(t, d, "second prompt", ""); n != "2" || s != s1 || began != "first prompt" {
				t.Fatalf("second turn: turn %s of %s (began with %q), want turn 2 of %s", n, s, began, s1)
			}

			restarted := newDriver(t, presetAgent(preset, NewChatPolicy{}), Options{Sessions: sessions})
			if n, s, _ := turn(t, restarted, "after a restart", ""); n != "3" || s != s1 {
				t.Fatalf("after a restart: turn %s of %s, want turn 3 of %s", n, s, s1)
			}
			if c := readRecord(t, sessions); c.SessionID != s1 || c.Turns != 3 || c.Kind != preset {
				t.Errorf("record = %+v", c)
			}

			fresh := newDriver(t, presetAgent(preset, NewChatPolicy{}), Options{Sessions: sessions, NewSession: true})
			n, s2, began := turn(t, fresh, "start over", "")
			if n != "1" || s2 == s1 || began != "start over" {
				t.Fatalf("--new-session: turn %s of %s, want turn 1 of a session other than %s", n, s2, s1)
			}
			if n, s, _ := turn(t, fresh, "and go on", ""); n != "2" || s != s2 {
				t.Fatalf("after the new session: turn %s of %s, want turn 2 of %s", n, s, s2)
			}
			c := readRecord(t, sessions)
			if c.SessionID != s2 || c.Turns != 2 || c.Why != "agentctl run --new-session" ||
				len(c.Previous) != 1 || c.Previous[0].SessionID != s1 || c.Previous[0].Turns != 3 {
				t.Errorf("record = %+v", c)
			}
		})
	}
}

func TestPresetNewChatPolicy(t *testing.T) {
	useFakeCLIs(t)
	t.Run("per thread", func(t *testing.T) {
		d := newDriver(t, presetAgent(presetClaude, NewChatPolicy{PerThread: true}), Options{Sessions: t.TempDir()})
		var got []string
		for _, th := range []string{"A", "A", "B", "B", "A"} {
			n, s, _ := turn(t, d, "in "+th, th)
			got = append(got, n+"@"+s)
		}
		sameSession(t, got, "0 0 1 1 2")
	})
	t.Run("every 2 turns", func(t *testing.T) {
		d := newDriver(t, presetAgent(presetClaude, NewChatPolicy{Every: 2}), Options{Sessions: t.TempDir()})
		var got []string
		for _, th := range []string{"A", "B", "A", "A", "C"} {
			n, s, _ := turn(t, d, "in "+th, th)
			got = append(got, n+"@"+s)
		}
		sameSession(t, got, "0 0 1 1 2")
	})
}

// sameSession checks which turns shared a session: want numbers the
// sessions in order of appearance.
func sameSession(t *testing.T, got []string, want string) {
	t.Helper()
	seen := map[string]string{}
	var shape []string
	for _, g := range got {
		s := g[strings.Index(g, "@")+1:]
		if _, ok := seen[s]; !ok {
			seen[s] = string(rune('0' + len(seen)))
		}
		shape = append(shape, seen[s])
	}
	if strings.Join(shape, " ") != want {
		t.Errorf("sessions of the turns = %s (%v), want %s", strings.Join(shape, " "), got, want)
	}
}

// A command that prints what its preset cannot read fails the turn with a
// clear error, and what it printed is kept byte for byte; the record is
// left as it was.
func TestPresetUnreadableOutputIsKept(t *testing.T) {
	useFakeCLIs(t)
	sessions := t.TempDir()
	d := newDriver(t, presetAgent(presetClaude, NewChatPolicy{}), Options{Sessions: sessions})
	_, s1, _ := turn(t, d, "hello", "")

	t.Setenv("FAKE_AGENT_OUTPUT", "malformed")
	_, err := d.Run(context.Background(), Turn{Prompt: "again"})
	if !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("err = %v, want ErrBadOutput saying it is not JSON", err)
	}
	kept := regexp.MustCompile(`kept in (\S+\.txt)`).FindStringSubmatch(err.Error())
	if kept == nil || filepath.Dir(kept[1]) != RawOutputDir(sessions, "Agent-4") {
		t.Fatalf("the error does not name the kept output in %s: %v", RawOutputDir(sessions, "Agent-4"), err)
	}
	if raw, _ := os.ReadFile(kept[1]); string(raw) != "Warning: update available\n{\"type\": \"result\", \"result\": \"cut sh" {
		t.Errorf("kept output = %q", raw)
	}
	if c := readRecord(t, sessions); c.Turns != 1 || c.SessionID != s1 {
		t.Errorf("a failed turn changed the record: %+v", c)
	}

	t.Setenv("FAKE_AGENT_OUTPUT", "error")
	_, err = d.Run(context.Background(), Turn{Prompt: "again"})
	if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "error_during_execution") || !strings.Contains(err.Error(), "kept in") {
		t.Fatalf("err = %v, want ErrExecFailed with the tool's error, its output kept", err)
	}

	t.Setenv("FAKE_AGENT_OUTPUT", "empty")
	if _, err = d.Run(context.Background(), Turn{Prompt: "again"}); !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), "printed nothing") {
		t.Fatalf("err = %v, want ErrBadOutput saying it printed nothing", err)
	}

	// Without a sessions folder (agentctl prompt) the error quotes it.
	t.Setenv("FAKE_AGENT_OUTPUT", "malformed")
	oneShot := newDriver(t, presetAgent(presetClaude, NewChatPolicy{}), Options{})
	if _, err = oneShot.Run(context.Background(), Turn{Prompt: "x"}); !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), `printed "Warning: update available\n{`) {
		t.Fatalf("err = %v, want ErrBadOutput quoting the output", err)
	}
}

// A session the tool no longer has fails the turn with a hint, and
// --new-session gets the agent going again.
func TestPresetLostSession(t *testing.T) {
	home := useFakeCLIs(t)
	sessions := t.TempDir()
	d := newDriver(t, presetAgent(presetClaude, NewChatPolicy{}), Options{Sessions: sessions})
	_, s1, _ := turn(t, d, "hello", "")
	os.Remove(filepath.Join(home, s1))
	_, err := d.Run(context.Background(), Turn{Prompt: "again"})
	if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "No conversation found with session ID: "+s1) || !strings.Contains(err.Error(), "agentctl run --new-session") {
		t.Fatalf("err = %v, want the tool's reason and the hint", err)
	}
	fresh := newDriver(t, presetAgent(presetClaude, NewChatPolicy{}), Options{Sessions: sessions, NewSession: true})
	if n, s, _ := turn(t, fresh, "again", ""); n != "1" || s == s1 {
		t.Errorf("--new-session: turn %s of %s", n, s)
	}
}

// A record that cannot be read is set aside, never deleted, and the turn
// starts afresh.
func TestUnreadableRecordIsSetAside(t *testing.T) {
	useFakeCLIs(t)
	sessions := t.TempDir()
	path := SessionFile(sessions, "Agent-4")
	os.WriteFile(path, []byte("{not json"), 0o644)
	var warned []error
	d := newDriver(t, presetAgent(presetClaude, NewChatPolicy{}), Options{Sessions: sessions, Warn: func(err error) { warned = append(warned, err) }})
	if n, _, _ := turn(t, d, "hello", ""); n != "1" {
		t.Errorf("turn %s, want a new session", n)
	}
	aside, _ := filepath.Glob(path + ".unreadable-*")
	if len(aside) != 1 || len(warned) != 1 || !strings.Contains(warned[0].Error(), aside[0]) {
		t.Fatalf("set aside %v, warned %v", aside, warned)
	}
	if data, _ := os.ReadFile(aside[0]); string(data) != "{not json" {
		t.Errorf("set-aside record = %q", data)
	}
}

// A driver that cannot start a fresh conversation refuses --new-session
// for the reason its settings give, and a fresh one needs a folder for
// the record.
func TestNewSessionNeedsAConversation(t *testing.T) {
	why := errors.New("its exec command has no exec.preset")
	plain := Settings{Name: "Agent-4", Driver: DriverExec, Exec: ExecSettings{Command: []string{"cat"}}, NoNewChat: why}
	if _, err := New(plain, Options{Sessions: t.TempDir(), NewSession: true}); !errors.Is(err, why) {
		t.Errorf("err = %v, want the refusal its settings give", err)
	}
	if _, err := New(presetAgent(presetClaude, NewChatPolicy{}), Options{NewSession: true}); err == nil || !strings.Contains(err.Error(), "no folder for sessions") {
		t.Errorf("err = %v, want a refusal for want of a sessions folder", err)
	}
}

func TestDecideNewChat(t *testing.T) {
	exec := conversation{Kind: "claude", SessionID: "s", Thread: "A", Turns: 3}
	gui := conversation{Kind: kindGUI, Thread: "A", Turns: 3}
	tests := []struct {
		name   string
		c      conversation
		p      NewChatPolicy
		kind   string
		thread string
		fresh  bool
		want   bool
	}{
		{"exec continues", exec, NewChatPolicy{}, "claude", "B", false, false},
		{"exec fresh", exec, NewChatPolicy{}, "claude", "A", true, true},
		{"exec without a session", conversation{}, NewChatPolicy{}, "claude", "A", false, true},
		{"exec whose tool changed", exec, NewChatPolicy{}, "cursor-agent", "A", false, true},
		{"gui first turn, no policy", conversation{}, NewChatPolicy{Every: 5}, kindGUI, "A", false, false},
		{"gui first turn, per thread", conversation{}, NewChatPolicy{PerThread: true}, kindGUI, "A", false, true},
		{"gui same thread", gui, NewChatPolicy{PerThread: true}, kindGUI, "A", false, false},
		{"gui other thread", gui, NewChatPolicy{PerThread: true}, kindGUI, "B", false, true},
		{"gui under the count", gui, NewChatPolicy{Every: 4}, kindGUI, "B", false, false},
		{"gui at the count", gui, NewChatPolicy{Every: 3}, kindGUI, "A", false, true},
	}
	for _, tt := range tests {
		if v := decideNewChat(tt.c, tt.p, tt.kind, tt.thread, tt.fresh); v.newChat != tt.want || (v.newChat && v.why == "") {
			t.Errorf("%s: verdict %+v, want new chat %v with a reason", tt.name, v, tt.want)
		}
	}
}

// scriptedDriver fails the turns it is told to, after the command got
// the prompt, and otherwise replies with a session of its own.
type scriptedDriver struct{ fail []bool }

func (d *scriptedDriver) Run(_ context.Context, t Turn) (string, error) {
	fail := d.fail[0]
	d.fail = d.fail[1:]
	if err := t.stage(StageSubmitted); err != nil {
		return "", err
	}
	if fail {
		return "", fmt.Errorf("%w: killed", ErrExecFailed)
	}
	if t.OnSession != nil {
		t.OnSession("s-" + t.Prompt)
	}
	return "ok", nil
}

// A tool that cannot fork keeps a failed attempt's prompt in its
// session: the next turn continuing it says so; one that forks does not.
func TestUnansweredAttemptIsNoted(t *testing.T) {
	for _, forks := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "Agent-1.json")
		d := Remember(&scriptedDriver{fail: []bool{false, true, false, false}},
			Memory{Agent: "Agent-1", Path: path, Kind: "gemini", Forks: forks})
		var notes []string
		run := func(prompt string) {
			d.Run(context.Background(), Turn{Prompt: prompt, OnNote: func(n string) { notes = append(notes, prompt+": "+n) }})
		}
		for _, p := range []string{"a", "b", "b", "c"} {
			run(p)
		}
		want := 0
		if !forks {
			want = 1
		}
		if len(notes) != want || (want == 1 && !strings.HasPrefix(notes[0], "b: the session continued holds 1 earlier attempt")) {
			t.Errorf("forks %v: notes %q, want %d on the retry of b", forks, notes, want)
		}
	}
}
