package cursor

import (
	"context"
	"fmt"
	"io"
	"os/exec"
)

// turnCommand is a turn's command, set up and not started yet: started by
// os/exec (execCommand), through the guard where there is one, or handed
// to the seat's host (hostedCommand, on Linux), which guards every turn of
// the seat without a program started for each.
type turnCommand interface {
	// start starts the command; its error says so in words.
	start() error
	// child is the started command, for the turn's record.
	child() Child
	// kill ends the command and everything it started.
	kill()
	// wait waits until the command has ended and its output is read, and
	// says how it ended as os/exec does (nil, or an error with Exited).
	wait() error
}

// commandStarter sets up a turn's command: args (the program's path first)
// to run in dir with env (nil: this process's), ended by ctx's end.
type commandStarter interface {
	setUp(ctx context.Context, args []string, dir string, env []string, cio commandIO) (turnCommand, error)
}

// commandIO is what a turn's command reads and writes.
type commandIO struct {
	stdin          io.Reader // nil: nothing
	stdout, stderr io.Writer
}

// execCommand is a turn's command started by os/exec.
type execCommand struct {
	cmd  *exec.Cmd
	name string
}

// newExecCommand sets up args (the program's path first) to run in dir
// with env (nil: this process's), in a process group of its own that
// ctx's end kills.
func newExecCommand(ctx context.Context, args []string, dir string, env []string, cio commandIO) (*execCommand, error) {
	cmd, err := command(ctx, args)
	if err != nil {
		return nil, err
	}
	cmd.Dir, cmd.Env = dir, env
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = waitAfterKill
	if cio.stdin != nil {
		cmd.Stdin = cio.stdin
	}
	cmd.Stdout, cmd.Stderr = cio.stdout, cio.stderr
	return &execCommand{cmd: cmd, name: args[0]}, nil
}

func (c *execCommand) start() error {
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("%w: cannot start %s: %v", ErrExecFailed, c.name, err)
	}
	if err := afterStart(c.cmd); err != nil {
		c.kill()
		c.cmd.Wait()
		return fmt.Errorf("%w: %s: %v", ErrExecFailed, c.name, err)
	}
	return nil
}

func (c *execCommand) child() Child {
	return Child{PID: c.cmd.Process.Pid, PGID: processGroupOf(c.cmd)}
}

func (c *execCommand) kill()       { killProcessGroup(c.cmd) }
func (c *execCommand) wait() error { return c.cmd.Wait() }
