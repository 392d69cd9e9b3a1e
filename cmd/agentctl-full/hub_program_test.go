//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// agentctlIn puts agentctl (this test binary, which runs as agentctl
// under that name) in a folder of its own, with agentctl-hub beside it
// when withHub, and returns the folder.
func agentctlIn(t *testing.T, withHub bool) string {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link(t, self, filepath.Join(dir, "agentctl"))
	if withHub {
		link(t, hubProgramPath, filepath.Join(dir, hubProgram))
	}
	return dir
}

// link links or, across file systems, copies from to to.
func link(t *testing.T, from, to string) {
	t.Helper()
	if os.Link(from, to) == nil {
		return
	}
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A PATH without the agentctl-hub TestMain built: only the one beside
// agentctl, if any, may be found.
const bareEnvPath = "PATH=/usr/bin:/bin"

func TestHubWithoutTheHubProgram(t *testing.T) {
	t.Parallel()
	dir := agentctlIn(t, false)
	machine(t, filepath.Join(dir, "runtime"), "agents: []\n")
	cmd := exec.Command(filepath.Join(dir, "agentctl"), "--root", filepath.Join(dir, "runtime"), "hub")
	cmd.Env = append(os.Environ(), bareEnvPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agentctl hub without agentctl-hub: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	want := "agentctl: cannot serve a hub: agentctl-hub is not installed beside agentctl\n" +
		"hint: install both with 'go install github.com/agentctl/agentctl/cmd/...@latest', or put agentctl-hub from the release archive in " + dir + " or on PATH\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

// The hub finds agentctl-hub beside itself, stops it when asked to stop,
// takes it along when it is killed, and stops, failing, without it.
func TestHubRunsTheHubProgramBesideIt(t *testing.T) {
	t.Parallel()
	dir := agentctlIn(t, true)
	root := filepath.Join(dir, "runtime")
	machine(t, root, "agents: []\n")
	start := func(name string) (*proc, int) {
		p := &proc{t: t, name: name, out: filepath.Join(dir, name+".out"), log: filepath.Join(dir, name+".log")}
		p.cmd = exec.Command(filepath.Join(dir, "agentctl"), "--root", root, "hub", "--listen", "127.0.0.1:0", "--log-format", "json")
		p.cmd.Env = append(os.Environ(), bareEnvPath)
		startProc(t, p)
		p.url()
		return p, hubServerPID(t, p.cmd.Process.Pid)
	}

	hub, server := start("hub")
	if err := hub.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := hub.wait(); err != nil {
		t.Errorf("agentctl hub stopped by SIGTERM: %v, want exit status 0; log:\n%s", err, readFile(t, hub.log))
	}
	poll.Until(t, "agentctl-hub to stop with the hub", func() bool { return !process.Alive(server) })

	hub, server = start("killed")
	hub.kill()
	poll.Until(t, "agentctl-hub to die with the killed hub", func() bool { return !process.Alive(server) })

	// And the hub does not outlive its server.
	hub, server = start("orphaned")
	if err := syscall.Kill(server, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := hub.wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("agentctl hub whose server was killed: %v, want exit status 1", err)
	}
	if log := readFile(t, hub.log); !strings.Contains(log, "agentctl: the hub's NATS server ended: signal: killed\n") {
		t.Errorf("agentctl hub whose server was killed does not say so:\n%s", log)
	}
}

// hubServerPID is the pid of the agentctl-hub the hub of pid started.
func hubServerPID(t *testing.T, pid int) int {
	t.Helper()
	var child int
	poll.Until(t, "the hub's agentctl-hub", func() bool {
		// Any of its threads may have started it.
		files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		var children []string
		for _, file := range files {
			data, _ := os.ReadFile(file)
			children = append(children, strings.Fields(string(data))...)
		}
		for _, f := range children {
			c, _ := strconv.Atoi(f)
			if comm, _ := os.ReadFile("/proc/" + f + "/comm"); strings.TrimSpace(string(comm)) == hubProgram {
				child = c
				return true
			}
		}
		return false
	})
	return child
}
