package cursor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"
)

// GUI is the driver for an agent whose brain is a chat window on this
// desktop. See the package documentation for the steps of a turn.
type GUI struct {
	win        WindowSettings
	title      *regexp.Regexp
	submit     chord
	newChat    *chord
	copyKeys   []chord
	checkKeys  []chord
	quiet      time.Duration
	maxPause   time.Duration
	submitWait time.Duration
	turn       time.Duration
	lock       *InputLock
	log        io.Writer

	mu   sync.Mutex // one turn at a time per driver, and guards d and late
	d    desktop
	late *lateGuard // holding the user's clipboard after a copy that gave nothing
	// unsure is a copy of the agent's app that ended the guard and may
	// yet prove the chat's late one.
	unsure *unsureCopy
	said   chatSaid // the last turns' prompts and replies, by which a late copy is known

	logMu sync.Mutex // the late copy's guard logs beside the turn
}

// Timings of the steps that have no setting of their own.
const (
	activateWait = 2 * time.Second        // for the window manager to focus a window
	settleWait   = 200 * time.Millisecond // for the chat to finish drawing a new chat
	pasteWait    = 500 * time.Millisecond // for the input box to show a paste
	watchEvery   = 40 * time.Millisecond  // between screenshots of the chat
	busyEvery    = 10 * time.Millisecond  // between looks at the busy indicator alone
)

// Sizes of the areas watched around calibrated points.
const (
	busySide = 7  // the busy indicator: a square this wide around its point
	inputH   = 40 // the input box: the height of the band watched around its point
)

// NewGUI checks the window settings and returns the driver. The display is
// opened at the first turn.
func NewGUI(w WindowSettings, t Timings, opts Options) (*GUI, error) {
	if err := w.Calibrated(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCalibrated, err)
	}
	title, err := regexp.Compile(w.Title)
	if err != nil {
		return nil, fmt.Errorf("window title: %w", err)
	}
	t = t.orDefault()
	d := &GUI{
		win: w, title: title, log: opts.Log,
		quiet: t.Quiet, maxPause: t.MaxPause, submitWait: t.Submit, turn: t.TurnTimeout,
		lock: NewInputLock(opts.LockDir, t.LockWait),
	}
	d.lock.Agent = opts.Agent
	if d.log == nil {
		d.log = io.Discard
	}
	submit := w.SubmitKey
	if submit == "" {
		submit = "enter"
	}
	if d.submit, err = parseChord(submit); err != nil {
		return nil, fmt.Errorf("window submit_key: %w", err)
	}
	if w.NewChatKey != "" {
		c, err := parseChord(w.NewChatKey)
		if err != nil {
			return nil, fmt.Errorf("window new_chat_key: %w", err)
		}
		d.newChat = &c
	}
	if d.copyKeys, err = parseChords(w.CopyKeys); err != nil {
		return nil, fmt.Errorf("window copy_keys: %w", err)
	}
	if d.checkKeys, err = parseChords(w.CheckKeys); err != nil {
		return nil, fmt.Errorf("window check_keys: %w", err)
	}
	return d, nil
}

func parseChords(keys []string) ([]chord, error) {
	var cs []chord
	for _, k := range keys {
		c, err := parseChord(k)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Close leaves the user's clipboard to outlive this process and lets go
// of the display connection.
func (g *GUI) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _ = g.stopLateGuard(true)
	if g.d != nil {
		g.d.close()
		g.d = nil
	}
}

func newSentinel() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "agentctl-copy-sentinel-" + hex.EncodeToString(b)
}

// find returns the one window that matches the settings.
func (g *GUI) find() (windowID, error) {
	found, err := g.d.windows(g.title, g.win.PID)
	if err != nil {
		return 0, fmt.Errorf("cannot list windows: %w", err)
	}
	what := fmt.Sprintf("title matching %q", g.win.Title)
	if g.win.PID > 0 {
		what += fmt.Sprintf(" and pid %d", g.win.PID)
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("%w: no window with a %s", ErrWindowNotFound, what)
	case 1:
		return found[0].ID, nil
	default:
		titles := make([]string, len(found))
		for i, f := range found {
			titles[i] = fmt.Sprintf("%q", f.Title)
		}
		return 0, fmt.Errorf("%w: %d windows have a %s (%s); make the pattern match exactly one",
			ErrWindowNotConfirmed, len(found), what, strings.Join(titles, ", "))
	}
}

