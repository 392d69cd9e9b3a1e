package agents

import (
	"os"
	"testing"
)

// TestMain lets the test binary play the parts that must be real
// processes: a runner that a test can kill with SIGKILL, and a scripted
// headless agent that the exec driver runs per turn.
func TestMain(m *testing.M) {
	switch os.Getenv("AGENTS_TEST_ROLE") {
	case "runner":
		os.Exit(runnerProcess())
	case "hop-agent":
		os.Exit(hopAgent())
	}
	os.Exit(m.Run())
}
