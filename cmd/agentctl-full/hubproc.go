package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentctl/agentctl/agents/hub/hubconf"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/childthread"
)

// hubProgram runs the hub's NATS server. It is a program of its own so
// that only a process serving a hub carries the server's code: every other
// agentctl process, a runner idle for days among them, would otherwise
// start the server's packages too, and their work in the background.
const hubProgram = "agentctl-hub"

// hubServerProc is a running agentctl-hub.
type hubServerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser // closed, the server stops
	url   string         // its client URL, as it printed it
	done  chan struct{}  // closed when it has exited
	err   error          // its exit, once done
}

// findHubProgram finds agentctl-hub beside this program, where an install
// or a release archive puts it, and then on PATH.
func findHubProgram() (string, error) {
	path, self := cli.FindProgram(hubProgram)
	if path != "" {
		return path, nil
	}
	where := "beside agentctl"
	if self != "" {
		where = "in " + filepath.Dir(self)
	}
	return "", cli.WithHint(errors.New("cannot serve a hub: agentctl-hub is not installed beside agentctl"),
		fmt.Sprintf("install both with 'go install github.com/agentctl/agentctl/cmd/...@latest', or put agentctl-hub from the release archive %s or on PATH", where))
}

// startHubServer starts agentctl-hub (at path) with s, handed over on its stdin, its
// stderr this command's, and returns once it prints its URL. What it
// prints after the URL goes to this command's stdout.
func startHubServer(env *cli.Env, path string, s hubconf.Settings, logFormat string) (*hubServerProc, error) {
	var err error
	// argv[0] says what it serves in ps; the settings are not on the
	// command line, where every user of the machine could read them.
	p := &hubServerProc{cmd: &exec.Cmd{Path: path, Args: []string{hubProgram, "--log-format", logFormat}}, done: make(chan struct{})}
	p.cmd.Stderr = env.Stderr
	ownHubServer(p.cmd)
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	urls := make(chan string, 1)
	// The server dies with the thread that starts it (dieWithParent), which
	// childthread keeps until the server has exited.
	err = childthread.Start(p.cmd, nil, func() {
		out := bufio.NewReader(stdout)
		if line, err := out.ReadString('\n'); err == nil {
			urls <- strings.TrimSpace(line)
			_, _ = io.Copy(env.Stdout, out)
		}
		close(urls)
		p.err = p.cmd.Wait()
		close(p.done)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", path, err)
	}
	if err := hubconf.Write(p.stdin, s); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
		return nil, err
	}
	url, ok := <-urls
	if !ok {
		// It said why on stderr, in agentctl's words.
		<-p.done
		return nil, p.exit()
	}
	p.url = url
	return p, nil
}

// ended reports whether the server has exited.
func (p *hubServerProc) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the server to stop, waits until it has, and says how it
// ended if not cleanly.
func (p *hubServerProc) stop() error {
	if p.ended() {
		return p.exit()
	}
	_ = askHubServerToStop(p.cmd.Process)
	_ = p.stdin.Close()
	<-p.done
	return p.exit()
}

// exit is how the finished server ended: nil when cleanly; an error that
// makes this command exit as it did when it exited saying why; else one
// that says how it ended.
func (p *hubServerProc) exit() error {
	if p.err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) && ee.ExitCode() > 0 {
		return cli.ExitError{Code: ee.ExitCode(), Err: fmt.Errorf("the hub's NATS server ended: %w", p.err)}
	}
	// Killed, it could say nothing.
	return fmt.Errorf("the hub's NATS server ended: %w", p.err)
}
