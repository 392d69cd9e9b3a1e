package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// validateWatch checks the places old writers write to: each is a path or
// a glob that filepath.Match accepts.
func (c Config) validateWatch() error {
	check := func(where, p string) error {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("%s: an empty path", where)
		}
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("%s: %q is not a valid glob: %w", where, p, err)
		}
		return nil
	}
	for i, a := range c.Agents {
		for j, p := range a.Watch {
			if err := check(fmt.Sprintf("agents[%d] (%s).watch[%d]", i, a.Name, j), p); err != nil {
				return err
			}
		}
	}
	for j, p := range c.Mailbox.Shared {
		if err := check(fmt.Sprintf("mailbox.shared[%d]", j), p); err != nil {
			return err
		}
	}
	return nil
}

// WatchPaths are the agent's extra places, absolute (relative ones are
// taken from the runtime root).
func (a Agent) WatchPaths(root string) []string { return absolute(root, a.Watch) }

// SharedPaths are the shared places, absolute.
func (c Config) SharedPaths(root string) []string { return absolute(root, c.Mailbox.Shared) }

// SharedDeadletters reports whether agent is the one whose runner
// dead-letters what the shared places hold for no agent: the first listed.
func (c Config) SharedDeadletters(agent string) bool {
	return len(c.Mailbox.Shared) > 0 && len(c.Agents) > 0 && c.Agents[0].Name == agent
}

func absolute(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}
