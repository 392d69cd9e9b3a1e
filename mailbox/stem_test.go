package mailbox

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzSafeStem holds the byte-by-byte check to the regular expression it
// replaced.
func FuzzSafeStem(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`)
	for _, s := range []string{"", "a", "msg_20261126_184559_1361008be259", "_x", "-x", "9-x", "a.b", "a/b", "{{uuid}}", "x\n", "é", strings.Repeat("a", 100), strings.Repeat("a", 101)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := safeStem(s), re.MatchString(s); got != want {
			t.Fatalf("safeStem(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
