//go:build linux && !nogui

package agents

import (
	"fmt"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/xvfb"
)

// TestVSCodeChatWholeLoopGUI is TestVSCodeChatWholeLoop for a GUI seat:
// VS Code's chat view in a Chromium window on a private X display, which
// the GUI driver works with the vscode profile through the display's
// keyboard, mouse, screen and clipboard, calibrated as a user would.
// Every prompt must reach the chat exactly as rendered, every reply come
// back exactly as the chat gave it, and every block's effects happen once.
// A reply VS Code ends in an error must be refused for the error mark the
// chat shows at its end (its copies hold only what came before). Replies
// running past the chat's view are not tried so: the seat cannot see
// their end, and passes them on with a note saying so.
func TestVSCodeChatWholeLoopGUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts code-server, Chromium and a private X display")
	}
	codeserver.Need(t)
	usePrivateDisplayWith(t, xvfb.Options{WindowManager: xvfb.Openbox}) // places the window where it asks
	runVSCodeWholeLoop(t, startVSCodeGUISeat(t, vscodeReplies(t)), vscodeEnd{"error", "error mark"})
}

// startVSCodeGUISeat starts code-server and opens its workbench in a
// Chromium window on the display, and configures Agent-1 as a GUI seat on
// it in agentctl.yaml: the window's title and the points a user
// calibrates, the vscode profile bringing the copy route.
func startVSCodeGUISeat(t *testing.T, replies string) *vscodeSeat {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	s := startCodeServer(t, ctx, replies)
	win, err := s.OpenWindow(ctx, t.TempDir(), 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(win.Close)
	c := win.Calibration()
	seat := fmt.Sprintf(`    driver: gui
    window:
      title: '%s'
      profile: %s
      input: [%d, %d]
      busy: [%d, %d]
      reply: [%d, %d, %d, %d]
`, c.Title, c.Profile, c.Input.X, c.Input.Y, c.Busy.X, c.Busy.Y, c.Reply.X, c.Reply.Y, c.Reply.W, c.Reply.H)
	// VS Code takes a prompt late right after a long reply: over a second
	// to show an Enter in its composer.
	return newVSCodeRuntime(t, s, seat, "gui:\n  submit: 5s\n  turn_timeout: 6m\n")
}
