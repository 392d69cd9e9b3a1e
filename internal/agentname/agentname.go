// Package agentname decides which strings may name an agent. Agent names
// become folder names under the runtime root, so every name is checked here
// before any path is built from it. It owns that rule alone: it never
// builds a path or touches the file system (internal/layout builds them,
// through Valid), and knows the configured agents only as the caller
// passes them (Resolve).
//
// Dream.OS parsed "Agent 1 ..." out of free text and created a mailbox called
// "Agent"; agentctl refuses any name that is malformed or not configured.
package agentname

import (
	"fmt"
	"strings"
)

// wellFormed is ^[A-Za-z][A-Za-z0-9_-]{0,63}$, checked byte by byte:
// every command checks names, and compiling the regular expression cost
// more than the rest of the check.
func wellFormed(name string) bool {
	if len(name) == 0 || len(name) > 64 || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Valid checks that name can safely become a folder name: a letter, then
// letters, digits, '-' or '_', at most 64 in all. That rules out path
// separators, "..", spaces and dot-files. Windows's device names (CON,
// NUL, COM1, …), which name no folder there, are refused everywhere, so a
// runtime moves between systems.
func Valid(name string) error {
	if !wellFormed(name) {
		return fmt.Errorf("%q is not a valid agent name: use letters, digits, '-' and '_', starting with a letter", name)
	}
	if isDevice(name) {
		return fmt.Errorf("%q is not a valid agent name: Windows keeps it for a device", name)
	}
	return nil
}

// isDevice reports Windows's reserved device names, in any case.
func isDevice(name string) bool {
	switch n := strings.ToUpper(name); {
	case n == "CON" || n == "PRN" || n == "AUX" || n == "NUL":
		return true
	case len(n) == 4 && (strings.HasPrefix(n, "COM") || strings.HasPrefix(n, "LPT")):
		return n[3] >= '0' && n[3] <= '9'
	}
	return false
}

// Resolve returns the configured spelling of name among known, ignoring case
// because Dream.OS wrote "agent-2" as often as "Agent-2".
func Resolve(known []string, name string) (string, error) {
	if err := Valid(name); err != nil {
		return "", err
	}
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown agent %q", name)
}
