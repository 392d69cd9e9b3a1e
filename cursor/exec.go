package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
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
	// dir, env, modelArgs and permissionArgs are ExecSettings'.
	dir            string
	env            []string
	modelArgs      []string
	permissionArgs []string
	// resultGrace is how long a command may run on once its output holds
	// the turn's result.
	resultGrace time.Duration
	// starter sets up each turn's command: through the seat's host on
	// Linux (exec_host_linux.go), which it keeps between turns.
	starter commandStarter
}

// defaultResultGrace lets a command that printed its result flush and
// exit on its own before it is ended.
const defaultResultGrace = 5 * time.Second

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
		dir: s.Dir, env: s.Env, modelArgs: s.ModelArgs, permissionArgs: s.PermissionArgs,
		resultGrace: defaultResultGrace, starter: newStarter(clock.Or(s.Clock))}, nil
}

// stderrKept bounds how much of the command's stderr an error quotes.
const stderrKept = 2048

// maxOutput bounds a plain command's stdout, its reply, all of which is
// kept in memory and in the receipt: far past any reply, short of a runner
// brought down by a command that prints without end. A preset's stream is
// read whole, line by line, with only this much of it kept.
var maxOutput int64 = 32 << 20

// errPastCap: a preset's output went past maxOutput.
var errPastCap = errors.New("past the output cap")

// cappedOutput passes on at most max bytes of a command's stdout; past
// that it drops the rest and calls over once, which stops the command.
type cappedOutput struct {
	w    io.Writer
	left int64
	over func()
	once sync.Once
	cut  atomic.Bool
}

func (c *cappedOutput) Write(p []byte) (int, error) {
	n := len(p)
	if int64(n) > c.left {
		p = p[:c.left]
		c.cut.Store(true)
		c.once.Do(c.over)
	}
	c.left -= int64(len(p))
	if len(p) > 0 {
		if _, err := c.w.Write(p); err != nil {
			return 0, err
		}
	}
	return n, nil
}

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
	program, err := findProgram(e.preset, args[0])
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecFailed, err)
	}
	args[0] = program
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	var env []string
	if len(e.env) > 0 {
		// Later entries win, so the seat's own come last.
		env = append(os.Environ(), e.env...)
	}
	var tc turnCommand
	var lines *lineReader
	var stdout bytes.Buffer
	capped := &cappedOutput{w: &stdout, left: maxOutput, over: func() { tc.kill() }}
	cio := commandIO{stdout: capped, stderr: &tailBuffer{max: stderrKept}}
	stderr := cio.stderr.(*tailBuffer)
	if viaStdin {
		cio.stdin = strings.NewReader(t.Prompt)
	}
	if e.preset != "" {
		lines = newLineReader(newOutputReader(e.preset, e.replyField, e.sessionField))
		cio.stdout = lines
	}
	tc, err = e.starter.setUp(ctx, args, e.dir, env, cio)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrExecFailed, err)
	}

	// On Linux a command os/exec starts here dies with the thread that
	// starts it (see setParentDeathSignal), and Go ends a thread when a
	// goroutine locked to it returns without unlocking. Left unlocked, this
	// thread could serve such a goroutine later and kill a healthy command.
	// Locked from start until the command is reaped, it serves only this
	// goroutine, which unlocks before it returns: the thread outlives the
	// command unless this whole process ends first. (A command the seat's
	// host starts dies with the host's thread instead.)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := tc.start(); err != nil {
		// A turn whose time ran out while its command was being started
		// (a host slow to answer on a loaded machine) timed out, whatever
		// the start then said. The wait for the host ends on the same
		// deadline as ctx, whose own timer may not have run yet.
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			<-ctx.Done()
		}
		if cerr := e.stopped(ctx, args[0], stderr); cerr != nil {
			return "", cerr
		}
		return "", err
	}
	abandon := func(err error) (string, error) {
		tc.kill()
		tc.wait()
		return "", err
	}
	if t.OnStart != nil {
		child := tc.child()
		if child.StartTime == 0 {
			// Started here, the command is not reaped yet, so its pid is
			// still its own (a host reads it itself, before it can reap
			// it); a start time the system cannot tell stays 0, and
			// EndChild then refuses to trust the pid alone.
			child.StartTime, _ = process.StartTime(child.PID)
		}
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
	err = e.wait(tc, lines)
	// Grandchildren may outlive the command; a turn leaves nothing behind.
	tc.kill()
	if capped.cut.Load() {
		// Read as output that cannot be used: dead-lettered, not run again.
		cut := fmt.Errorf("%w: %s printed more than %d bytes on stdout, and was stopped there", ErrBadOutput, args[0], maxOutput)
		return "", withOutput(classified(cut, nil, nil), e.keepDir, stdout.Bytes())
	}
	if lines == nil {
		return e.plainReply(ctx, t, args[0], err, stdout.Bytes(), stderr)
	}
	r, out, rerr := lines.finish()
	if r.hasUsage && t.OnUsage != nil {
		t.OnUsage(r.usage)
	}
	// A result read in full is the turn's, whatever became of the command
	// after printing it (killed once it lingered, or garbage that followed).
	if rerr == nil && r.done && r.failed == "" {
		if err != nil {
			t.note("%s printed its result, then %s; the result was taken", args[0], exitWords(err))
		}
		if r.session != "" && t.OnSession != nil {
			t.OnSession(r.session)
		}
		if err := t.stage(StageReplied); err != nil {
			return "", err
		}
		return r.reply, nil
	}
	if cerr := e.stopped(ctx, args[0], stderr); cerr != nil {
		return "", withOutput(timedOut(cerr, out, stderr.buf), e.keepDir, out)
	}
	var failed error
	switch {
	case errors.Is(rerr, errPastCap):
		// Whatever became of the command (ended once it had said too
		// much): its output is what cannot be used.
		failed = fmt.Errorf("%w: %s (preset %s): %v%s", ErrBadOutput, args[0], e.preset, rerr, stderr.quote())
	case rerr == nil && r.apiFailed:
		failed = fmt.Errorf("%w: %w: %s: %s%s", ErrExecFailed, ErrModelAPI, args[0], r.failed, stderr.quote())
	case rerr == nil:
		failed = fmt.Errorf("%w: %s: %s%s", ErrExecFailed, args[0], r.failed, stderr.quote())
	case err != nil:
		failed = fmt.Errorf("%w: %s: %v%s", ErrExecFailed, args[0], err, stderr.quote())
	default:
		failed = fmt.Errorf("%w: %s (preset %s): %v%s", ErrBadOutput, args[0], e.preset, rerr, stderr.quote())
	}
	// The runner retries by the failure's kind (a rate limit, an outage,
	// bad credentials), read from what the tool printed.
	return "", withOutput(classified(failed, out, stderr.buf), e.keepDir, out)
}

