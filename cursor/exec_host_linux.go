package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentctl/agentctl/internal/childthread"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/execguard"
)

// A seat's turns go to its host (execguard.Host): the guard program
// started once and kept while turns come, instead of a guard started for
// every turn, whose start cost more than the rest of the turn's handling.
// The host does what the guard does (its own group, the child subreaper
// of the command, everything below it ended with the command, and with
// the runner, which it hears die by its socket and its parent-death
// signal), for one turn at a time. A driver keeps a host for each of its
// turns under way, and closes one that no turn has used for hostIdle.
var hostIdle = time.Minute

// newStarter keeps a driver's hosts, each idle one for hostIdle on clk.
func newStarter(clk clock.Clock) commandStarter { return &execHosts{clock: clk} }

// setUp is the turn's command, handed to a host where there is a guard
// program, or else started by os/exec (a program not found is reported by
// os/exec as it always was).
func (hs *execHosts) setUp(ctx context.Context, args []string, dir string, env []string, cio commandIO) (turnCommand, error) {
	if guardExe == "" {
		return newExecCommand(ctx, args, dir, env, cio)
	}
	path := args[0]
	if !strings.ContainsRune(path, filepath.Separator) {
		found, err := exec.LookPath(path)
		if err != nil {
			return newExecCommand(ctx, args, dir, env, cio)
		}
		path = found
	}
	// The environment os/exec would give it: this process's or env, the
	// later of two entries kept, PWD set to dir.
	like := exec.Command(path)
	like.Dir, like.Env = dir, env
	return &hostedCommand{ctx: ctx, hosts: hs, name: args[0], cio: cio,
		req: execguard.Start{Path: []byte(path), Argv: bytesOf(args), Env: bytesOf(like.Environ()), Dir: []byte(dir)}}, nil
}

// bytesOf is strings as the bytes a request carries.
func bytesOf(s []string) [][]byte {
	b := make([][]byte, len(s))
	for i, v := range s {
		b[i] = []byte(v)
	}
	return b
}

// execHosts are one driver's hosts that no turn uses now.
type execHosts struct {
	clock clock.Clock
	mu    sync.Mutex
	idle  []*execHost
}

// take is an idle host, or a new one.
func (hs *execHosts) take() (h *execHost, fresh bool, err error) {
	hs.mu.Lock()
	for len(hs.idle) > 0 {
		h = hs.idle[len(hs.idle)-1]
		hs.idle = hs.idle[:len(hs.idle)-1]
		// Taken: its idle spell is over.
		close(h.idleOver)
		h.given++
		if h.alive() {
			hs.mu.Unlock()
			return h, false, nil
		}
		h.close()
	}
	hs.mu.Unlock()
	h, err = startHost()
	return h, true, err
}

// give keeps h for the next turn, and closes it once it has been idle for
// hostIdle since.
func (hs *execHosts) give(h *execHost) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.idle = append(hs.idle, h)
	h.given++
	given, over, due := h.given, make(chan struct{}), clock.After(hs.clock, hostIdle)
	h.idleOver = over
	go func() {
		select {
		case <-over:
			return
		case <-due:
		}
		hs.mu.Lock()
		i := slices.Index(hs.idle, h)
		idle := i >= 0 && h.given == given
		if idle {
			hs.idle = slices.Delete(hs.idle, i, i+1)
		}
		hs.mu.Unlock()
		if idle {
			h.close()
		}
	}()
}

// execHost is one host process and the socket to it.
type execHost struct {
	conn *net.UnixConn
	proc *os.Process
	// gone is closed once the host is reaped.
	gone chan struct{}
	// sending keeps a request whole: a kill may come while a turn starts.
	sending sync.Mutex
	// idleOver ends the host's idle spell when a turn takes it; given
	// counts its hand-overs, so the end of an earlier spell does nothing
	// (both under execHosts.mu).
	idleOver chan struct{}
	given    int
}

// startHost starts a host. It dies with the thread that starts it (its
// parent-death signal), which childthread keeps until the host is reaped.
func startHost() (*execHost, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot make the exec host's socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "exec host"), os.NewFile(uintptr(fds[1]), "runner")
	defer theirs.Close()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot make the exec host's socket: %w", err)
	}
	cmd := exec.Command(guardProgram(), execguard.HostArg, strconv.Itoa(os.Getpid()))
	if guardName != "" {
		cmd.Args[0] = guardName
	}
	cmd.ExtraFiles = []*os.File{theirs} // execguard.HostSocket
	cmd.Stderr = os.Stderr
	// Its own group: a Ctrl+C at the runner's terminal is the runner's to
	// handle, which ends the turn through the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: guardParentDeathSignal}
	h := &execHost{conn: conn.(*net.UnixConn), gone: make(chan struct{})}
	err = childthread.Start(cmd, nil, func() {
		cmd.Wait()
		close(h.gone)
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cannot start the exec host: %w", err)
	}
	h.proc = cmd.Process
	return h, nil
}

