//go:build linux && !nogui

package cursor

import (
	"fmt"
	"testing"
)

// BenchmarkGUIThreeSeats is BenchmarkCDPThreeSeats through the GUI driver:
// three stand-in Chromium windows on one desktop, whose turns take turns
// at the desktop input lock.
func BenchmarkGUIThreeSeats(b *testing.B) {
	lockDir := b.TempDir()
	var ds []Driver
	for i := range 3 {
		chat := startChromium(b, chatOptions{title: fmt.Sprintf("Agent-%d - Cursor", i+1), x: 10 + 430*i, y: 10, shape: seatShape})
		ds = append(ds, newTestGUI(b, chat.window(), lockDir))
	}
	runSeats(b, ds)
}
