package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

// look is one observation of the chat window.
type look struct {
	// reply is the reply region's pixels.
	reply []byte
	// busy is the busy indicator's pixels; nil where none is calibrated.
	busy []byte
	// input is the area around the input box; nil where not captured.
	input []byte
}

func (l look) same(o look) bool {
	return bytes.Equal(l.reply, o.reply) && bytes.Equal(l.busy, o.busy)
}

// finishRule says when a reply is finished. It is a pure function of the
// looks it is shown, so every timing shape is tested without a screen.
//
// With a busy indicator, the model says itself when it is done: the
// indicator must look as it did before the prompt was sent, and both it and
// the reply region must then stay unchanged for settle (the chat's last
// drawing). Without one, stillness is the only sign: the region must stay
// unchanged for settle, which is then gui.max_pause, the longest pause a
// reply may make mid-stream.
type finishRule struct {
	idle   string        // fingerprint of the indicator at rest; "" = no indicator
	settle time.Duration // how long everything must stay unchanged

	last  look
	since time.Time
	seen  bool
}

// observe takes one look and says whether the reply is finished, and if
// not, what the driver is waiting for.
func (r *finishRule) observe(now time.Time, l look) (bool, string) {
	if !r.seen || !l.same(r.last) {
		r.last, r.since, r.seen = l, now, true
	}
	if r.idle != "" && fingerprint(l.busy) != r.idle {
		return false, "the busy indicator to rest (it shows the model still working)"
	}
	if still := now.Sub(r.since); still < r.settle {
		if r.idle != "" {
			return false, fmt.Sprintf("the chat to stay unchanged for %s after the busy indicator went idle", r.settle)
		}
		return false, fmt.Sprintf("the reply region to stay unchanged for %s (gui.max_pause; no busy indicator is calibrated)", r.settle)
	}
	return true, ""
}

// watcher takes looks at the chat until a condition holds. Time and capture
// are injected so its rules are tested without a screen or real waiting.
type watcher struct {
	look func() (look, error)
	// alive fails when the window is gone, so a closed window ends the
	// turn at once instead of at its timeout.
	alive func() error
	// Clock times the looks and says when the chat last changed;
	// clock.System when nil, the window's own pace.
	Clock clock.Clock
	every time.Duration
}

func (w *watcher) now() time.Time { return clock.Or(w.Clock).Now() }

// sleep waits d on the watcher's clock, or until ctx ends, and returns
// ctx's error either way.
func (w *watcher) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
	case <-clock.After(clock.Or(w.Clock), d):
	}
	return ctx.Err()
}

// realSleep waits d or until ctx ends: the drivers' one wait in real
// time, for the program they poll (see internal/clock); the GUI's
// watcher waits on its Clock instead.
func realSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// frame takes one look after checking the window is still there.
func (w *watcher) frame() (look, error) {
	if err := w.alive(); err != nil {
		return look{}, err
	}
	return w.look()
}

// until takes looks until done says yes and returns the last one. When ctx
// reaches its deadline, the error is ErrNoReply naming what done was still
// waiting for.
func (w *watcher) until(ctx context.Context, done func(now time.Time, l look) (bool, string)) (look, error) {
	for {
		l, err := w.frame()
		if err != nil {
			return look{}, err
		}
		ok, waiting := done(w.now(), l)
		if ok {
			return l, nil
		}
		if err := w.sleep(ctx, w.every); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return look{}, fmt.Errorf("%w: the turn timed out waiting for %s", ErrNoReply, waiting)
			}
			return look{}, err
		}
	}
}

// within runs until, but gives up (false, nil) after d.
func (w *watcher) within(ctx context.Context, d time.Duration, done func(l look) bool) (bool, error) {
	deadline := w.now().Add(d)
	var hit bool
	_, err := w.until(ctx, func(now time.Time, l look) (bool, string) {
		hit = done(l)
		return hit || !now.Before(deadline), "the chat to show the submitted prompt"
	})
	return hit, err
}

// finished waits until rule says the reply is finished.
func (w *watcher) finished(ctx context.Context, rule *finishRule) (look, error) {
	return w.until(ctx, rule.observe)
}

// changedFrom waits until the chat looks different from base; why says
// what a timeout should name.
func (w *watcher) changedFrom(ctx context.Context, base look, why string) error {
	_, err := w.until(ctx, func(_ time.Time, l look) (bool, string) { return !l.same(base), why })
	return err
}

// restHeld looks at the busy indicator until until, at least once, and
// says whether it stayed at rest (its fingerprint idle) in every look.
func (w *watcher) restHeld(ctx context.Context, idle string, until time.Time) (bool, error) {
	for {
		l, err := w.frame()
		if err != nil {
			return false, err
		}
		if fingerprint(l.busy) != idle {
			return false, nil
		}
		now := w.now()
		if !now.Before(until) {
			return true, nil
		}
		if err := w.sleep(ctx, min(w.every, until.Sub(now))); err != nil {
			return false, err
		}
	}
}
