package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentctl/agentctl/cursor"
)

// TestMain lets scripts run "agentctl" as a real process: the test binary
// re-executes itself as the command. agentctl-hub, which 'agentctl hub'
// starts, is built from its source for the tests, onto PATH.
func TestMain(m *testing.M) {
	commands := map[string]func(){
		"agentctl": func() {
			cursor.GuardMain(guardProgram())
			os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		probeCommand: func() { probeAsOther(); os.Exit(0) },
	}
	if _, command := commands[filepath.Base(os.Args[0])]; command {
		testscript.Main(m, commands) // runs the command and exits
	}
	dir, err := os.MkdirTemp("", "agentctl-hub")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hubProgramPath = filepath.Join(dir, hubProgram)
	if out, err := exec.Command("go", "build", "-o", hubProgramPath, "../agentctl-hub").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot build agentctl-hub: %v\n%s", err, out)
		os.Exit(1)
	}
	os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	testscript.Main(cleanup{m, func() { os.RemoveAll(dir) }}, commands)
}

// hubProgramPath is the agentctl-hub TestMain built.
var hubProgramPath string

// cleanup runs m, then done: testscript.Main exits without returning.
type cleanup struct {
	m    *testing.M
	done func()
}

func (c cleanup) Run() int {
	defer c.done()
	return c.m.Run()
}

// TestScripts runs the end-to-end scripts in testdata/script, each in a fresh
// work folder that is also its runtime root.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("AGENTCTL_ROOT", env.WorkDir+"/runtime")
			// Stand-ins for claude and cursor-agent, for scripts that put
			// them on PATH.
			fakecli, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "fakecli"))
			env.Setenv("FAKECLI", fakecli)
			fixtures, err2 := filepath.Abs("../../fixtures")
			env.Setenv("FIXTURES", fixtures)
			if err == nil {
				err = err2
			}
			return err
		},
	})
}