// watcher watches window w's reply region and busy indicator, and the
// input box too when withInput.
func (g *GUI) watcher(w windowID, withInput bool) *watcher {
	return &watcher{
		look: func() (look, error) { return g.look(w, withInput) },
		alive: func() error {
			ok, err := g.d.exists(w)
			if err == nil && !ok {
				err = fmt.Errorf("%w: the window was closed during the turn", ErrWindowNotFound)
			}
			return err
		},
		every: watchEvery,
	}
}

// busyWatcher watches only window w's busy indicator, and often: a look
// at a few pixels is cheap, and it is all that a turn whose copy is
// checked against the transcript waits on.
func (g *GUI) busyWatcher(w windowID) *watcher {
	watch := g.watcher(w, false)
	watch.every = busyEvery
	watch.look = func() (look, error) {
		origin, err := g.origin(w)
		if err != nil {
			return look{}, err
		}
		b := g.win.Busy
		busy, err := g.d.capture(around(origin, b.X, b.Y, busySide, busySide))
		return look{busy: busy}, err
	}
	return watch
}

// inputWatcher watches only window w's input box, often.
func (g *GUI) inputWatcher(w windowID) *watcher {
	watch := g.watcher(w, true)
	watch.every = busyEvery
	watch.look = func() (look, error) {
		l, err := g.lookInput(w)
		return look{input: l}, err
	}
	return watch
}

func (g *GUI) look(w windowID, withInput bool) (look, error) {
	origin, err := g.origin(w)
	if err != nil {
		return look{}, err
	}
	var l look
	r := g.win.Reply
	if l.reply, err = g.d.capture(rectAt(origin, r.X, r.Y, r.W, r.H)); err != nil {
		return look{}, err
	}
	if b := g.win.Busy; b != nil {
		if l.busy, err = g.d.capture(around(origin, b.X, b.Y, busySide, busySide)); err != nil {
			return look{}, err
		}
	}
	if withInput {
		if l.input, err = g.lookInput(w); err != nil {
			return look{}, err
		}
	}
	return l, nil
}

// lookInput captures a band around the input box. The band runs from the
// window's left edge to a little right of the point: the point is wherever
// the user clicked in the box, a short prompt starts at the box's left,
// and the send button, which changes on its own, usually sits at its
// right. nil where the band lies outside the window.
func (g *GUI) lookInput(w windowID) ([]byte, error) {
	origin, err := g.origin(w)
	if err != nil {
		return nil, err
	}
	p := origin.Add(image.Pt(g.win.Input.X, g.win.Input.Y))
	in := image.Rect(p.X-200, p.Y-inputH/2, p.X+20, p.Y+inputH/2)
	if bounds, err := g.d.bounds(w); err == nil {
		in.Min.X = bounds.Min.X
		in = in.Intersect(bounds)
	}
	if in.Empty() {
		return nil, nil
	}
	return g.d.capture(in)
}

func (g *GUI) watchError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded && !errors.Is(err, ErrNoReply) {
		return fmt.Errorf("%w: the turn timed out after %s", ErrNoReply, g.turn)
	}
	return err
}

// rectAt is a w×h rectangle at x,y from origin.
func rectAt(origin image.Point, x, y, w, h int) image.Rectangle {
	min := origin.Add(image.Pt(x, y))
	return image.Rectangle{Min: min, Max: min.Add(image.Pt(w, h))}
}

// around is a w×h rectangle centred on x,y from origin.
func around(origin image.Point, x, y, w, h int) image.Rectangle {
	return rectAt(origin, x-w/2, y-h/2, w, h)
}

// origin is where configured positions count from: the window's top-left
// corner, or the screen's for absolute positions.
func (g *GUI) origin(w windowID) (image.Point, error) {
	if g.win.Absolute {
		return image.Point{}, nil
	}
	b, err := g.d.bounds(w)
	if errors.Is(err, errNoBounds) {
		return image.Point{}, fmt.Errorf("window-relative positions need the window's position, which this platform does not give; calibrate with --absolute")
	}
	if err != nil {
		return image.Point{}, fmt.Errorf("cannot get the window's position: %w", err)
	}
	return b.Min, nil
}

func (g *GUI) logf(format string, args ...any) {
	g.logMu.Lock()
	defer g.logMu.Unlock()
	fmt.Fprintf(g.log, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}
