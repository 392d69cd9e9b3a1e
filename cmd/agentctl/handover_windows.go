//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"

	"github.com/agentctl/agentctl/internal/cli"
)

// runFull runs the full program as a child with this process's standard
// streams, and ends with its exit code (Windows has no exec). Ctrl+C
// reaches both, the console group being theirs: this process hears it,
// so as not to end by it, and waits for the child to act on it.
func runFull(path string, argv []string) error {
	cmd := exec.Command(path)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return cli.ExitError{Code: exit.ExitCode(), Err: fmt.Errorf("%s: %w", path, err)}
	}
	return err
}
