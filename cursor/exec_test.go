package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// awkwardText has what replies contain and naive code mangles.
const awkwardText = "héllo 😀 wörld\n\tindented\r\nCRLF line\n```go\nfunc main() {}\n```\ntrailing spaces   \n"

func TestExecReplyIsStdoutExactly(t *testing.T) {
	for name, command := range map[string][]string{
		"stdin":    {"cat"},
		"argument": {"printf", "%s", "{prompt}"},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := NewExec(ExecSettings{Command: command})
			if err != nil {
				t.Fatal(err)
			}
			var stages []Stage
			reply, err := d.Run(context.Background(), Turn{Prompt: awkwardText, OnStage: func(s Stage) error {
				stages = append(stages, s)
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if reply != awkwardText {
				t.Errorf("reply = %q, want %q", reply, awkwardText)
			}
			if got := stagesString(stages); got != "injected submitted replied" {
				t.Errorf("stages = %s", got)
			}
		})
	}
}

func stagesString(s []Stage) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, string(x))
	}
	return strings.Join(parts, " ")
}

func TestExecFailureKeepsStderr(t *testing.T) {
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo partial; echo 'model overloaded' >&2; exit 3"}})
	_, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "model overloaded") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v, want ErrExecFailed with the exit status and stderr", err)
	}
}

func TestExecMissingCommand(t *testing.T) {
	d, _ := NewExec(ExecSettings{Command: []string{"/nonexistent/agent"}})
	if _, err := d.Run(context.Background(), Turn{Prompt: "x"}); !errors.Is(err, ErrExecFailed) {
		t.Fatalf("err = %v, want ErrExecFailed", err)
	}
}

// The command starts a grandchild that would outlive it; a timeout must end
// both.
func TestExecTimeoutKillsProcessTree(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := "sleep " + outlasting + " & echo $! > " + pidFile + "; echo started >&2; wait"
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", script}, Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := d.Run(context.Background(), Turn{Prompt: "x"})
	// The timeout's timing is what is under test: a minute, far past the
	// 300 ms asked and far short of the default ten.
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Errorf("Run returned after %s: the timeout asked for was not kept", elapsed)
	}
	if !errors.Is(err, ErrExecTimeout) {
		t.Fatalf("err = %v, want ErrExecTimeout", err)
	}
	if !strings.Contains(err.Error(), "started") {
		t.Errorf("error lacks the stderr: %v", err)
	}
	assertGone(t, pidFile)
}

// A tool that cannot reach its API and retries until it is killed (Codex
// "waiting for network") times out as an outage, which the runner waits
// out without spending an attempt; a timeout that says nothing of the API
// stays a plain timeout.
func TestExecTimeoutWhileTheAPIIsUnreachableIsAnOutage(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         FailureKind
	}{
		{"unreachable", "echo 'stream error: error sending request for url (http://127.0.0.1:9/v1/responses): connection refused; retrying' >&2; echo 'waiting for network' >&2; sleep 60", FailureOutage},
		{"slow", "echo 'thinking hard' >&2; sleep 60", FailureOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", c.script}, Timeout: 300 * time.Millisecond})
			_, err := d.Run(context.Background(), Turn{Prompt: "x"})
			if !errors.Is(err, ErrExecTimeout) {
				t.Fatalf("err = %v, want ErrExecTimeout", err)
			}
			if got := FailureOf(err).Kind; got != c.want {
				t.Fatalf("timed out turn classified %v, want %v (err %v)", got, c.want, err)
			}
		})
	}
}

func TestExecCancelKillsProcessTree(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "sleep " + outlasting + " & echo $! > " + pidFile + "; wait"}})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := d.Run(ctx, Turn{Prompt: "x", OnStage: func(s Stage) error {
		if s == StageSubmitted {
			go func() {
				waitForFile(t, pidFile)
				cancel()
			}()
		}
		return nil
	}})
	if !errors.Is(err, ErrExecFailed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrExecFailed and context.Canceled", err)
	}
	assertGone(t, pidFile)
}

func TestExecResumeRefuses(t *testing.T) {
	d, _ := NewExec(ExecSettings{Command: []string{"cat"}})
	if _, err := d.Run(context.Background(), Turn{Prompt: "x", Resume: true}); !errors.Is(err, ErrReplyLost) {
		t.Fatalf("err = %v, want ErrReplyLost", err)
	}
}

