package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentctl/agentctl/"

// mailboxMayNotImport are the rooms above the mailbox: they use the store,
// and an import the other way would make it depend on its users.
var mailboxMayNotImport = []string{"agents", "cursor", "config", "projectboard", "devlog", "lore"}

// TestImportsRunDown asks go list what every package under internal/ and
// mailbox/ imports, tests included, for every system agentctl is released
// for: internal/ holds leaves, which import no agentctl package outside
// internal/, and mailbox/ imports none of the rooms above it.
func TestImportsRunDown(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "windows", "darwin"} {
		cmd := exec.Command("go", "list", "-f",
			`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
			"./internal/...", "./mailbox/...")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list for %s: %v\n%s", goos, err, stderrOf(err))
		}
		listed := 0
		for line := range strings.Lines(string(out)) {
			fields := strings.Fields(line)
			pkg, ok := strings.CutPrefix(fields[0], module)
			if !ok {
				t.Fatalf("go list names %s, outside %s", fields[0], module)
			}
			listed++
			for _, imp := range fields[1:] {
				imp, ours := strings.CutPrefix(imp, module)
				if !ours {
					continue
				}
				if under(pkg, "internal") && !under(imp, "internal") {
					t.Errorf("GOOS=%s: %s imports %s; a package under internal/ imports only internal/ ones", goos, pkg, imp)
				}
				for _, room := range mailboxMayNotImport {
					if under(pkg, "mailbox") && under(imp, room) {
						t.Errorf("GOOS=%s: %s imports %s; the mailbox imports none of the rooms above it", goos, pkg, imp)
					}
				}
			}
		}
		if listed < 20 {
			t.Errorf("GOOS=%s: go list names %d packages; it no longer lists internal/ and mailbox/", goos, listed)
		}
	}
}

// under says whether pkg is dir or a package below it.
func under(pkg, dir string) bool {
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}

// stderrOf is what a command that failed said on stderr.
func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
