//go:build linux && !nogui

package cursor

import (
	"testing"

	"github.com/atotto/clipboard"

	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// An app whose copy goes to the desktop's clipboard, out of the page's
// reach (an Electron app's main process), is read with cdp.clipboard:
// system: the copy action writes the real clipboard of a shown Chromium
// on the test's own display, the reply comes back exactly, and the
// person's clipboard is given back.
func TestCDPSystemClipboardReadsAnAppThatCopiesOutsideThePage(t *testing.T) {
	needDisplay(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	shown, err := chromium.StartShown(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shown.Stop)
	b := &cdpBrowser{Browser: shown, endpoint: shown.Endpoint}
	c := b.openChatPage(t, "Cursor - system clipboard", classic, 0)
	seat := c.seat()
	seat.Clipboard = ClipboardSystem
	d, err := NewCDP(seat, cdpTestGUI(), Options{LockDir: t.TempDir(), Agent: "Agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	const mine = "the person's own clipboard"
	if err := clipboard.WriteAll(mine); err != nil {
		t.Fatal(err)
	}
	cdpRoundTrips(t, d, c, classic)
	if got, err := clipboard.ReadAll(); err != nil || got != mine {
		t.Fatalf("the clipboard holds %q (%v) after the turns, want the person's %q back", got, err, mine)
	}

}
