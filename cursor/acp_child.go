package cursor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/childthread"
	"github.com/agentctl/agentctl/internal/process"
)

// acpChild is the seat's ACP agent process: its stdio carries the
// protocol, its stderr is kept for errors.
type acpChild struct {
	cmd    *exec.Cmd
	child  Child
	stdin  io.WriteCloser // the agent's stdin
	stdout io.ReadCloser  // the agent's stdout
	stderr *lockedTail
	// exited is closed once the process is reaped; err is then its end.
	exited chan struct{}
	err    error
}

// startACPChild starts the agent in its own process group, dying with this
// process: on Linux it dies with the thread that started it (see
// setParentDeathSignal), which childthread keeps until it is reaped.
func startACPChild(args []string, dir string, env []string) (*acpChild, error) {
	cmd, err := command(context.Background(), args)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	setProcessGroup(cmd)
	// Pipes of our own, not cmd's: Wait would close cmd's while the
	// protocol may still be reading what the agent wrote last.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &acpChild{cmd: cmd, stdin: inW, stdout: outR, stderr: &lockedTail{t: tailBuffer{max: stderrKept}}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, c.stderr
	cmd.WaitDelay = waitAfterKill
	err = childthread.Start(cmd, func() error {
		if err := afterStart(cmd); err != nil {
			killProcessGroup(cmd)
			cmd.Wait()
			return err
		}
		c.child = Child{PID: cmd.Process.Pid, PGID: processGroupOf(cmd)}
		c.child.StartTime, _ = process.StartTime(c.child.PID)
		return nil
	}, func() {
		c.err = cmd.Wait()
		// What the agent spawned goes with it, after a grace to finish
		// its own writes (Claude Code, under Claude's adapter, writes the
		// session's last turn as it ends).
		if !waitChildGone(c.child, acpStopGrace) {
			killProcessGroup(cmd)
		}
		close(c.exited)
	})
	// The agent holds its ends now; ours would keep its stdout open
	// after it died.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("cannot start %s: %w", args[0], err)
	}
	return c, nil
}

// How long an agent asked to stop may take to finish writing its
// sessions (an agent killed outright may lose the last turn of its
// history) before it is asked again, then killed.
const acpStopGrace = 5 * time.Second

// stop ends the agent and all it spawned, and waits until it is reaped:
// the end of its input and a request to stop to the agent alone (Claude's
// adapter heeds only the latter), so that what it spawned ends in its
// own time and way once it is gone; after a grace, a kill.
func (c *acpChild) stop() {
	c.stdin.Close()
	askToStop(c.child)
	if !c.waitExit(2 * acpStopGrace) {
		killProcessGroup(c.cmd)
	}
	<-c.exited
	c.stdout.Close()
}

// kill ends the agent at once, for an agent that does not answer.
func (c *acpChild) kill() {
	killProcessGroup(c.cmd)
	c.stop()
}

func (c *acpChild) waitExit(limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// alive reports whether the agent still runs.
func (c *acpChild) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// why says how the agent ended, with the end of its stderr.
func (c *acpChild) why() string {
	select {
	case <-c.exited:
		s := "it exited"
		if c.err != nil {
			s = "it ended: " + c.err.Error()
		}
		return s + c.stderr.quote()
	default:
		return "it still runs" + c.stderr.quote()
	}
}

// lockedTail is a tailBuffer written by the process's stderr copier while
// turns read it.
type lockedTail struct {
	mu sync.Mutex
	t  tailBuffer
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) quote() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.TrimRight(l.t.quote(), "\n")
}
