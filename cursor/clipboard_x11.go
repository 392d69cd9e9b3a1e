//go:build linux && !nogui

package cursor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/atotto/clipboard"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

func init() {
	systemClipboard = func() clipboardBackend {
		if c := x11Clip(); c != nil {
			return c
		}
		return toolClipboard{}
	}
}

var (
	x11ClipMu   sync.Mutex
	x11ClipConn *x11Clipboard
)

// x11Clip is this process's connection for the clipboard, opened at first
// use and again after the server went away; nil without a display.
func x11Clip() *x11Clipboard {
	x11ClipMu.Lock()
	defer x11ClipMu.Unlock()
	if c := x11ClipConn; c != nil {
		select {
		case <-c.dead:
		default:
			return c
		}
	}
	x11ClipConn = nil
	if os.Getenv("DISPLAY") == "" {
		return nil
	}
	c, err := openX11Clipboard()
	if err != nil {
		return nil
	}
	x11ClipConn = c
	return c
}

// x11Clipboard owns the CLIPBOARD selection with a window of its own and
// serves its text to the apps that ask (ICCCM), so that it learns from the
// server when an app read the text (a SelectionRequest) and when an app
// took the clipboard over (a SelectionClear).
type x11Clipboard struct {
	c        *xgb.Conn
	win      xproto.Window
	maxServe int    // the largest text one property holds; larger goes through the tool
	idMask   uint32 // the bits of a window's id its client picks (the rest name the client)
	dead     chan struct{}

	a struct {
		clipboard, targets, utf8, str, text, plain, plainUTF8, incr, prop xproto.Atom
	}

	mu     sync.Mutex
	text   string
	owned  bool
	lost   chan struct{} // closed when an app takes the clipboard over
	served chan struct{} // closed when an app read text of this write
	asked  chan struct{} // gets a value at each request for this write
	notify chan xproto.SelectionNotifyEvent

	readMu sync.Mutex // one conversion at a time
}

func openX11Clipboard() (*x11Clipboard, error) {
	xgb.Logger = log.New(io.Discard, "", 0)
	c, err := xgb.NewConn()
	if err != nil {
		return nil, err
	}
	k := &x11Clipboard{c: c, dead: make(chan struct{}), notify: make(chan xproto.SelectionNotifyEvent, 1)}
	setup := xproto.Setup(c)
	screen := setup.DefaultScreen(c)
	// ChangeProperty's fixed part is 24 bytes.
	k.maxServe = int(setup.MaximumRequestLength)*4 - 64
	k.idMask = setup.ResourceIdMask
	for _, a := range []struct {
		name string
		at   *xproto.Atom
	}{
		{"CLIPBOARD", &k.a.clipboard}, {"TARGETS", &k.a.targets}, {"UTF8_STRING", &k.a.utf8},
		{"STRING", &k.a.str}, {"TEXT", &k.a.text}, {"text/plain", &k.a.plain},
		{"text/plain;charset=utf-8", &k.a.plainUTF8}, {"INCR", &k.a.incr}, {"AGENTCTL_CLIPBOARD", &k.a.prop},
	} {
		r, err := xproto.InternAtom(c, false, uint16(len(a.name)), a.name).Reply()
		if err != nil {
			c.Close()
			return nil, err
		}
		*a.at = r.Atom
	}
	if k.win, err = xproto.NewWindowId(c); err != nil {
		c.Close()
		return nil, err
	}
	if err := xproto.CreateWindowChecked(c, 0, k.win, screen.Root, -10, -10, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, 0, nil).Check(); err != nil {
		c.Close()
		return nil, err
	}
	go k.events()
	return k, nil
}

func (k *x11Clipboard) events() {
	defer close(k.dead)
	for {
		ev, err := k.c.WaitForEvent()
		if ev == nil && err == nil {
			return
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			k.serve(e)
		case xproto.SelectionClearEvent:
			k.mu.Lock()
			if k.owned && e.Selection == k.a.clipboard {
				k.owned = false
				close(k.lost)
			}
			k.mu.Unlock()
		case xproto.SelectionNotifyEvent:
			select {
			case k.notify <- e:
			default:
			}
		}
	}
}

