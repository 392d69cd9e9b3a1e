package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// handWritten is an agentctl.yaml as a person keeps it: comments aligned
// by hand, blank lines between sections, quotes of their choosing.
const handWritten = `# our swarm

agents:
  - name: Agent-1   # the planner

    driver: cdp     # through DevTools
    cdp:
      endpoint: http://127.0.0.1:9222   # Cursor, started by cursor launch
      target: 'Agent-1'                 # its window's title
      busy:     "#send.stop"            # chosen by hand

      reply: '.msg > div'
  # Agent-2 is a window
  - name: Agent-2
    window:
      title: 'Agent-2 .* Cursor'   # exactly one window
      input: [420, 610]            # the chat input

# the end
`

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(Path(root), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func readConfig(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(Path(root))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSetCDPChangesOnlyItsLines calibrates a hand-written file: a changed
// value keeps its line's comment and alignment, a new one is added at the
// block's indentation, a dropped one goes, and every other byte stays.
func TestSetCDPChangesOnlyItsLines(t *testing.T) {
	root := writeConfig(t, handWritten)
	c := CDP{Endpoint: "http://127.0.0.1:9333", Target: "Agent-1", Busy: "#send.stop", Profile: ProfileVSCode,
		Copy: `button[aria-label="Copy"]`, Quiet: Duration(30 * time.Millisecond)}
	if err := SetCDP(root, "Agent-1", c); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"      endpoint: http://127.0.0.1:9222   # Cursor", "      endpoint: http://127.0.0.1:9333   # Cursor",
		"\n      reply: '.msg > div'\n", "\n      profile: vscode\n      copy: button[aria-label=\"Copy\"]\n      quiet: 30ms\n",
	).Replace(handWritten)
	if got := readConfig(t, root); got != want {
		t.Fatalf("the file became:\n%s\nwant:\n%s", got, want)
	}
	cfg, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Agent("Agent-1")
	if a.CDP != c || a.Driver != DriverCDP {
		t.Fatalf("read back %+v (driver %q), want %+v", a.CDP, a.Driver, c)
	}

	// The same settings again: not a byte changes.
	if err := SetCDP(root, "Agent-1", c); err != nil {
		t.Fatal(err)
	}
	if got := readConfig(t, root); got != want {
		t.Fatalf("a second calibration changed the file:\n%s", got)
	}
}

// TestSetCDPAddsABlockWhereNoneWas makes a window agent a cdp seat: the
// driver and the cdp block go after its last line, nothing else moves.
func TestSetCDPAddsABlockWhereNoneWas(t *testing.T) {
	root := writeConfig(t, handWritten)
	if err := SetCDP(root, "Agent-2", CDP{Endpoint: "http://127.0.0.1:9222", Target: "Agent-2"}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(handWritten, "      input: [420, 610]            # the chat input\n",
		"      input: [420, 610]            # the chat input\n    driver: cdp\n    cdp:\n      endpoint: http://127.0.0.1:9222\n      target: Agent-2\n", 1)
	if got := readConfig(t, root); got != want {
		t.Fatalf("the file became:\n%s\nwant:\n%s", got, want)
	}
}

// TestSetWindowsChangesOnlyItsLines: guided calibration of a window keeps
// the file as written around the positions it changes.
func TestSetWindowsChangesOnlyItsLines(t *testing.T) {
	root := writeConfig(t, handWritten)
	w := Window{Title: "Agent-2 .* Cursor", Input: &Point{400, 600}, Copy: &Point{700, 300}}
	if err := SetWindows(root, map[string]Window{"Agent-2": w}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(handWritten, "      input: [420, 610]            # the chat input\n",
		"      input: [400, 600]            # the chat input\n      copy: [700, 300]\n", 1)
	if got := readConfig(t, root); got != want {
		t.Fatalf("the file became:\n%s\nwant:\n%s", got, want)
	}
}

// TestSetWindowsOnTheInitialConfig keeps agentctl init's file, comments
// and all, with only the agent's window added.
func TestSetWindowsOnTheInitialConfig(t *testing.T) {
	initial := Initial([]string{"Agent-1", "Agent-2"})
	root := writeConfig(t, string(initial))
	if err := SetWindows(root, map[string]Window{"Agent-1": {Title: "Agent-1", Input: &Point{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(initial), "  - name: Agent-1\n", "  - name: Agent-1\n    window:\n      title: Agent-1\n      input: [1, 2]\n", 1)
	if got := readConfig(t, root); got != want {
		t.Fatalf("the file became:\n%s", got)
	}
}

// TestSetCDPAddsToAHandWrittenBlockAtTheEntrysEnd: a cdp block that ends
// the agent's entry gets its new settings inside it, the driver after it.
func TestSetCDPAddsToAHandWrittenBlockAtTheEntrysEnd(t *testing.T) {
	text := "agents:\n  - name: Agent-1\n    cdp:\n      read: rendered\n  - name: Agent-2\n"
	root := writeConfig(t, text)
	if err := SetCDP(root, "Agent-1", CDP{Endpoint: "http://127.0.0.1:9222", Target: "A", Read: ReadRendered}); err != nil {
		t.Fatal(err)
	}
	want := "agents:\n  - name: Agent-1\n    cdp:\n      read: rendered\n      endpoint: http://127.0.0.1:9222\n      target: A\n    driver: cdp\n  - name: Agent-2\n"
	if got := readConfig(t, root); got != want {
		t.Fatalf("the file became:\n%s\nwant:\n%s", got, want)
	}
}
