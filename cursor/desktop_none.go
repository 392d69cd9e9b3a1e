//go:build !(linux && x11) && !(windows && win)

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
	case "linux":
		return nil, fmt.Errorf("%w: rebuild with CGO_ENABLED=0 go build -tags x11", ErrGUIUnavailable)
	case "windows":
		return nil, fmt.Errorf("%w: rebuild with go build -tags win", ErrGUIUnavailable)
	default:
		return nil, fmt.Errorf("%w: %s cannot confirm the active window without cgo; use driver: exec", ErrGUIUnavailable, runtime.GOOS)
	}
}
