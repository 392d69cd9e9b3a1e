//go:build windows && !nogui

package cursor

import (
	"context"
	"errors"
	"fmt"
	"image"
	"regexp"
	"syscall"
	"time"
	"unsafe"

	robotgo "github.com/go-vgo/robotgo/win"
	"github.com/kbinani/screenshot"
	"golang.org/x/sys/windows"
)

var errNoBounds = errors.New("window bounds unknown")

var (
	user32                   = windows.NewLazySystemDLL("user32.dll")
	procEnumWindows          = user32.NewProc("EnumWindows")
	procGetWindowTextW       = user32.NewProc("GetWindowTextW")
	procGetWindowTextLengthW = user32.NewProc("GetWindowTextLengthW")
	procIsWindowVisible      = user32.NewProc("IsWindowVisible")
	procIsWindow             = user32.NewProc("IsWindow")
	procGetForegroundWindow  = user32.NewProc("GetForegroundWindow")
	procSetForegroundWindow  = user32.NewProc("SetForegroundWindow")
	procGetClientRect        = user32.NewProc("GetClientRect")
	procClientToScreen       = user32.NewProc("ClientToScreen")
	procGetWindowThreadPID   = user32.NewProc("GetWindowThreadProcessId")
)

// winDesktop finds windows with EnumWindows and confirms the foreground
// window before each input; input goes through robotgo's pure-Go backend.
type winDesktop struct{}

func openDesktop() (desktop, error) { return winDesktop{}, nil }

func (winDesktop) close() {}

func windowText(h uintptr) string {
	n, _, _ := procGetWindowTextLengthW.Call(h)
	if n == 0 {
		return ""
	}
	buf := make([]uint16, n+1)
	procGetWindowTextW.Call(h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return windows.UTF16ToString(buf)
}

func (winDesktop) windows(title *regexp.Regexp, pid int) ([]windowInfo, error) {
	var found []windowInfo
	cb := syscall.NewCallback(func(h, _ uintptr) uintptr {
		if v, _, _ := procIsWindowVisible.Call(h); v == 0 {
			return 1
		}
		info := windowInfo{ID: windowID(h), Title: windowText(h)}
		var p uint32
		procGetWindowThreadPID.Call(h, uintptr(unsafe.Pointer(&p)))
		info.PID = int(p)
		if title.MatchString(info.Title) && (pid <= 0 || info.PID == pid) {
			found = append(found, info)
		}
		return 1
	})
	procEnumWindows.Call(cb, 0)
	return found, nil
}

func (winDesktop) exists(w windowID) (bool, error) {
	ok, _, _ := procIsWindow.Call(uintptr(w))
	return ok != 0, nil
}

func (d winDesktop) activate(ctx context.Context, w windowID) error {
	procSetForegroundWindow.Call(uintptr(w))
	for {
		if ok, _ := d.focused(w); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (winDesktop) focused(w windowID) (bool, error) {
	fg, _, _ := procGetForegroundWindow.Call()
	return windowID(fg) == w, nil
}

func (winDesktop) bounds(w windowID) (image.Rectangle, error) {
	var r struct{ Left, Top, Right, Bottom int32 }
	if ok, _, _ := procGetClientRect.Call(uintptr(w), uintptr(unsafe.Pointer(&r))); ok == 0 {
		return image.Rectangle{}, errNoBounds
	}
	pt := struct{ X, Y int32 }{}
	if ok, _, _ := procClientToScreen.Call(uintptr(w), uintptr(unsafe.Pointer(&pt))); ok == 0 {
		return image.Rectangle{}, errNoBounds
	}
	min := image.Pt(int(pt.X), int(pt.Y))
	return image.Rectangle{Min: min, Max: min.Add(image.Pt(int(r.Right-r.Left), int(r.Bottom-r.Top)))}, nil
}

func (winDesktop) pointer() (image.Point, error) {
	x, y := robotgo.Location()
	return image.Pt(x, y), nil
}

// clickSettle is how long click waits after the button is released, so
// that the key pressed next is not taken apart by what the click set off:
// under Wine the moved pointer reaches the X server afterwards, and the
// events it brings back can reset the modifier keys, so a Ctrl held for
// Ctrl+A right after a click was sometimes dropped and a bare "a" typed.
const clickSettle = 150 * time.Millisecond

// settle has nothing to wait for: click waited clickSettle, and moving the
// pointer right before a key is what resets its modifiers under Wine.
func (winDesktop) settle(image.Point) error { return nil }

func (winDesktop) click(p image.Point) error {
	robotgo.Move(p.X, p.Y)
	if err := robotgo.Click("left"); err != nil {
		return err
	}
	time.Sleep(clickSettle)
	return nil
}

func (winDesktop) move(p image.Point) error {
	robotgo.Move(p.X, p.Y)
	return nil
}

func (winDesktop) key(c chord) error {
	mods := make([]any, len(c.mods))
	for i, m := range c.mods {
		mods[i] = m
	}
	return robotgo.KeyTap(c.key, mods...)
}

func (winDesktop) shot(r image.Rectangle) (*image.RGBA, error) {
	img, err := screenshot.Capture(r.Min.X, r.Min.Y, r.Dx(), r.Dy())
	if err != nil {
		return nil, fmt.Errorf("cannot take a screenshot of the chat: %w", err)
	}
	return img, nil
}

func (winDesktop) capture(r image.Rectangle) ([]byte, error) {
	img, err := screenshot.Capture(r.Min.X, r.Min.Y, r.Dx(), r.Dy())
	if err != nil {
		return nil, fmt.Errorf("cannot take a screenshot of the chat: %w", err)
	}
	return img.Pix, nil
}
