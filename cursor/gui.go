package cursor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kbinani/screenshot"

	"agentctl/config"
)

// GUI is the driver for an agent whose brain is a chat window on this
// desktop. See the package documentation for the steps of a turn.
type GUI struct {
	win        config.Window
	title      *regexp.Regexp
	submit     chord
	newChat    *chord
	copyKeys   []chord
	quiet      time.Duration
	first      time.Duration
	submitWait time.Duration
	turn       time.Duration
	lock       *InputLock
	log        io.Writer

	mu sync.Mutex // one turn at a time per driver, and guards d
	d  desktop
}

// Timings of the steps that have no setting of their own.
const (
	activateWait = 2 * time.Second        // for the window manager to focus a window
	settleWait   = 200 * time.Millisecond // for the chat to finish drawing a submitted prompt
	watchEvery   = 40 * time.Millisecond  // between screenshots of the reply region
)

// NewGUI checks the window settings and returns the driver. The display is
// opened at the first turn.
func NewGUI(w config.Window, g config.GUI, opts Options) (*GUI, error) {
	if err := w.Calibrated(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCalibrated, err)
	}
	title, err := regexp.Compile(w.Title)
	if err != nil {
		return nil, fmt.Errorf("window title: %w", err)
	}
	d := &GUI{
		win: w, title: title, log: opts.Log,
		quiet:      durationOr(g.Quiet, config.DefaultGUI().Quiet.D()),
		first:      durationOr(g.FirstChange, config.DefaultGUI().FirstChange.D()),
		submitWait: durationOr(g.Submit, config.DefaultGUI().Submit.D()),
		turn:       durationOr(g.TurnTimeout, config.DefaultGUI().TurnTimeout.D()),
		lock:       NewInputLock(opts.LockDir, durationOr(g.LockWait, config.DefaultGUI().LockWait.D())),
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
	for _, k := range w.CopyKeys {
		c, err := parseChord(k)
		if err != nil {
			return nil, fmt.Errorf("window copy_keys: %w", err)
		}
		d.copyKeys = append(d.copyKeys, c)
	}
	return d, nil
}

// Close lets go of the display connection.
func (g *GUI) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.d != nil {
		g.d.close()
		g.d = nil
	}
}

// Run takes one turn. See Driver.
func (g *GUI) Run(ctx context.Context, t Turn) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, g.turn)
	defer cancel()
	if g.d == nil {
		d, err := openDesktop()
		if err != nil {
			return "", err
		}
		g.d = d
	}
	var w windowID
	var err error
	if t.Resume {
		if w, err = g.find(); err != nil {
			return "", err
		}
		if err := g.resume(ctx, w, t.ResumeState); err != nil {
			return "", err
		}
	} else {
		if w, err = g.send(ctx, t); err != nil {
			return "", err
		}
		watch := g.watcher(w)
		base, err := watch.still(ctx, settleWait)
		if err != nil {
			return "", g.watchError(ctx, err)
		}
		if t.OnResumeState != nil {
			if err := t.OnResumeState(fingerprint(base)); err != nil {
				return "", fmt.Errorf("turn stopped while waiting for the reply: %w", err)
			}
		}
		g.logf("waiting for the reply (first change within %s, then %s still)", g.first, g.quiet)
		if err := watch.replyFrom(ctx, base, g.first, g.quiet); err != nil {
			return "", g.watchError(ctx, err)
		}
	}
	reply, err := g.copyReply(ctx, w)
	if err != nil {
		return "", err
	}
	if err := t.stage(StageReplied); err != nil {
		return "", err
	}
	return reply, nil
}

// resume waits for the reply of a turn sent by an earlier process. If the
// chat still shows what it showed when that process saw the prompt arrive,
// the reply has not started and is waited for like a fresh one; otherwise
// it is under way or done, and only needs to be still.
func (g *GUI) resume(ctx context.Context, w windowID, state string) error {
	watch := g.watcher(w)
	now, err := watch.frame()
	if err != nil {
		return g.watchError(ctx, err)
	}
	switch {
	case state != "" && fingerprint(now) == state:
		g.logf("resuming: the reply has not started; waiting for it (within %s)", g.first)
		err = watch.replyFrom(ctx, now, g.first, g.quiet)
	case state != "":
		g.logf("resuming: the reply has started; waiting for it to be still for %s", g.quiet)
		_, err = watch.still(ctx, g.quiet)
	default:
		// The earlier process died before it saw the chat settle: the reply
		// may be yet to come, streaming, or done. Wait for it as for a new
		// one, and take what the chat shows if nothing changes.
		g.logf("resuming: waiting up to %s for the reply to change, then %s still", g.first, g.quiet)
		var started bool
		if started, err = watch.changeFrom(ctx, now, g.first); err == nil && started {
			_, err = watch.still(ctx, g.quiet)
		}
	}
	if err != nil {
		return g.watchError(ctx, err)
	}
	return nil
}

// fingerprint names a screenshot of the reply region compactly enough to
// keep in a progress record.
func fingerprint(frame []byte) string {
	sum := sha256.Sum256(frame)
	return hex.EncodeToString(sum[:])
}

