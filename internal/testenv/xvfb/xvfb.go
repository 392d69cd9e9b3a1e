// Package xvfb starts a private, headless X display for agentctl's GUI tests
// and its demo: an Xvfb server plus an EWMH window manager
// (matchbox-window-manager, or openbox), reachable only with a fresh random
// cookie.
//
// It exists so that nothing agentctl runs for testing or demonstration ever
// drives the developer's real screen. Start never reads or changes the
// caller's DISPLAY; it returns the new display's environment, and callers set
// it (or pass it to child processes) themselves.
//
// The package owns only the lifetime of the two processes and the folder
// holding the cookie. Both children get a parent-death signal, so a crashed
// test leaves no server behind, and Stop ends them with SIGTERM, which lets
// Xvfb remove its socket and lock files (SIGKILL leaves them behind).
package xvfb

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Options says what kind of screen to start. Zero values take defaults.
type Options struct {
	Width, Height int // screen size in pixels; default 1280×800
	// WindowManager is Matchbox (the default: small, no decorations; it
	// places only dialog windows where they ask, and maximises the rest)
	// or Openbox (places every window, Chromium's included, where it asks).
	WindowManager string
}

// Window managers for Options.WindowManager.
const (
	Matchbox = "matchbox"
	Openbox  = "openbox"
)

// Display is a running private X display and its window manager.
type Display struct {
	// Name is the DISPLAY value, such as ":12".
	Name string
	// Authority is the path of the Xauthority file holding the cookie.
	Authority string

	dir    string
	cookie []byte
	stop   func() error
}

// Env returns the environment entries a client needs to reach the display.
func (d *Display) Env() []string {
	return []string{"DISPLAY=" + d.Name, "XAUTHORITY=" + d.Authority}
}

// Setenv points this process at the display. It must be called before the
// first X connection is opened (robotgo, for one, caches its connection and
// falls back to :0.0, the developer's screen, when DISPLAY is unset).
func (d *Display) Setenv() error {
	if err := os.Setenv("DISPLAY", d.Name); err != nil {
		return err
	}
	return os.Setenv("XAUTHORITY", d.Authority)
}

// Stop ends the window manager and the server and removes the cookie. It is
// safe to call more than once.
func (d *Display) Stop() error {
	if d.stop == nil {
		return nil
	}
	err := d.stop()
	d.stop = nil
	return errors.Join(err, os.RemoveAll(d.dir))
}

// ErrUnsupported is returned by Start on systems without Xvfb.
var ErrUnsupported = errors.New("a private X display needs Linux with Xvfb")

// Start launches Xvfb on a free display number with a random cookie, then an
// EWMH window manager, and returns once the window manager has announced
// itself, so windows opened afterwards are managed. It waits as long as
// ctx lasts, with no deadline of its own: a test gives it poll.Context,
// so that a loaded machine only slows the start.
func Start(ctx context.Context, opts Options) (*Display, error) {
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 800
	}
	dir, err := os.MkdirTemp("", "agentctl-xvfb-")
	if err != nil {
		return nil, fmt.Errorf("cannot start Xvfb: %w", err)
	}
	auth := filepath.Join(dir, "Xauthority")
	cookie, err := writeCookie(auth)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot start Xvfb: %w", err)
	}
	d := &Display{Authority: auth, dir: dir, cookie: cookie}
	if err := start(ctx, d, opts); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return d, nil
}

// writeCookie writes an Xauthority file with one MIT-MAGIC-COOKIE-1 entry
// that matches any address and display number (FamilyWild, empty number):
// the display number is only known once Xvfb has picked it.
func writeCookie(path string) ([]byte, error) {
	cookie := make([]byte, 16)
	if _, err := rand.Read(cookie); err != nil {
		return nil, err
	}
	var b []byte
	b = binary.BigEndian.AppendUint16(b, 0xffff) // FamilyWild
	for _, field := range [][]byte{nil, nil, []byte("MIT-MAGIC-COOKIE-1"), cookie} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(field)))
		b = append(b, field...)
	}
	return cookie, os.WriteFile(path, b, 0o600)
}