// serve answers an app asking for the clipboard: the kinds of text it
// offers, or the text.
func (k *x11Clipboard) serve(e xproto.SelectionRequestEvent) {
	k.mu.Lock()
	text, owned, served := k.text, k.owned, k.served
	if owned {
		select {
		case k.asked <- struct{}{}:
		default:
		}
	}
	k.mu.Unlock()
	prop := e.Property
	if prop == xproto.AtomNone {
		prop = e.Target // an obsolete requestor
	}
	ok := owned && e.Selection == k.a.clipboard
	if ok {
		switch e.Target {
		case k.a.targets:
			atoms := []xproto.Atom{k.a.targets, k.a.utf8, k.a.str, k.a.text, k.a.plainUTF8, k.a.plain}
			data := make([]byte, 4*len(atoms))
			for i, a := range atoms {
				xgb.Put32(data[4*i:], uint32(a))
			}
			xproto.ChangeProperty(k.c, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomAtom, 32, uint32(len(atoms)), data)
		case k.a.utf8, k.a.str, k.a.text, k.a.plain, k.a.plainUTF8:
			typ := e.Target
			if typ == k.a.text {
				typ = k.a.utf8
			}
			xproto.ChangeProperty(k.c, xproto.PropModeReplace, e.Requestor, prop, typ, 8, uint32(len(text)), []byte(text))
			defer func() {
				k.mu.Lock()
				if k.served == served {
					select {
					case <-served:
					default:
						close(served)
					}
				}
				k.mu.Unlock()
			}()
		default:
			ok = false
		}
	}
	if !ok {
		prop = xproto.AtomNone
	}
	n := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	// Checked, so that the text is on its way before the write counts as read.
	xproto.SendEventChecked(k.c, false, e.Requestor, xproto.EventMaskNoEvent, string(n.Bytes())).Check()
}

func (k *x11Clipboard) canOwn(text string) bool { return len(text) <= k.maxServe }

func (k *x11Clipboard) write(ctx context.Context, text string) error {
	_, err := k.own(ctx, text)
	return err
}

// own is write, returning the write's lease: closed when the text is
// taken over, by an app or by a later write of this process; nil for a
// text the tool serves.
func (k *x11Clipboard) own(ctx context.Context, text string) (clipLease, error) {
	if !k.canOwn(text) {
		// Too big for one property (the tool hands it over in parts).
		k.mu.Lock()
		if k.owned {
			k.owned = false
			close(k.lost)
		}
		k.lost, k.served, k.asked = nil, nil, nil
		k.mu.Unlock()
		return nil, toolWrite(ctx, text)
	}
	k.mu.Lock()
	if k.owned {
		close(k.lost) // taken over by this write
	}
	lease := make(chan struct{})
	k.text, k.owned = text, true
	k.lost, k.served, k.asked = lease, make(chan struct{}), make(chan struct{}, 1)
	k.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(k.c, k.win, k.a.clipboard, xproto.TimeCurrentTime).Check(); err != nil {
		return nil, fmt.Errorf("cannot write the clipboard: %w", err)
	}
	owner, err := xproto.GetSelectionOwner(k.c, k.a.clipboard).Reply()
	if err != nil {
		return nil, fmt.Errorf("cannot write the clipboard: %w", err)
	}
	if owner.Owner != k.win {
		return nil, errors.New("cannot write the clipboard: another app took it at once")
	}
	return lease, nil
}

func (k *x11Clipboard) keep(ctx context.Context, text string) error { return toolWrite(ctx, text) }

var errNoText = errors.New("the clipboard holds no text")

