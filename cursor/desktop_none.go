//go:build nogui || !(linux || windows)

package cursor

import (
	"errors"
	"fmt"
	"runtime"
)

var errNoBounds = errors.New("window bounds unknown")

// openDesktop fails: this build has no way to confirm which window has the
// focus, and a GUI turn never types without that.
func openDesktop() (desktop, error) {
	switch runtime.GOOS {
	case "linux", "windows":
		return nil, fmt.Errorf("%w: this agentctl was built with the nogui tag; rebuild without it", ErrGUIUnavailable)
	default:
		return nil, fmt.Errorf("%w: %s cannot confirm the active window without cgo; use driver: exec", ErrGUIUnavailable, runtime.GOOS)
	}
}
