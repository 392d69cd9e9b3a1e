package main

import (
	"strings"
	"testing"

	"github.com/agentctl/agentctl/config"
)

// A VS Code seat needs no copy button: the profile copies by keys, and
// the seat counts as calibrated with the input box and reply region alone.
func TestCalibrateVSCodeProfile(t *testing.T) {
	_, root := demoRuntime(t)
	out := mustAgentctl(t, root, "calibrate", "Agent-1", "--title", "^Agent-1 — VS Code$", "--profile", "vscode",
		"--input", "870,717", "--reply", "760,76,225,576", "--busy", "952,746")
	if strings.Contains(out, "not calibrated") {
		t.Fatalf("a vscode seat with input and reply is reported incomplete:\n%s", out)
	}
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cfg.Agent("Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if w := a.Window; w.Profile != config.ProfileVSCode || w.Copy != nil || w.Input == nil || w.Busy == nil {
		t.Fatalf("recorded window %+v", w)
	}
	if _, errOut, err := agentctl(t, root, "calibrate", "Agent-1", "--profile", "emacs", "--input", "1,1"); err == nil || !strings.Contains(errOut, "not a known app") {
		t.Fatalf("an unknown profile: %v\n%s", err, errOut)
	}
}
