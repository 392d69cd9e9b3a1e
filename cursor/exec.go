package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/process"
)

// Exec is the driver for headless agents: each turn runs the configured
// command once.
type Exec struct {
	command []string
	timeout time.Duration
	// preset, when set, names the command-line agent whose JSON output is
	// read (preset.go) and whose session is continued with resume.
	preset       string
	resume       []string
	replyField   string
	sessionField string
	// keepDir is where the output of a turn that gave no reply is kept;
	// empty: errors quote its start.
	keepDir string
	// dir, env and modelArgs are ExecSettings'.
	dir       string
	env       []string
	modelArgs []string
}

// NewExec checks the settings and returns the driver.
func NewExec(s ExecSettings) (*Exec, error) {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return nil, fmt.Errorf("exec driver: no command configured")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	return &Exec{command: s.Command, timeout: timeout,
		preset: s.Preset, resume: s.Resume, replyField: s.ReplyField, sessionField: s.SessionField,
		dir: s.Dir, env: s.Env, modelArgs: s.ModelArgs}, nil
}

// stderrKept bounds how much of the command's stderr an error quotes.
const stderrKept = 2048

// waitAfterKill bounds how long Run waits for pipes held open by grandchildren
// once the process group has been killed.
const waitAfterKill = 2 * time.Second

// Run runs the command with the prompt and returns its stdout exactly, or,
// with a preset, the reply its JSON holds. A preset's turn continues
// t.Session unless t.NewChat, and reports the session the command names
// to t.OnSession.
func (e *Exec) Run(ctx context.Context, t Turn) (string, error) {
	if t.Resume {
		return "", fmt.Errorf("%w: the exec driver's process ended with the one that started it", ErrReplyLost)
	}
	args, viaStdin := e.args(t)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	cmd, err := command(ctx, args)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrExecFailed, err)
	}
	cmd.Dir = e.dir
	if len(e.env) > 0 {
		// Later entries win in exec.Cmd, so the seat's own come last.
		cmd.Env = append(os.Environ(), e.env...)
	}
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = waitAfterKill
	if viaStdin {
		cmd.Stdin = strings.NewReader(t.Prompt)
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: stderrKept}
	cmd.Stdout, cmd.Stderr = &stdout, stderr

	// On Linux the command dies with the thread that starts it (see
	// setParentDeathSignal), and Go ends a thread when a goroutine locked
	// to it returns without unlocking. Left unlocked, this thread could
	// serve such a goroutine later and kill a healthy command. Locked from
	// Start until the command is reaped, it serves only this goroutine,
	// which unlocks before it returns: the thread outlives the command
	// unless this whole process ends first.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("%w: cannot start %s: %v", ErrExecFailed, args[0], err)
	}
	abandon := func(err error) (string, error) {
		killProcessGroup(cmd)
		cmd.Wait()
		return "", err
	}
	if err := afterStart(cmd); err != nil {
		return abandon(fmt.Errorf("%w: %s: %v", ErrExecFailed, args[0], err))
	}
	if t.OnStart != nil {
		child := Child{PID: cmd.Process.Pid, PGID: processGroupOf(cmd)}
		// The command is not reaped yet, so its pid is still its own; a
		// start time the system cannot tell stays 0, and EndChild then
		// refuses to trust the pid alone.
		child.StartTime, _ = process.StartTime(child.PID)
		if err := t.OnStart(child); err != nil {
			return abandon(fmt.Errorf("turn stopped after %s started: %w", args[0], err))
		}
	}
	// Once started, the command has the prompt: report both stages so a
	// crash from here on is never answered by running it twice.
	for _, s := range []Stage{StageInjected, StageSubmitted} {
		if err := t.stage(s); err != nil {
			return abandon(err)
		}
	}
	err = cmd.Wait()
	// Grandchildren may outlive the command; a turn leaves nothing behind.
	killProcessGroup(cmd)
	out := stdout.Bytes()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", withOutput(fmt.Errorf("%w after %s: %s%s", ErrExecTimeout, e.timeout, args[0], stderr.quote()), e.keepDir, out)
	case ctx.Err() != nil:
		return "", withOutput(fmt.Errorf("%w: %s stopped: %w", ErrExecFailed, args[0], ctx.Err()), e.keepDir, out)
	case err != nil:
		said := ""
		if r, rerr := e.read(out); rerr == nil && r.failed != "" {
			said = "; " + r.failed
		}
		return "", withOutput(classified(fmt.Errorf("%w: %s: %v%s%s", ErrExecFailed, args[0], err, said, stderr.quote()), out, stderr.buf), e.keepDir, out)
	}
	reply := stdout.String()
	if e.preset != "" {
		r, err := e.read(out)
		switch {
		case err != nil:
			return "", withOutput(classified(fmt.Errorf("%w: %s (preset %s): %v%s", ErrBadOutput, args[0], e.preset, err, stderr.quote()), out, stderr.buf), e.keepDir, out)
		case r.failed != "":
			return "", withOutput(classified(fmt.Errorf("%w: %s: %s%s", ErrExecFailed, args[0], r.failed, stderr.quote()), out, stderr.buf), e.keepDir, out)
		}
		if r.session != "" && t.OnSession != nil {
			t.OnSession(r.session)
		}
		reply = r.reply
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// read reads a preset's output.
func (e *Exec) read(out []byte) (agentOutput, error) {
	if e.preset == "" {
		return agentOutput{}, errors.New("no preset")
	}
	return readOutput(out, e.replyField, e.sessionField)
}

// args substitutes the prompt into the command, and puts the arguments
// that continue the turn's session right after the program's name, ahead
// of any prompt argument; viaStdin is true when no argument asked for the
// prompt.
func (e *Exec) args(t Turn) (args []string, viaStdin bool) {
	viaStdin = true
	args = make([]string, 0, len(e.command)+len(e.resume))
	for _, a := range e.command {
		if strings.Contains(a, PromptPlaceholder) {
			a = strings.ReplaceAll(a, PromptPlaceholder, t.Prompt)
			viaStdin = false
		}
		args = append(args, a)
	}
	extra := e.modelArgs
	if e.preset != "" && t.Session != "" && !t.NewChat {
		extra = append(substituteSession(e.resume, t.Session), extra...)
	}
	if len(extra) > 0 {
		args = append(args[:1], append(slices.Clone(extra), args[1:]...)...)
	}
	return args, viaStdin
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
	cut bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

func (b *tailBuffer) quote() string {
	s := strings.TrimSpace(string(b.buf))
	if s == "" {
		return ""
	}
	if b.cut {
		s = "…" + s
	}
	return "; stderr: " + s
}
