package cursor

import (
	"os"
	"testing"
)

// afterTests is run once all tests are done (it stops the private X display
// when GUI tests started one).
var afterTests = func() {}

// helperMains are the roles the test binary plays when a test re-executes
// it as a separate agentctl-like process.
var helperMains = map[string]func(){}

func TestMain(m *testing.M) {
	runGuardIfAsked()
	if role := os.Getenv("CURSOR_TEST_ROLE"); role != "" {
		helperMains[role]()
		os.Exit(0)
	}
	code := m.Run()
	afterTests()
	os.Exit(code)
}
