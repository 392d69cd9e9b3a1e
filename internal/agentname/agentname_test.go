package agentname

import (
	"regexp"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, ok := range []string{"Agent-1", "Agent-12", "Reviewer", "captain_4", "A", "Console", "COM10", "LPT", "Nullius"} {
		if err := Valid(ok); err != nil {
			t.Errorf("Valid(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Agent 1", "../Agent-1", "Agent/1", `Agent\1`, "..", ".hidden", "-x", "1st", "Agent-1\n", "ä", string(make([]byte, 65)),
		"CON", "nul", "Aux", "PRN", "COM1", "lpt9"} {
		if Valid(bad) == nil {
			t.Errorf("Valid(%q) accepted it", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	known := []string{"Agent-1", "Agent-2", "Reviewer"}
	for in, want := range map[string]string{"agent-2": "Agent-2", "AGENT-1": "Agent-1", "reviewer": "Reviewer"} {
		if got, err := Resolve(known, in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Agent-3", "Agent", "../Agent-1"} {
		if got, err := Resolve(known, bad); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzWellFormed holds the byte-by-byte check to the regular expression
// it replaced.
func FuzzWellFormed(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	for _, s := range []string{"", "A", "Agent-1", "Agent-1\n", "a_b-C9", "-x", "1st", "ä", "Aä", strings.Repeat("a", 64), strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := wellFormed(s), re.MatchString(s); got != want {
			t.Fatalf("wellFormed(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
