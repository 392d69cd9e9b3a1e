package cursor

import (
	"context"
	"image"
	"regexp"
)

// windowID names a top-level window on the desktop.
type windowID uint64

// windowInfo is what a window search sees of a window.
type windowInfo struct {
	ID    windowID
	Title string
	PID   int
}

// desktop is the window manager, mouse and keyboard of one display. Each
// platform implements it in a build-tagged file; every method that sends
// input is only ever called right after focused() said yes.
type desktop interface {
	// windows lists the top-level windows whose title matches (and, when
	// pid > 0, that belong to pid).
	windows(title *regexp.Regexp, pid int) ([]windowInfo, error)
	// exists reports whether w is still open.
	exists(w windowID) (bool, error)
	// activate asks for w to become the active window and waits until it
	// holds the keyboard focus, or ctx ends.
	activate(ctx context.Context, w windowID) error
	// focused reports whether w is the active window and holds the
	// keyboard focus, so keys pressed now reach it.
	focused(w windowID) (bool, error)
	// bounds is w's client area in screen coordinates; errNoBounds where
	// the platform cannot tell.
	bounds(w windowID) (image.Rectangle, error)
	// pointer is where the mouse pointer is.
	pointer() (image.Point, error)
	click(p image.Point) error
	// move puts the mouse pointer at p without clicking.
	move(p image.Point) error
	// settle returns once the app has taken the last click, so that a key
	// pressed next does not reach it first; where the platform tells by
	// the pointer's move, it moves it to away.
	settle(away image.Point) error
	key(c chord) error
	// capture returns the pixels of r on the screen, to compare with
	// another capture of the same rectangle.
	capture(r image.Rectangle) ([]byte, error)
	// shot returns the pixels of r as colours, to read what they show.
	shot(r image.Rectangle) (*image.RGBA, error)
	close()
}
