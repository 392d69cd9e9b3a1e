package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentctl/agentctl/cursor"
)

// TestMain lets scripts run "agentctl" as a real process: the test binary
// re-executes itself as the command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agentctl": func() {
			cursor.GuardMain()
			os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		probeCommand: func() { probeAsOther(); os.Exit(0) },
	})
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
