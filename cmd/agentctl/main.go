// Command agentctl runs a swarm of AI coding agents that live in Cursor chat
// windows (or headless CLI agents) and coordinates them through plain files.
//
// This program has the quick commands alone (version, status, send,
// board, completion; package cli), so that they start about as fast as a
// Go program can: it links none of the drivers, the NATS client, the MCP
// server or mission control. Every other command it hands over to
// agentctl-full, installed beside it, which has them all.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	// agentctl-full starts an exec seat's host and an ACP agent's guard as
	// this program, whose start is the cheaper: they run from this
	// package's init.
	_ "github.com/agentctl/agentctl/internal/execguard"
)

// fullProgram has every command; 'go install .../cmd/...@latest' and the
// release archive put it beside agentctl.
const fullProgram = "agentctl-full"

func main() {
	p := cli.Program{HandOver: handOver}
	os.Exit(p.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// handOver runs the command line args in agentctl-full, for command name.
func handOver(name string, args []string) error {
	path, self := cli.FindProgram(fullProgram)
	if path == "" {
		where := "agentctl"
		if self != "" {
			where = self
		}
		return cli.WithHint(fmt.Errorf("%q needs %s, which is not beside %s or on PATH", name, fullProgram, where),
			"go install github.com/agentctl/agentctl/cmd/...@latest, or put "+fullProgram+" from the release archive beside agentctl")
	}
	// argv[0] stays what the person typed: the full program answers to
	// the name agentctl.
	err := runFull(path, append([]string{os.Args[0]}, args...))
	if err != nil && !errors.As(err, new(cli.ExitError)) {
		return fmt.Errorf("cannot run %s: %w", path, err)
	}
	return err
}
