package xvfb

import (
	"encoding/hex"
	"io"
	"log"
	"net"
	"strings"

	"github.com/jezek/xgb"
	"github.com/jezek/xgbutil"
	"github.com/jezek/xgbutil/ewmh"
)

func init() {
	// xgb logs to stderr on every connection that lacks authority info and
	// on connection loss; errors reach callers as return values anyway.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// wmRunning reports whether an EWMH window manager has announced itself on
// the display.
func wmRunning(d *Display) (bool, error) {
	// Dial with the cookie directly: this process's XAUTHORITY, if any,
	// belongs to the developer's session, not to this display.
	sock, err := net.Dial("unix", "/tmp/.X11-unix/X"+strings.TrimPrefix(d.Name, ":"))
	if err != nil {
		return false, err
	}
	c, err := xgb.NewConnNetWithCookieHex(sock, hex.EncodeToString(d.cookie))
	if err != nil {
		sock.Close()
		return false, err
	}
	xu, err := xgbutil.NewConnXgb(c)
	if err != nil {
		c.Close()
		return false, err
	}
	defer xu.Conn().Close()
	_, err = ewmh.GetEwmhWM(xu)
	return err == nil, err
}