// wait waits for the command to end, or, once its output holds the
// turn's result, gives it resultGrace to end by itself and then ends it:
// a tool that lingers after its answer (a hung telemetry flush, a child
// holding the terminal) does not hold the turn.
func (e *Exec) wait(tc turnCommand, lines *lineReader) error {
	done := make(chan error, 1)
	go func() { done <- tc.wait() }()
	var result chan struct{}
	if lines != nil {
		result = lines.result
	}
	select {
	case err := <-done:
		return err
	case <-result:
	}
	grace := time.NewTimer(e.resultGrace)
	defer grace.Stop()
	select {
	case err := <-done:
		return err
	case <-grace.C:
		tc.kill()
		return <-done
	}
}

// stopped is the error of a turn whose context ended, or nil.
func (e *Exec) stopped(ctx context.Context, name string, stderr *tailBuffer) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w after %s: %s%s", ErrExecTimeout, e.timeout, name, stderr.quote())
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %s stopped: %w", ErrExecFailed, name, ctx.Err())
	}
	return nil
}

// plainReply is a plain command's turn: its stdout, exactly, if it
// succeeded.
func (e *Exec) plainReply(ctx context.Context, t Turn, name string, err error, out []byte, stderr *tailBuffer) (string, error) {
	if cerr := e.stopped(ctx, name, stderr); cerr != nil {
		return "", withOutput(plainFailure(timedOut(cerr, out, stderr.buf), out, stderr.buf), e.keepDir, out)
	}
	if err != nil {
		return "", withOutput(plainFailure(classified(fmt.Errorf("%w: %s: %v%s", ErrExecFailed, name, err, stderr.quote()), out, stderr.buf), out, stderr.buf), e.keepDir, out)
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return string(out), nil
}

// exitWords says how a command that printed its result ended.
func exitWords(err error) string {
	var ee interface{ Exited() bool }
	if errors.As(err, &ee) && !ee.Exited() {
		return "was ended after lingering"
	}
	return "ended with " + err.Error()
}

// args substitutes the prompt into the command and adds the arguments
// that give the program its model, its permissions and the session it
// continues, where the program's own options go: before a last argument
// that carries the prompt, or else at the end (the prompt then goes to
// stdin). The session's arguments come last, so that a subcommand such as
// Codex's "fork ID" follows the options. viaStdin is true when no
// argument asked for the prompt.
func (e *Exec) args(t Turn) (args []string, viaStdin bool) {
	viaStdin = true
	args = make([]string, 0, len(e.command)+len(e.resume)+len(e.modelArgs)+len(e.permissionArgs))
	for _, a := range e.command {
		if strings.Contains(a, PromptPlaceholder) {
			a = strings.ReplaceAll(a, PromptPlaceholder, t.Prompt)
			viaStdin = false
		}
		args = append(args, a)
	}
	extra := slices.Concat(e.modelArgs, e.permissionArgs)
	if e.preset != "" && t.Session != "" && !t.NewChat {
		extra = append(extra, substituteSession(e.resume, t.Session)...)
	}
	if len(extra) == 0 {
		return args, viaStdin
	}
	at := len(args)
	if last := e.command[len(e.command)-1]; len(e.command) > 1 && strings.Contains(last, PromptPlaceholder) {
		at--
	}
	return slices.Insert(args, at, extra...), viaStdin
}

// programNames are the names a preset's program is installed under, in
// the order they are looked for: Cursor's CLI is installed as both
// cursor-agent and agent, or, by newer installers, as agent alone. The
// specific name goes first, as a program merely called agent may be
// another's.
var programNames = map[string][]string{"cursor-agent": {"cursor-agent", "agent"}}

// findProgram returns the program to start: name, or, when name is the
// preset's own program and is not on PATH, the first of its other names
// that is.
func findProgram(preset, name string) (string, error) {
	names := programNames[preset]
	if len(names) == 0 || name != names[0] {
		return name, nil
	}
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("neither %s is on PATH (Cursor's CLI installs them; exec.command may name the program's path)", strings.Join(names, " nor "))
}

// ProgramPath is where a seat's program is found on PATH, by the names a
// turn looks for (findProgram), for a check before any turn runs.
func ProgramPath(preset, name string) (string, error) {
	n, err := findProgram(preset, name)
	if err != nil {
		return "", err
	}
	return exec.LookPath(n)
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