func TestExecStageErrorStopsTheCommand(t *testing.T) {
	// A Run that waited for the command would hang the test until -timeout.
	d, _ := NewExec(ExecSettings{Command: []string{"sleep", outlasting}})
	boom := errors.New("cannot record")
	_, err := d.Run(context.Background(), Turn{Prompt: "x", OnStage: func(Stage) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
}

// outlasting is how many seconds the processes sleep that a turn must end
// (a day): longer than any test binary's -timeout, so that one the driver
// fails to end hangs its test rather than ends of itself and passes it.
const outlasting = "86400"

func waitForFile(t *testing.T, path string) {
	t.Helper()
	poll.Until(t, path+" to be written", func() bool {
		b, err := os.ReadFile(path)
		return err == nil && len(b) > 0 && b[len(b)-1] == '\n'
	})
}

// assertGone waits until the pid in pidFile is neither running nor a
// zombie waiting to be reaped (the kill is immediate; reaping by init is
// not). The process sleeps for outlasting: one never ended hangs the test.
func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	waitForFile(t, pidFile)
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("bad pid file: %q", b)
	}
	// Should the test fail, the grandchild must not sleep on for a day.
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	})
	poll.Until(t, fmt.Sprintf("grandchild %d to end with its turn", pid), func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(stat), ") Z ")
	})
}

// A plain command that prints without end is stopped once its stdout, its
// reply, passes the cap, and its turn fails as output that cannot be used.
// A preset's stream is read whole however long it runs, only its head
// kept: past the cap, the turn's result line is still read, and a stream
// that never gives one fails as unreadable.
func TestExecOutputPastTheCap(t *testing.T) {
	was := maxOutput
	maxOutput = 1 << 16
	t.Cleanup(func() { maxOutput = was })
	claude := func(script string) ExecSettings {
		return ExecSettings{Command: []string{"sh", "-c", "cat >/dev/null; " + script}, Preset: "claude", ReplyField: "result", SessionField: "session_id"}
	}
	events := `yes '{"type":"assistant","message":{"content":[]}}' | head -n 25000; `
	for _, c := range []struct {
		name  string
		s     ExecSettings
		reply string
		err   string
	}{
		{"plain", ExecSettings{Command: []string{"sh", "-c", "cat >/dev/null; yes"}}, "", "printed more than 65536 bytes on stdout, and was stopped there"},
		{"preset with its result", claude(events + `echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}'`), "done", ""},
		{"preset without one", claude(events), "", "printed more than 65536 bytes without a line that ends the turn"},
		{"a reply streamed past the cap", ExecSettings{Command: []string{"sh", "-c", `cat >/dev/null; yes '{"type":"message","role":"assistant","content":"0123456789","delta":true}' | head -n 20000; echo '{"type":"result","status":"success"}'`}, Preset: "gemini"},
			"", "its reply passed 65536 bytes"},
		{"a reply streamed without end", ExecSettings{Command: []string{"sh", "-c", `cat >/dev/null; yes '{"type":"message","role":"assistant","content":"0123456789","delta":true}'`}, Preset: "gemini"},
			"", "its reply passed 65536 bytes"},
	} {
		d, err := NewExec(c.s)
		if err != nil {
			t.Fatal(err)
		}
		reply, err := d.Run(context.Background(), Turn{Prompt: "x"})
		switch {
		case c.err == "" && (err != nil || reply != c.reply):
			t.Errorf("%s: %q, %v; want %q", c.name, reply, err, c.reply)
		case c.err != "" && (!errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), c.err) || FailureOf(err).Kind != FailureBadOutput):
			t.Errorf("%s: err = %v (%v); want unreadable output, %q", c.name, err, FailureOf(err).Kind, c.err)
		}
	}
}

// Past the send key, only an error that is ErrNotSubmitted alone proves
// the prompt unsent: one that is ErrSubmitUnknown too (a second press that
// failed after a first that may have gone) is not proof, and a retry then
// would paste the prompt again.
func TestProvenUnsent(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: the input box still holds the prompt", ErrNotSubmitted), true},
		{fmt.Errorf("%w: nothing changed", ErrSubmitUnknown), false},
		{fmt.Errorf("%w: the second press failed: %w", ErrSubmitUnknown, ErrNotSubmitted), false},
		{ErrNoReply, false},
	} {
		if got := ProvenUnsent(c.err); got != c.want {
			t.Errorf("ProvenUnsent(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
