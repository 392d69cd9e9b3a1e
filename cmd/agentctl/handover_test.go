package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// programs builds agentctl into dir, and agentctl-full beside it when
// full, as they are released (CGO_ENABLED=0).
func programs(t testing.TB, dir string, full bool) string {
	t.Helper()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	builds := map[string]string{"agentctl": "."}
	if full {
		builds[fullProgram] = "../agentctl-full"
	}
	for name, pkg := range builds {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, name+exe), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "agentctl"+exe)
}

// agentctl runs the program at path with args, with a PATH that holds no
// agentctl-full, and returns its output and exit code.
func agentctl(t *testing.T, path string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir(), "AGENTCTL_ROOT=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("agentctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// The quick commands run with agentctl alone; every other command is
// agentctl-full's, run through agentctl with its exit code, or refused
// with the fix when agentctl-full is not there.
func TestAgentctlHandsOverToTheFullProgram(t *testing.T) {
	t.Parallel()
	both, alone := t.TempDir(), t.TempDir()
	full, front := programs(t, both, true), programs(t, alone, false)
	root := filepath.Join(t.TempDir(), "runtime")
	if _, errOut, code := agentctl(t, full, "--root", root, "init"); code != 0 {
		t.Fatalf("init through agentctl-full: exit %d\n%s", code, errOut)
	}

	for _, args := range [][]string{
		{"version"},
		{"--root", root, "status"},
		{"--root", root, "send", "--to", "Agent-1", "ping"},
		{"--root", root, "board", "list"},
		{"completion", "bash"},
		{"help"},
	} {
		if _, errOut, code := agentctl(t, front, args...); code != 0 {
			t.Errorf("agentctl %s without agentctl-full: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	out, _, _ := agentctl(t, front, "help")
	for _, name := range []string{"send", "status", "run", "doctor", "migrate"} {
		if !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("agentctl help does not list %s:\n%s", name, out)
		}
	}

	_, errOut, code := agentctl(t, front, "--root", root, "run", "-h")
	want := `agentctl: "run" needs agentctl-full, which is not beside ` + front + " or on PATH\nhint: go install github.com/agentctl/agentctl/cmd/...@latest"
	if code != 1 || !strings.HasPrefix(errOut, want) {
		t.Errorf("run -h without agentctl-full: exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, errOut, want)
	}

	out, errOut, code = agentctl(t, full, "doctor", "-h")
	if code != 0 || !strings.HasPrefix(out, "Usage: agentctl doctor") {
		t.Errorf("doctor -h through agentctl-full: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, errOut, code = agentctl(t, full, "--root", root, "run")
	if code != 2 || !strings.HasPrefix(errOut, "agentctl: run: want AGENT\n") {
		t.Errorf("run without an agent through agentctl-full: exit %d, want 2; stderr:\n%s", code, errOut)
	}
	// Completing a command of agentctl-full's asks it for the flags.
	out, errOut, code = agentctl(t, full, "__complete", "run", "--dr")
	if code != 0 || out != "--driver\n" {
		t.Errorf("completing run's flags: exit %d, %q, want --driver; stderr:\n%s", code, out, errOut)
	}
}
