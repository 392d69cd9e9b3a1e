//go:build !windows

package cursor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The model's, the permissions' and the session's arguments go where the
// program's own options go, never between an interpreter and its script.
func TestExecArgsFollowTheProgramsOptions(t *testing.T) {
	tests := []struct {
		name    string
		s       ExecSettings
		session string
		want    string
	}{
		{"interpreter with the prompt last", ExecSettings{Preset: "claude", Command: []string{"node", "cli.js", "-p", "{prompt}"},
			Resume: []string{"--resume", "{session}"}, ModelArgs: []string{"--model", "m1"}}, "S", "node cli.js -p --model m1 --resume S P"},
		{"prompt on stdin", ExecSettings{Preset: "claude", Command: []string{"claude", "-p"},
			Resume: []string{"--resume", "{session}", "--fork-session"}, PermissionArgs: []string{"--dangerously-skip-permissions"}}, "S",
			"claude -p --dangerously-skip-permissions --resume S --fork-session"},
		{"codex forks with a subcommand after its options", ExecSettings{Preset: "codex", Command: []string{"codex", "exec", "--json", "{prompt}"},
			Resume: []string{"fork", "{session}"}, ModelArgs: []string{"-m", "gpt-5"}}, "T", "codex exec --json -m gpt-5 fork T P"},
		{"gemini's prompt in an option", ExecSettings{Preset: "gemini", Command: []string{"gemini", "--prompt={prompt}"},
			Resume: []string{"--resume", "{session}"}}, "G", "gemini --resume G --prompt=P"},
		{"a new session has no resume", ExecSettings{Preset: "codex", Command: []string{"codex", "exec", "{prompt}"},
			Resume: []string{"fork", "{session}"}, ModelArgs: []string{"-m", "x"}}, "", "codex exec -m x P"},
		{"a lone program", ExecSettings{Command: []string{"agent"}, ModelArgs: []string{"-m", "x"}}, "", "agent -m x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewExec(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			args, _ := e.args(Turn{Prompt: "P", Session: tt.session})
			if got := strings.Join(args, " "); got != tt.want {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
		})
	}
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A command that printed its result line and then lingers (a child
// holding stdout, a hung flush) does not hold the turn: it is ended after
// the grace, and its result is the reply.
func TestExecResultLineEndsALingeringCommand(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := writeScript(t, dir, "claude", `cat >/dev/null
printf '%s\n' '{"type":"system","subtype":"init","session_id":"s2"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"the reply\n","session_id":"s2","usage":{"input_tokens":3,"output_tokens":2},"total_cost_usd":0.5}'
sleep `+outlasting+` &
echo $! > `+pidFile+`
wait
`)
	d, err := NewExec(ExecSettings{Preset: "claude", Command: []string{script}, Resume: []string{"--resume", "{session}"},
		ReplyField: "result", SessionField: "session_id", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	d.resultGrace = 50 * time.Millisecond
	var session string
	var usage Usage
	var notes []string
	reply, err := d.Run(context.Background(), Turn{Prompt: "x",
		OnSession: func(id string) { session = id }, OnUsage: func(u Usage) { usage = u },
		OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if reply != "the reply\n" || session != "s2" {
		t.Errorf("reply %q, session %q", reply, session)
	}
	if usage.InputTokens != 3 || usage.OutputTokens != 2 || usage.CostUSD != 0.5 {
		t.Errorf("usage = %+v", usage)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ended after lingering") {
		t.Errorf("notes = %q, want one saying the command was ended", notes)
	}
	assertGone(t, pidFile)
}

// Claude Code reports a failed model API as a result with subtype
// "success" and is_error: the error names the API, never "(success)",
// and does not send the user to --new-session, which would not help.
func TestExecModelAPIErrorIsWordedAsOne(t *testing.T) {
	dir := t.TempDir()
	out, err := os.ReadFile(filepath.Join("testdata", "agentout", "claude-failed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, dir, "claude", "cat >/dev/null; cat "+filepath.Join(dir, "out")+"; exit 1\n")
	d, err := NewExec(ExecSettings{Preset: "claude", Command: []string{script}, Resume: []string{"--resume", "{session}"},
		ReplyField: "result", SessionField: "session_id"})
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessions, "Agent-1.json"), []byte(`{"session_id":"s0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Remember(d, Memory{Path: filepath.Join(sessions, "Agent-1.json"), Agent: "Agent-1", Kind: "claude"})
	_, err = r.Run(context.Background(), Turn{Prompt: "x"})
	if !errors.Is(err, ErrModelAPI) || !errors.Is(err, ErrExecFailed) {
		t.Fatalf("err = %v, want ErrModelAPI and ErrExecFailed", err)
	}
	for _, bad := range []string{"(success)", "--new-session"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the error says %s: %v", bad, err)
		}
	}
	if !strings.Contains(err.Error(), "HTTP 529") {
		t.Errorf("the error lacks the API's status: %v", err)
	}
}

// Cursor's CLI is found as cursor-agent or, by newer installers, agent;
// with neither, the error names both.
func TestExecFindsCursorsCLIByEitherName(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "agent", `echo '{"type":"result","result":"from agent","session_id":"c1"}'`+"\n")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+"/usr/bin:/bin")
	d, err := NewExec(ExecSettings{Preset: "cursor-agent", Command: []string{"cursor-agent", "-p", "{prompt}"},
		Resume: []string{"--resume", "{session}"}, ReplyField: "result", SessionField: "session_id"})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := d.Run(context.Background(), Turn{Prompt: "x"}); err != nil || reply != "from agent" {
		t.Fatalf("reply %q, %v; want agent's", reply, err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = d.Run(context.Background(), Turn{Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), "neither cursor-agent nor agent is on PATH") {
		t.Fatalf("err = %v, want one naming both names", err)
	}
}
