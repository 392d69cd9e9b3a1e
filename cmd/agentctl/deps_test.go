package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavyModules and heavyPackages are what agentctl-full alone may link:
// each costs the quick commands start-up work (package inits, pages of
// code) they never use.
var heavyModules = []string{
	"github.com/nats-io/",
	"github.com/modelcontextprotocol/",
	"github.com/charmbracelet/",
	"github.com/chromedp/",
	"github.com/go-vgo/robotgo",
	"github.com/jezek/xgb",
	"github.com/google/jsonschema-go",
	"github.com/rs/zerolog",
}

// heavyPackages are agentctl's own packages that link those; their light
// parts are packages of their own (cursor/lockholder, agents/hub/hubseats…).
var heavyPackages = []string{
	"github.com/agentctl/agentctl/agents",
	"github.com/agentctl/agentctl/cursor",
	"github.com/agentctl/agentctl/agents/hub",
	"github.com/agentctl/agentctl/agents/missioncontrol",
}

// cgoNet is package net: built with cgo, as go install does where a C
// compiler is, it makes a Unix program load the C library at every start.
// (On Windows, where agentctl is built without cgo, the system's own
// package links it.)
const cgoNet = "net"

// TestAgentctlLinksOnlyTheQuickCommands asks go list what agentctl links,
// for every system it is released for, and fails on any heavy package,
// naming what imports it.
func TestAgentctlLinksOnlyTheQuickCommands(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "windows", "darwin"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list for %s: %v\n%s", goos, err, stderrOf(err))
		}
		linked := 0
		for line := range strings.Lines(string(out)) {
			fields := strings.Fields(line)
			linked++
			for _, imp := range fields[1:] {
				if isHeavy(imp) && !isHeavy(fields[0]) || imp == cgoNet && goos != "windows" {
					t.Errorf("GOOS=%s: agentctl links %s, imported by %s; only agentctl-full may", goos, imp, fields[0])
				}
			}
		}
		if linked < 10 {
			t.Errorf("GOOS=%s: go list names %d packages; it no longer says what agentctl links", goos, linked)
		}
	}
}

func isHeavy(pkg string) bool {
	for _, m := range heavyModules {
		if strings.HasPrefix(pkg, m) {
			return true
		}
	}
	return slices.Contains(heavyPackages, pkg)
}
