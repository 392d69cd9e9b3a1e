//go:build linux && !nogui

package cursor

import (
	"fmt"
	"image"
	"time"

	robotgo "github.com/go-vgo/robotgo/x11"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// x11Input sends keys and clicks through XTEST on the desktop's own
// connection, press and release back to back: the server delivers them in
// order, and the driver waits where a key must show something before the
// next. (robotgo holds each key 5 ms and each button 10 ms, a tenth of a
// second over a turn's twenty keys.) A key the keyboard map lacks goes
// through robotgo, which maps it to a spare keycode first.
type x11Input struct {
	keycodes map[uint32]xproto.Keycode // keysym → keycode, from the first column
	xfixes   bool                      // the server tells which cursor it shows

	clicked      uint32 // the cursor shown where the last click went
	clickedKnown bool   // a click not yet known to have reached the app
}

// X keysyms of the keys a chord names (see keyNames and modifierNames).
var namedKeysyms = map[string]uint32{
	"enter": 0xff0d, "tab": 0xff09, "esc": 0xff1b, "space": 0x20, "backspace": 0xff08, "delete": 0xffff,
	"home": 0xff50, "end": 0xff57, "left": 0xff51, "up": 0xff52, "right": 0xff53, "down": 0xff54,
	"menu": 0xff67,
	"ctrl": 0xffe3, "shift": 0xffe1, "alt": 0xffe9, "cmd": 0xffeb,
}

func keysymOf(name string) (uint32, bool) {
	if ks, ok := namedKeysyms[name]; ok {
		return ks, true
	}
	switch {
	case len(name) == 1 && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= '0' && name[0] <= '9'):
		return uint32(name[0]), true
	case len(name) >= 2 && len(name) <= 3 && name[0] == 'f':
		n := 0
		for _, r := range name[1:] {
			if r < '0' || r > '9' {
				return 0, false
			}
			n = n*10 + int(r-'0')
		}
		if n >= 1 && n <= 35 {
			return 0xffbe + uint32(n-1), true
		}
	}
	return 0, false
}

func (d *x11Desktop) initInput() error {
	c := d.xu.Conn()
	if err := xtest.Init(c); err != nil {
		return fmt.Errorf("the X server has no XTEST extension: %w", err)
	}
	setup := xproto.Setup(c)
	n := byte(setup.MaxKeycode - setup.MinKeycode + 1)
	m, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, n).Reply()
	if err != nil {
		return fmt.Errorf("cannot read the keyboard map: %w", err)
	}
	if xfixes.Init(c) == nil {
		_, err := xfixes.QueryVersion(c, 5, 0).Reply()
		d.in.xfixes = err == nil
	}
	d.in.keycodes = map[uint32]xproto.Keycode{}
	per := int(m.KeysymsPerKeycode)
	for i := 0; per > 0 && (i+1)*per <= len(m.Keysyms); i++ {
		ks := uint32(m.Keysyms[i*per])
		if _, seen := d.in.keycodes[ks]; ks != 0 && !seen {
			d.in.keycodes[ks] = setup.MinKeycode + xproto.Keycode(i)
		}
	}
	return nil
}

// code is the keycode that types name unshifted.
func (d *x11Desktop) code(name string) (xproto.Keycode, bool) {
	ks, ok := keysymOf(name)
	if !ok {
		return 0, false
	}
	kc, ok := d.in.keycodes[ks]
	return kc, ok
}

func (d *x11Desktop) key(c chord) error {
	key, ok := d.code(c.key)
	mods := make([]xproto.Keycode, len(c.mods))
	for i, m := range c.mods {
		var found bool
		mods[i], found = d.code(m)
		ok = ok && found
	}
	if !ok {
		args := make([]any, len(c.mods))
		for i, m := range c.mods {
			args[i] = m
		}
		return robotgo.KeyTap(c.key, args...)
	}
	conn, root := d.xu.Conn(), d.xu.RootWin()
	for _, m := range mods {
		xtest.FakeInput(conn, xproto.KeyPress, byte(m), 0, root, 0, 0, 0)
	}
	xtest.FakeInput(conn, xproto.KeyPress, byte(key), 0, root, 0, 0, 0)
	xtest.FakeInput(conn, xproto.KeyRelease, byte(key), 0, root, 0, 0, 0)
	for i := len(mods) - 1; i >= 0; i-- {
		xtest.FakeInput(conn, xproto.KeyRelease, byte(mods[i]), 0, root, 0, 0, 0)
	}
	return d.sync()
}

func (d *x11Desktop) click(p image.Point) error {
	conn, root := d.xu.Conn(), d.xu.RootWin()
	if err := d.pointTo(p); err != nil {
		return err
	}
	d.in.clicked, d.in.clickedKnown = d.cursorSerial()
	xtest.FakeInput(conn, xproto.ButtonPress, 1, 0, root, 0, 0, 0)
	xtest.FakeInput(conn, xproto.ButtonRelease, 1, 0, root, 0, 0, 0)
	return d.sync()
}