func (h *execHost) alive() bool {
	select {
	case <-h.gone:
		return false
	default:
		return true
	}
}

// send writes one request, with files passed beside it.
func (h *execHost) send(r execguard.Request, files ...*os.File) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	h.sending.Lock()
	defer h.sending.Unlock()
	header := execguard.FrameHeader(len(body))
	if _, _, err := h.conn.WriteMsgUnix(header, syscall.UnixRights(fds...), nil); err != nil {
		return fmt.Errorf("cannot ask the exec host: %w", err)
	}
	if _, err := h.conn.Write(body); err != nil {
		return fmt.Errorf("cannot ask the exec host: %w", err)
	}
	return nil
}

// receive reads one reply.
func (h *execHost) receive() (execguard.Reply, error) {
	var r execguard.Reply
	header := make([]byte, 4)
	if _, err := io.ReadFull(h.conn, header); err != nil {
		return r, unanswered(err)
	}
	n, err := execguard.FrameLength(header)
	if err != nil {
		return r, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(h.conn, body); err != nil {
		return r, unanswered(err)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("the exec host said what is no reply: %w", err)
	}
	return r, nil
}

// unanswered is the error of a reply that did not come: the host ended,
// or the wait for it ran out (hostAnswer, or the turn's own time).
func unanswered(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("the exec host did not answer in time: %w", err)
	}
	return fmt.Errorf("the exec host ended: %w", err)
}

// close ends the host: it hears its socket end, ends what is below it,
// and exits.
func (h *execHost) close() { h.conn.Close() }

// stop ends a host that no longer answers.
func (h *execHost) stop() {
	h.conn.Close()
	if h.proc != nil && h.alive() {
		h.proc.Kill()
	}
}

// hostedCommand is a turn's command started by the seat's host.
type hostedCommand struct {
	ctx   context.Context
	hosts *execHosts
	name  string
	req   execguard.Start
	cio   commandIO
	// prompt is cio.stdin read once, so that a second host can be given
	// it whole.
	prompt []byte

	h         *execHost
	pid       int
	startTime uint64
	// ended has the host's word of how the command ended, or why none
	// will come.
	ended chan hostEnd
	// copies are the goroutines that feed the command's stdin and read
	// its stdout and stderr; pipes are our ends of those pipes, closed
	// when the command is over.
	copies sync.WaitGroup
	pipes  []*os.File

	// mu orders kill against the turn's start and end: a kill before the
	// host said the command started is kept for then (killPending), and
	// the host goes back to the pool only after a kill under way has
	// been sent (over), so no sweep of this turn reaches the next one's.
	mu          sync.Mutex
	killPending bool
	killed      bool
	over        bool
	stopWatch   func() bool
}

type hostEnd struct {
	status syscall.WaitStatus
	err    error
}

// hostAnswer bounds how long a host may take to say whether it started a
// command: it answers as soon as it has forked; one that does not is
// stopped or wedged.
var hostAnswer = 10 * time.Second

func (c *hostedCommand) start() error {
	var err error
	for range 2 {
		var fresh, sent bool
		c.h, fresh, err = c.hosts.take()
		if err != nil {
			break
		}
		var said bool
		said, sent, err = c.ask()
		if err == nil {
			break
		}
		if said {
			c.hosts.give(c.h)
			return fmt.Errorf("%w: cannot start %s: %v", ErrExecFailed, c.name, err)
		}
		c.h.stop()
		if fresh || sent && !errors.Is(err, syscall.ECONNRESET) {
			// A host that read the request may have started the command
			// before it went: the turn is not tried again here. (One that
			// died with it unread resets the connection.)
			break
		}
		// A host kept idle may have been killed since: one more try, with
		// a new one.
	}
	if err != nil {
		return fmt.Errorf("%w: cannot start %s: %v", ErrExecFailed, c.name, err)
	}
	c.ended = make(chan hostEnd, 1)
	go func() {
		r, err := c.h.receive()
		switch {
		case err != nil:
			c.ended <- hostEnd{err: err}
		case r.Exited == nil || r.Exited.Pid != c.pid:
			c.ended <- hostEnd{err: fmt.Errorf("the exec host said %+v where it was to say how %s ended", r, c.name)}
		default:
			c.ended <- hostEnd{status: syscall.WaitStatus(r.Exited.Status)}
		}
	}()
	c.mu.Lock()
	pending := c.killPending
	c.mu.Unlock()
	if pending {
		c.kill()
	}
	c.stopWatch = context.AfterFunc(c.ctx, c.kill)
	return nil
}

