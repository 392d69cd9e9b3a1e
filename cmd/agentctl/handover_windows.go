//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"

	"golang.org/x/sys/windows"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/process"
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
	if err := cmd.Start(); err != nil {
		return err
	}
	tie(cmd.Process.Pid)
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return cli.ExitError{Code: exit.ExitCode(), Err: fmt.Errorf("%s: %w", path, err)}
	}
	return err
}

// tie puts the process pid in a job that ends it when this process ends,
// however it ends: a supervisor that kills agentctl stops its command
// too, as on Unix, where they are one process. Where no job can be had,
// the command runs all the same.
func tie(pid int) {
	job, err := process.NewKillOnCloseJob()
	if err != nil {
		return
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		windows.CloseHandle(job)
		return
	}
	defer windows.CloseHandle(p)
	if windows.AssignProcessToJobObject(job, p) != nil {
		windows.CloseHandle(job)
	}
	// The job's handle stays open as long as this process lives.
}