// send is steps 1–5 of the turn: under the input lock, paste the prompt
// into the confirmed window and prove it was submitted.
func (g *GUI) send(ctx context.Context, t Turn) (w windowID, err error) {
	s, err := g.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer s.end(ctx, &err)
	w = s.w
	if t.NewChat && g.newChat != nil {
		if err := s.key(*g.newChat); err != nil {
			return w, err
		}
		if _, err := g.watcher(w).still(ctx, settleWait); err != nil {
			return w, g.watchError(ctx, err)
		}
	}
	if err := setClipboard(ctx, t.Prompt); err != nil {
		return w, fmt.Errorf("cannot put the prompt on the clipboard: %w", err)
	}
	g.logf("clipboard holds the prompt (%d bytes)", len(t.Prompt))
	// Select all before pasting, so whatever an earlier failed attempt
	// left in the input box is replaced rather than sent along.
	if err := s.clickAt(g.win.Input.X, g.win.Input.Y, "input box"); err != nil {
		return w, err
	}
	if err := s.key(mustChord("mod+a")); err != nil {
		return w, err
	}
	if err := s.key(mustChord("mod+v")); err != nil {
		return w, err
	}
	if err := t.stage(StageInjected); err != nil {
		return w, err
	}
	region, err := s.region()
	if err != nil {
		return w, err
	}
	before, err := capture(region)
	if err != nil {
		return w, err
	}
	for attempt := 1; ; attempt++ {
		if err := s.key(g.submit); err != nil {
			return w, err
		}
		changed, err := g.watcher(w).changeFrom(ctx, before, g.submitWait)
		if err != nil {
			return w, g.watchError(ctx, err)
		}
		if changed {
			g.logf("submitted (the chat changed after %s, attempt %d)", g.submit, attempt)
			break
		}
		if attempt == 2 {
			return w, fmt.Errorf("%w: the chat did not change within %s of pressing %s, twice", ErrNotSubmitted, g.submitWait, g.submit)
		}
		g.logf("the chat did not change within %s; pressing %s once more", g.submitWait, g.submit)
	}
	if err := t.stage(StageSubmitted); err != nil {
		return w, err
	}
	return w, nil
}

// copyReply is step 6: under the lock, copy the reply with a sentinel on the
// clipboard, so that a copy that did nothing is noticed.
func (g *GUI) copyReply(ctx context.Context, w windowID) (reply string, err error) {
	s, err := g.begin(ctx)
	if err != nil {
		return "", err
	}
	defer s.end(ctx, &err)
	if s.w != w {
		return "", fmt.Errorf("%w: the window changed during the turn", ErrWindowNotFound)
	}
	sentinel := newSentinel()
	if err := setClipboard(ctx, sentinel); err != nil {
		return "", fmt.Errorf("cannot prepare the clipboard for the reply: %w", err)
	}
	if g.win.Copy != nil {
		if err := s.clickAt(g.win.Copy.X, g.win.Copy.Y, "copy button"); err != nil {
			return "", err
		}
	} else {
		for _, k := range g.copyKeys {
			if err := s.key(k); err != nil {
				return "", err
			}
		}
	}
	got, ok := awaitClipboardChange(ctx, sentinel)
	if !ok || got == "" {
		return "", fmt.Errorf("%w: the clipboard did not change within %s of the copy action", ErrNothingCopied, clipboardWait)
	}
	g.logf("reply copied (%d bytes)", len(got))
	return got, nil
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

func (g *GUI) watcher(w windowID) *watcher {
	return &watcher{
		capture: func() ([]byte, error) {
			r, err := g.screenRect(w)
			if err != nil {
				return nil, err
			}
			return capture(r)
		},
		alive: func() error {
			ok, err := g.d.exists(w)
			if err == nil && !ok {
				err = fmt.Errorf("%w: the window was closed during the turn", ErrWindowNotFound)
			}
			return err
		},
		now:   time.Now,
		sleep: realSleep,
		every: watchEvery,
	}
}

func (g *GUI) watchError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded && !errors.Is(err, ErrNoReply) {
		return fmt.Errorf("%w: the turn timed out after %s", ErrNoReply, g.turn)
	}
	return err
}

// screenRect is the reply region in screen coordinates.
func (g *GUI) screenRect(w windowID) (image.Rectangle, error) {
	r := g.win.Reply
	origin, err := g.origin(w)
	if err != nil {
		return image.Rectangle{}, err
	}
	min := origin.Add(image.Pt(r.X, r.Y))
	return image.Rectangle{Min: min, Max: min.Add(image.Pt(r.W, r.H))}, nil
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

// capture screenshots a region and returns its pixels.
func capture(r image.Rectangle) ([]byte, error) {
	img, err := screenshot.Capture(r.Min.X, r.Min.Y, r.Dx(), r.Dy())
	if err != nil {
		return nil, fmt.Errorf("cannot capture the reply region: %w", err)
	}
	return img.Pix, nil
}

func (g *GUI) logf(format string, args ...any) {
	fmt.Fprintf(g.log, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}