// ask hands the command to the host with its pipes, and reads whether it
// started. said is true when the host answered, with err its reason for
// not starting it; sent, when the whole request went out.
func (c *hostedCommand) ask() (said, sent bool, err error) {
	stdin, err := c.input()
	if err != nil {
		return false, false, err
	}
	stdout, err := c.output(c.cio.stdout)
	if err != nil {
		stdin.Close()
		c.dropPipes()
		return false, false, err
	}
	stderr, err := c.output(c.cio.stderr)
	if err != nil {
		stdin.Close()
		stdout.Close()
		c.dropPipes()
		return false, false, err
	}
	deadline := time.Now().Add(hostAnswer)
	if d, ok := c.ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.h.conn.SetDeadline(deadline)
	defer c.h.conn.SetDeadline(time.Time{})
	err = c.h.send(execguard.Request{Start: &c.req}, stdin, stdout, stderr)
	sent = err == nil
	// The host holds its own copies now; ours would keep the output open
	// after the command ended.
	stdin.Close()
	stdout.Close()
	stderr.Close()
	var r execguard.Reply
	if err == nil {
		r, err = c.h.receive()
	}
	switch {
	case err != nil:
		c.dropPipes()
		return false, sent, err
	case r.Error != "":
		c.dropPipes()
		return true, sent, errors.New(r.Error)
	case r.Started <= 0:
		c.dropPipes()
		return false, sent, fmt.Errorf("the exec host said %+v where it was to say whether %s started", r, c.name)
	}
	c.mu.Lock()
	c.pid, c.startTime = r.Started, r.StartTime
	c.mu.Unlock()
	return true, sent, nil
}

// input is the command's stdin: a pipe fed with cio.stdin, or nothing.
func (c *hostedCommand) input() (*os.File, error) {
	if c.cio.stdin == nil {
		return os.Open(os.DevNull)
	}
	if c.prompt == nil {
		data, err := io.ReadAll(c.cio.stdin)
		if err != nil {
			return nil, err
		}
		c.prompt = data
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.pipes = append(c.pipes, w)
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		// A command that does not read it all ends the pipe: as os/exec,
		// that is no error of the turn's.
		w.Write(c.prompt)
		w.Close()
	}()
	return r, nil
}

// output is the write end of a pipe whose reads go to w.
func (c *hostedCommand) output(w io.Writer) (*os.File, error) {
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.pipes = append(c.pipes, r)
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		io.Copy(w, r)
	}()
	return pw, nil
}

// dropPipes ends the copies of a command that never started, or whose
// output is held open past its end (a process the host could not reach):
// a blocked read or write ends when its pipe is closed.
func (c *hostedCommand) dropPipes() {
	for _, p := range c.pipes {
		p.Close()
	}
	c.copies.Wait()
	c.pipes = nil
}

func (c *hostedCommand) child() Child {
	return Child{PID: c.pid, PGID: c.pid, StartTime: c.startTime}
}

// kill asks the host to end the command and all below it. A host that
// does not say the command ended within waitAfterKill, or cannot be
// asked, is killed: its commands die with it (their parent-death signal),
// and wait ends what is left of the group.
func (c *hostedCommand) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.over || c.killed:
		return
	case c.pid == 0:
		c.killPending = true
		return
	}
	c.killed = true
	// A host too stuck to take the request is as good as gone.
	c.h.conn.SetWriteDeadline(time.Now().Add(waitAfterKill))
	err := c.h.send(execguard.Request{Sweep: c.pid})
	c.h.conn.SetWriteDeadline(time.Time{})
	if err != nil {
		c.h.stop()
		return
	}
	time.AfterFunc(waitAfterKill, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.over {
			c.h.stop()
		}
	})
}

func (c *hostedCommand) wait() error {
	end := <-c.ended
	c.stopWatch()
	c.mu.Lock()
	c.over = true
	c.mu.Unlock()
	if end.err != nil {
		// The host is gone without a word: what the command started is
		// nobody's to end but ours, and its group is all that can be found
		// of it (a process that left the group is out of reach).
		c.h.stop()
		syscall.Kill(-c.pid, syscall.SIGKILL)
	} else {
		c.hosts.give(c.h)
	}
	// Everything below the host has ended, so the pipes' other ends are
	// closed; a copy still blocked after waitAfterKill is cut loose, as
	// os/exec's WaitDelay does.
	copied := make(chan struct{})
	go func() {
		c.copies.Wait()
		close(copied)
	}()
	select {
	case <-copied:
	case <-time.After(waitAfterKill):
	}
	c.dropPipes()
	if end.err != nil {
		return end.err
	}
	if end.status.Exited() && end.status.ExitStatus() == 0 {
		return nil
	}
	return &hostExitError{end.status}
}

// hostExitError is a command that did not end well, in the words of
// os/exec's ExitError.
type hostExitError struct{ status syscall.WaitStatus }

func (e *hostExitError) Exited() bool { return e.status.Exited() }

func (e *hostExitError) Error() string {
	var s string
	switch {
	case e.status.Exited():
		s = "exit status " + strconv.Itoa(e.status.ExitStatus())
	case e.status.Signaled():
		s = "signal: " + e.status.Signal().String()
	default:
		s = fmt.Sprintf("wait status %#x", uint32(e.status))
	}
	if e.status.CoreDump() {
		s += " (core dumped)"
	}
	return s
}