// pointTo moves the pointer to p and returns once the app under it has
// taken the move, which it shows by setting its cursor there (a text
// box's I-beam), or after pointerSettle where the cursor stays the same.
func (d *x11Desktop) pointTo(p image.Point) error {
	conn, root := d.xu.Conn(), d.xu.RootWin()
	if q, err := xproto.QueryPointer(conn, root).Reply(); err == nil && int(q.RootX) == p.X && int(q.RootY) == p.Y {
		return nil
	}
	before, known := d.cursorSerial()
	xtest.FakeInput(conn, xproto.MotionNotify, 0, 0, root, int16(p.X), int16(p.Y), 0)
	if err := d.sync(); err != nil || !known {
		return err
	}
	d.cursorLeaves(before)
	return nil
}

// cursorLeaves waits up to pointerSettle for the server to show another
// cursor than serial.
func (d *x11Desktop) cursorLeaves(serial uint32) {
	for deadline := time.Now().Add(pointerSettle); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if now, _ := d.cursorSerial(); now != serial {
			return
		}
	}
}

// pointerSettle bounds waiting for an app to show it took a pointer move.
// Chromium holds mouse events behind a pending move until its next frame
// while keys go ahead.
const pointerSettle = 100 * time.Millisecond

// cursorSerial names the cursor the server shows now (XFixes).
func (d *x11Desktop) cursorSerial() (uint32, bool) {
	if !d.in.xfixes {
		return 0, false
	}
	r, err := xfixes.GetCursorImage(d.xu.Conn()).Reply()
	if err != nil {
		return 0, false
	}
	return r.CursorSerial, true
}

func (d *x11Desktop) move(p image.Point) error {
	xtest.FakeInput(d.xu.Conn(), xproto.MotionNotify, 0, 0, d.xu.RootWin(), int16(p.X), int16(p.Y), 0)
	return d.sync()
}

// settle moves the pointer to away and returns once the app took the last
// click: Chromium delivers a click to the page at its next frame, after
// keys pressed meanwhile, so that its focus undid theirs (a click into VS
// Code's input box refocused it after Ctrl+Up had moved to the last
// reply). Mouse events reach the page in order, so the app showing its
// cursor for away (the pointer left the clicked text box's I-beam) tells
// the click went before; where the cursor stays the same, settle waits
// pointerSettle.
func (d *x11Desktop) settle(away image.Point) error {
	if err := d.move(away); err != nil {
		return err
	}
	if d.in.clickedKnown {
		d.in.clickedKnown = false
		d.cursorLeaves(d.in.clicked)
	}
	return nil
}

// sync returns once the server has taken every request sent before: a
// request with a reply comes back only after them.
func (d *x11Desktop) sync() error {
	if _, err := xproto.GetInputFocus(d.xu.Conn()).Reply(); err != nil {
		return fmt.Errorf("the X server did not take the input: %w", err)
	}
	return nil
}

// capture reads the screen's pixels in r (what lies outside the screen is
// left out) over the desktop's connection, as the server holds them: they
// are only ever compared with each other.
func (d *x11Desktop) capture(r image.Rectangle) ([]byte, error) {
	screen := d.xu.Screen()
	r = r.Intersect(image.Rect(0, 0, int(screen.WidthInPixels), int(screen.HeightInPixels)))
	if r.Empty() {
		return nil, nil
	}
	img, err := xproto.GetImage(d.xu.Conn(), xproto.ImageFormatZPixmap, xproto.Drawable(d.xu.RootWin()),
		int16(r.Min.X), int16(r.Min.Y), uint16(r.Dx()), uint16(r.Dy()), 0xffffffff).Reply()
	if err != nil {
		return nil, fmt.Errorf("cannot take a screenshot of the chat: %w", err)
	}
	return img.Data, nil
}

// shot reads r's pixels as colours. The X server sends a depth-24 screen
// as 32-bit pixels, blue first in LSB-first byte order; other layouts
// are refused rather than read wrong.
func (d *x11Desktop) shot(r image.Rectangle) (*image.RGBA, error) {
	setup := xproto.Setup(d.xu.Conn())
	if d.xu.Screen().RootDepth != 24 || setup.ImageByteOrder != xproto.ImageOrderLSBFirst || bitsPerPixel(setup, 24) != 32 {
		return nil, fmt.Errorf("cannot read the screen's colours: its pixel layout (depth %d) is not the 32-bit one agentctl reads", d.xu.Screen().RootDepth)
	}
	data, err := d.capture(r)
	if err != nil {
		return nil, err
	}
	r = r.Intersect(image.Rect(0, 0, int(d.xu.Screen().WidthInPixels), int(d.xu.Screen().HeightInPixels)))
	img := image.NewRGBA(r)
	if len(data) < 4*r.Dx()*r.Dy() {
		return nil, fmt.Errorf("cannot read the screen's colours: %d bytes for %v", len(data), r)
	}
	for i := range r.Dx() * r.Dy() {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = data[4*i+2], data[4*i+1], data[4*i], 0xff
	}
	return img, nil
}

func bitsPerPixel(setup *xproto.SetupInfo, depth byte) byte {
	for _, f := range setup.PixmapFormats {
		if f.Depth == depth {
			return f.BitsPerPixel
		}
	}
	return 0
}
