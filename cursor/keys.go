package cursor

import (
	"fmt"
	"runtime"
	"strings"
)

// chord is a key with the modifiers held while it is pressed.
type chord struct {
	key  string
	mods []string
}

func (c chord) String() string {
	return strings.Join(append(append([]string{}, c.mods...), c.key), "+")
}

var modifierNames = map[string]string{
	"ctrl": "ctrl", "control": "ctrl", "shift": "shift", "alt": "alt",
	"cmd": "cmd", "command": "cmd", "super": "cmd", "win": "cmd",
}

var keyNames = map[string]string{
	"enter": "enter", "return": "enter", "tab": "tab", "escape": "esc", "esc": "esc",
	"space": "space", "backspace": "backspace", "delete": "delete",
	"home": "home", "end": "end", "up": "up", "down": "down", "left": "left", "right": "right",
	// The context-menu key, which opens the focused element's menu.
	"menu": "menu",
}

// primaryModifier is the modifier of copy, paste and friends: Cmd on macOS,
// Ctrl elsewhere. "mod" in a configured chord means it.
func primaryModifier() string {
	if runtime.GOOS == "darwin" {
		return "cmd"
	}
	return "ctrl"
}

// parseChord reads "enter", "ctrl+enter", "mod+n" or "ctrl+shift+c".
func parseChord(s string) (chord, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "+")
	var c chord
	for i, p := range parts {
		if i < len(parts)-1 {
			if p == "mod" {
				c.mods = append(c.mods, primaryModifier())
				continue
			}
			m, ok := modifierNames[p]
			if !ok {
				return chord{}, fmt.Errorf("key %q: %q is not a modifier (ctrl, shift, alt, cmd or mod)", s, p)
			}
			c.mods = append(c.mods, m)
			continue
		}
		switch k, named := keyNames[p]; {
		case named:
			c.key = k
		case len(p) == 1 && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= '0' && p[0] <= '9'):
			c.key = p
		case len(p) >= 2 && len(p) <= 3 && p[0] == 'f' && p[1] >= '1' && p[1] <= '9':
			c.key = p
		default:
			return chord{}, fmt.Errorf("key %q: %q is not a key agentctl can press", s, p)
		}
	}
	return c, nil
}

func mustChord(s string) chord {
	c, err := parseChord(s)
	if err != nil {
		panic(err)
	}
	return c
}