func (k *x11Clipboard) read(ctx context.Context) (string, error) {
	owner, err := xproto.GetSelectionOwner(k.c, k.a.clipboard).Reply()
	if err != nil {
		return "", err
	}
	switch owner.Owner {
	case xproto.WindowNone:
		return "", errNoText
	case k.win:
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.owned {
			return k.text, nil
		}
	}
	k.readMu.Lock()
	defer k.readMu.Unlock()
	select {
	case <-k.notify: // a late answer to an earlier request
	default:
	}
	xproto.ConvertSelection(k.c, k.win, k.a.clipboard, k.a.utf8, k.a.prop, xproto.TimeCurrentTime)
	timer := time.NewTimer(clipboardWait)
	defer timer.Stop()
	var e xproto.SelectionNotifyEvent
	select {
	case e = <-k.notify:
	case <-timer.C:
		return "", fmt.Errorf("the app holding the clipboard did not give it within %s", clipboardWait)
	case <-ctx.Done():
		return "", ctx.Err()
	case <-k.dead:
		return "", errors.New("the X server went away")
	}
	if e.Property == xproto.AtomNone {
		return "", errNoText
	}
	r, err := xproto.GetProperty(k.c, true, k.win, k.a.prop, xproto.GetPropertyTypeAny, 0, 1<<28).Reply()
	if err != nil {
		return "", err
	}
	if r.Type == k.a.incr {
		// Handed over in parts; the tool knows how.
		return clipboard.ReadAll()
	}
	return string(r.Value), nil
}

func (k *x11Clipboard) changed(ctx context.Context, old string, wait time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	k.mu.Lock()
	lost, mine := k.lost, k.owned && k.text == old
	k.mu.Unlock()
	if mine {
		select {
		case <-lost:
		case <-ctx.Done():
			return "", false
		}
	}
	return pollChange(ctx, old, wait, func() (string, error) { return k.read(ctx) })
}

func (k *x11Clipboard) pasted(ctx context.Context, wait, settle time.Duration) (bool, bool) {
	k.mu.Lock()
	served, asked := k.served, k.asked
	k.mu.Unlock()
	if served == nil {
		return false, false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-served:
	case <-t.C:
		return false, true
	case <-ctx.Done():
		return false, true
	}
	select {
	case <-asked: // a request before the text was read
	default:
	}
	for {
		q := time.NewTimer(settle)
		select {
		case <-asked:
			q.Stop()
		case <-q.C:
			return true, true
		case <-ctx.Done():
			q.Stop()
			return false, true
		}
	}
}

// lostSignal is closed once an app replaces the last write; known is false
// when this process wrote nothing to replace.
func (k *x11Clipboard) lostSignal() (lost <-chan struct{}, known bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost, k.owned || k.lost != nil
}

func (k *x11Clipboard) taken(ctx context.Context, wait time.Duration) (string, bool, bool) {
	lost, known := k.lostSignal()
	if !known {
		return "", false, false
	}
	// Taken already wins over a wait that is up as well: asked with no
	// wait, the answer is what happened so far.
	select {
	case <-lost:
	default:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-lost:
		case <-t.C:
			return "", false, true
		case <-ctx.Done():
			return "", false, true
		}
	}
	text, err := k.read(ctx)
	return text, err == nil, true
}

func (k *x11Clipboard) replaced() (bool, bool) {
	lost, known := k.lostSignal()
	if !known {
		return false, false
	}
	select {
	case <-lost:
		return true, true
	default:
		return false, true
	}
}

var _ holdingClipboard = (*x11Clipboard)(nil)

// holder tells apart the app that made window app from the others by the
// id of the window that holds the clipboard: the server gives each client
// its own range of ids, and an app's windows, its clipboard's owner among
// them, come from one client. A later write of this process (another
// driver's turn) is another app's too.
func (k *x11Clipboard) holder(ctx context.Context, lease clipLease, app windowID) (clipHolder, error) {
	if lease != nil {
		select {
		case <-lease:
		case <-ctx.Done():
		case <-k.dead:
			return heldByOther, errors.New("the X server went away")
		}
	}
	r, err := xproto.GetSelectionOwner(k.c, k.a.clipboard).Reply()
	if err != nil {
		return heldByOther, err
	}
	// The server's word, not k.owned: a SelectionClear of an earlier hold,
	// handled late, can mark this one lost.
	k.mu.Lock()
	ours := k.lost == lease
	k.mu.Unlock()
	switch owner := uint32(r.Owner); {
	case r.Owner == k.win:
		if ours {
			return heldByUs, nil
		}
	case r.Owner != xproto.WindowNone && owner&^k.idMask == uint32(app)&^k.idMask:
		return heldByApp, nil
	}
	return heldByOther, nil
}
