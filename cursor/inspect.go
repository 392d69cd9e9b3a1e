package cursor

import (
	"fmt"
	"image"
	"regexp"
)

// WindowMatch is a window found by FindWindows.
type WindowMatch struct {
	Title  string
	PID    int
	Bounds image.Rectangle // client area on the screen; empty where unknown
}

// CheckDesktop opens the display the way a GUI turn would and reports why
// it cannot, for `agentctl doctor`.
func CheckDesktop() error {
	d, err := openDesktop()
	if err != nil {
		return err
	}
	d.close()
	return nil
}

// FindWindows lists the windows a GUI agent with this title pattern (and
// pid, if > 0) would consider. It sends no input.
func FindWindows(title string, pid int) ([]WindowMatch, error) {
	re, err := regexp.Compile(title)
	if err != nil {
		return nil, fmt.Errorf("window title: %w", err)
	}
	d, err := openDesktop()
	if err != nil {
		return nil, err
	}
	defer d.close()
	found, err := d.windows(re, pid)
	if err != nil {
		return nil, err
	}
	out := make([]WindowMatch, len(found))
	for i, f := range found {
		out[i] = WindowMatch{Title: f.Title, PID: f.PID}
		if b, err := d.bounds(f.ID); err == nil {
			out[i].Bounds = b
		}
	}
	return out, nil
}

// Pointer returns where the mouse pointer is, for guided calibration.
func Pointer() (image.Point, error) {
	d, err := openDesktop()
	if err != nil {
		return image.Point{}, err
	}
	defer d.close()
	return d.pointer()
}
