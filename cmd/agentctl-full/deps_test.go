package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// natsServer is the module of the NATS server, which only agentctl-hub
// may link: its packages start work of their own in every program that
// links them (a sampler reading /proc every second, among others).
const natsServer = "github.com/nats-io/nats-server/v2"

// TestOnlyTheHubProgramLinksTheNATSServer asks go list what each program
// links, for every system agentctl is released for: agentctl never the
// server, agentctl-hub the server (so that the check can find it).
func TestOnlyTheHubProgramLinksTheNATSServer(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "windows", "darwin"} {
		if importers := serverImporters(t, goos, "."); len(importers) > 0 {
			t.Errorf("GOOS=%s: agentctl links the NATS server, imported by %s; only agentctl-hub (package agents/hub/hubserver) may",
				goos, strings.Join(importers, ", "))
		}
		if importers := serverImporters(t, goos, "../agentctl-hub"); len(importers) == 0 {
			t.Errorf("GOOS=%s: agentctl-hub does not link the NATS server, or go list no longer says so", goos)
		}
	}
}

// serverImporters lists the packages outside the NATS server's module
// that pkg's program links and that import a package of it.
func serverImporters(t *testing.T, goos, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s for %s: %v", pkg, goos, err)
	}
	var importers []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], natsServer) {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, natsServer+"/") {
				importers = append(importers, fields[0])
				break
			}
		}
	}
	return importers
}
