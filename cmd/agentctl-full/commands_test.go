package main

import (
	"strings"
	"testing"

	"github.com/agentctl/agentctl/cmd/internal/cli"
)

// Every command the table leaves to this program is here, with a usage
// that has a synopsis, and nothing the table does not list.
func TestTheFullProgramHasEveryCommand(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range cli.Commands {
		listed[c.Name] = true
		full, ok := program.Full[c.Name]
		switch {
		case c.Run != nil && ok:
			t.Errorf("%s: both package cli and agentctl-full run it", c.Name)
		case c.Run == nil && (!ok || full.Run == nil):
			t.Errorf("%s: the table leaves it to agentctl-full, which does not run it", c.Name)
		case c.Run == nil && !hasSynopsis(full.Usage, c.Name):
			t.Errorf("%s: no synopsis line in its usage", c.Name)
		}
	}
	for name := range program.Full {
		if !listed[name] {
			t.Errorf("%s: agentctl-full runs it, but the table, which the usage lists, does not", name)
		}
	}
}

// hasSynopsis says whether usage has a synopsis of the command, a line
// "agentctl NAME ..." (after "Usage:" or below it).
func hasSynopsis(usage, name string) bool {
	for line := range strings.Lines(usage) {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "Usage:"))
		if l == "agentctl "+name || strings.HasPrefix(l, "agentctl "+name+" ") {
			return true
		}
	}
	return false
}
