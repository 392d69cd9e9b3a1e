// Package agentname decides which strings may name an agent. Agent names
// become folder names under the runtime root, so every name is checked here
// before any path is built from it.
//
// Dream.OS parsed "Agent 1 ..." out of free text and created a mailbox called
// "Agent"; agentctl refuses any name that is malformed or not configured.
package agentname

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

var pattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`) })

// Valid checks that name can safely become a folder name: a letter, then
// letters, digits, '-' or '_', at most 64 in all. That rules out path
// separators, "..", spaces and dot-files.
func Valid(name string) error {
	if !pattern().MatchString(name) {
		return fmt.Errorf("%q is not a valid agent name: use letters, digits, '-' and '_', starting with a letter", name)
	}
	return nil
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
