package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/agentctl/agentctl/agents/supervise"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/clock"
)

const downUsage = `
Usage: agentctl down [--timeout DURATION]

Stops the runtime's 'agentctl up': asks it to stop (SIGTERM; on Windows a
stop request in locks/up.stop, which up looks for every 2s), which stops
every runner it keeps the way Ctrl+C would, and waits until it has exited.
Runners started by hand with 'agentctl run' are not touched.

Examples:
  agentctl down
  agentctl --root ~/swarm/runtime down --timeout 2m
`

func runDown(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "down", downUsage)
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for up to exit")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	pid, ok := supervise.Running(env.Root)
	if !ok {
		return cli.WithHint(errors.New("agentctl up is not running here"), "runners started with 'agentctl run' stop with Ctrl+C in their terminal; 'agentctl status' lists them")
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Signal(syscall.SIGTERM)
	}
	if err != nil { // Windows has no SIGTERM: up looks for a stop request
		if rerr := supervise.RequestStop(env.Root); rerr != nil {
			return cli.WithHint(fmt.Errorf("cannot stop agentctl up (pid %d): %w", pid, errors.Join(err, rerr)), "press Ctrl+C in the console where up runs")
		}
	}
	fmt.Fprintf(env.Stdout, "asked agentctl up (pid %d) to stop its runners\n", pid)
	return waitDown(ctx, env, clock.System, pid, *timeout)
}

// waitDown waits until up (pid) has let go of the runtime, or timeout has
// passed on clk. Up's lock is looked at every 100ms of real time: it is a
// real process's, and lets go when that process does.
func waitDown(ctx context.Context, env *cli.Env, clk clock.Clock, pid int, timeout time.Duration) error {
	deadline := clk.At(clk.Now().Add(timeout))
	gone := func() bool {
		now, ok := supervise.Running(env.Root)
		return !ok || now != pid
	}
	for {
		if gone() {
			fmt.Fprintf(env.Stdout, "agentctl up (pid %d) stopped\n", pid)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			if gone() {
				continue
			}
			return cli.WithHint(fmt.Errorf("agentctl up (pid %d) is still stopping after %s", pid, timeout), "its runners may be finishing a turn; see 'agentctl status'")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
