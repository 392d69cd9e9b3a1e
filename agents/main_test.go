package agents

import (
	"os"
	"testing"
)

// TestMain lets the test binary play the parts that must be real
// processes: a runner that a test can kill with SIGKILL, and a scripted
// headless agent that the exec driver runs per turn.
func TestMain(m *testing.M) {
	if role := os.Getenv("AGENTS_TEST_ROLE"); role != "" {
		os.Exit(roles[role]())
	}
	os.Exit(m.Run())
}

// roles are the parts the test binary can play; GUI-only ones add
// themselves in files built only where the GUI driver is (Linux).
var roles = map[string]func() int{
	"runner":    runnerProcess,
	"hop-agent": hopAgent,
}
