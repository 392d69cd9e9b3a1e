package cursor

import (
	"runtime"
	"testing"
)

func TestParseChord(t *testing.T) {
	mod := "ctrl"
	if runtime.GOOS == "darwin" {
		mod = "cmd"
	}
	for in, want := range map[string]string{
		"enter":        "enter",
		"Return":       "enter",
		"ctrl+enter":   "ctrl+enter",
		"mod+n":        mod + "+n",
		"ctrl+shift+c": "ctrl+shift+c",
		"cmd+t":        "cmd+t",
		"f5":           "f5",
	} {
		c, err := parseChord(in)
		if err != nil || c.String() != want {
			t.Errorf("parseChord(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"", "ctrl+", "hyper+n", "ctrl+é", "enter+ctrl"} {
		if _, err := parseChord(bad); err == nil {
			t.Errorf("parseChord(%q) succeeded", bad)
		}
	}
}
