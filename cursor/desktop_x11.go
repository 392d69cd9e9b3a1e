//go:build linux && !nogui

package cursor

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log"
	"os"
	"regexp"
	"time"

	robotgo "github.com/go-vgo/robotgo/x11"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgbutil"
	"github.com/jezek/xgbutil/ewmh"
	"github.com/jezek/xgbutil/icccm"
)

var errNoBounds = errors.New("window bounds unknown")

// x11Desktop finds and confirms windows through EWMH (robotgo's pid-based
// lookups abort on windows without _NET_WM_PID) and sends input through
// XTEST (input_x11.go).
type x11Desktop struct {
	xu *xgbutil.XUtil
	in x11Input
}

func openDesktop() (desktop, error) {
	// Never fall back to a default display: that is someone's real screen.
	if os.Getenv("DISPLAY") == "" {
		return nil, fmt.Errorf("%w: DISPLAY is not set", ErrGUIUnavailable)
	}
	// xgb logs to stderr on every connection without authority info;
	// failures still come back as errors.
	xgb.Logger = log.New(io.Discard, "", 0)
	xu, err := xgbutil.NewConn()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot connect to display %s: %v", ErrGUIUnavailable, os.Getenv("DISPLAY"), err)
	}
	if _, err := ewmh.GetEwmhWM(xu); err != nil {
		xu.Conn().Close()
		return nil, fmt.Errorf("%w: no EWMH window manager runs on display %s, so windows cannot be found or confirmed", ErrGUIUnavailable, os.Getenv("DISPLAY"))
	}
	d := &x11Desktop{xu: xu}
	if err := d.initInput(); err != nil {
		xu.Conn().Close()
		return nil, fmt.Errorf("%w: %v", ErrGUIUnavailable, err)
	}
	return d, nil
}

func (d *x11Desktop) close() {
	robotgo.Close()
	d.xu.Conn().Close()
}

func (d *x11Desktop) title(w xproto.Window) string {
	if name, err := ewmh.WmNameGet(d.xu, w); err == nil && name != "" {
		return name
	}
	name, _ := icccm.WmNameGet(d.xu, w)
	return name
}

func (d *x11Desktop) windows(title *regexp.Regexp, pid int) ([]windowInfo, error) {
	clients, err := ewmh.ClientListGet(d.xu)
	if err != nil {
		return nil, err
	}
	var found []windowInfo
	for _, w := range clients {
		info := windowInfo{ID: windowID(w), Title: d.title(w)}
		if p, err := ewmh.WmPidGet(d.xu, w); err == nil {
			info.PID = int(p)
		}
		if !title.MatchString(info.Title) || (pid > 0 && info.PID != pid) {
			continue
		}
		found = append(found, info)
	}
	return found, nil
}

func (d *x11Desktop) exists(w windowID) (bool, error) {
	clients, err := ewmh.ClientListGet(d.xu)
	if err != nil {
		return false, err
	}
	for _, c := range clients {
		if windowID(c) == w {
			return true, nil
		}
	}
	return false, nil
}

func (d *x11Desktop) activate(ctx context.Context, w windowID) error {
	if ok, err := d.focused(w); err == nil && ok {
		return nil
	}
	if err := ewmh.ActiveWindowReq(d.xu, xproto.Window(w)); err != nil {
		return err
	}
	for {
		ok, err := d.focused(w)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// focused asks both the window manager (_NET_ACTIVE_WINDOW) and the server
// (the input focus lies in w or a window inside it): keys go where the
// server's focus is, whatever the window manager believes.
func (d *x11Desktop) focused(w windowID) (bool, error) {
	active, err := ewmh.ActiveWindowGet(d.xu)
	if err != nil {
		return false, err
	}
	if windowID(active) != w {
		return false, nil
	}
	focus, err := xproto.GetInputFocus(d.xu.Conn()).Reply()
	if err != nil {
		return false, err
	}
	for win := focus.Focus; win != xproto.WindowNone && win != d.xu.RootWin(); {
		if windowID(win) == w {
			return true, nil
		}
		tree, err := xproto.QueryTree(d.xu.Conn(), win).Reply()
		if err != nil {
			return false, err
		}
		win = tree.Parent
	}
	return false, nil
}

func (d *x11Desktop) bounds(w windowID) (image.Rectangle, error) {
	geo, err := xproto.GetGeometry(d.xu.Conn(), xproto.Drawable(w)).Reply()
	if err != nil {
		return image.Rectangle{}, err
	}
	pos, err := xproto.TranslateCoordinates(d.xu.Conn(), xproto.Window(w), d.xu.RootWin(), 0, 0).Reply()
	if err != nil {
		return image.Rectangle{}, err
	}
	min := image.Pt(int(pos.DstX), int(pos.DstY))
	return image.Rectangle{Min: min, Max: min.Add(image.Pt(int(geo.Width), int(geo.Height)))}, nil
}

func (d *x11Desktop) pointer() (image.Point, error) {
	q, err := xproto.QueryPointer(d.xu.Conn(), d.xu.RootWin()).Reply()
	if err != nil {
		return image.Point{}, err
	}
	return image.Pt(int(q.RootX), int(q.RootY)), nil
}
