package cursor

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// watcher decides from successive screenshots of the reply region when a
// reply has started and when it has finished. Time and capture are injected
// so its rules are tested without a screen or real waiting.
type watcher struct {
	capture func() ([]byte, error)
	// alive fails when the window is gone, so a closed window ends the
	// turn at once instead of at its timeout.
	alive func() error
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	every time.Duration
}

// realSleep waits d or until ctx ends.
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

// frame takes one screenshot after checking the window is still there.
func (w *watcher) frame() ([]byte, error) {
	if err := w.alive(); err != nil {
		return nil, err
	}
	return w.capture()
}

// changeFrom waits until the region differs from base, at most within.
func (w *watcher) changeFrom(ctx context.Context, base []byte, within time.Duration) (bool, error) {
	deadline := w.now().Add(within)
	for {
		f, err := w.frame()
		if err != nil {
			return false, err
		}
		if !bytes.Equal(f, base) {
			return true, nil
		}
		if !w.now().Before(deadline) {
			return false, nil
		}
		if err := w.sleep(ctx, w.every); err != nil {
			return false, err
		}
	}
}

// still waits until the region has not changed for quiet and returns its
// last frame.
func (w *watcher) still(ctx context.Context, quiet time.Duration) ([]byte, error) {
	last, err := w.frame()
	if err != nil {
		return nil, err
	}
	since := w.now()
	for w.now().Sub(since) < quiet {
		if err := w.sleep(ctx, w.every); err != nil {
			return nil, err
		}
		f, err := w.frame()
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(f, last) {
			last, since = f, w.now()
		}
	}
	return last, nil
}

// reply waits for a reply to a prompt whose submission has just shown in
// the region: the region settles (the prompt drawn), then changes (the reply
// starts, within firstChange), then stays still for quiet.
func (w *watcher) reply(ctx context.Context, settle, firstChange, quiet time.Duration) error {
	base, err := w.still(ctx, settle)
	if err != nil {
		return w.explain(ctx, err, "while the prompt was shown")
	}
	return w.replyFrom(ctx, base, firstChange, quiet)
}

// replyFrom waits for the region to change from base (the reply starts,
// within firstChange), then to stay still for quiet.
func (w *watcher) replyFrom(ctx context.Context, base []byte, firstChange, quiet time.Duration) error {
	started, err := w.changeFrom(ctx, base, firstChange)
	if err != nil {
		return w.explain(ctx, err, "while waiting for the reply to start")
	}
	if !started {
		return fmt.Errorf("%w: the reply did not start within %s", ErrNoReply, firstChange)
	}
	if _, err := w.still(ctx, quiet); err != nil {
		return w.explain(ctx, err, "while the reply was streaming")
	}
	return nil
}

// explain turns the turn's deadline into ErrNoReply.
func (w *watcher) explain(ctx context.Context, err error, when string) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%w: the turn timed out %s", ErrNoReply, when)
	}
	return err
}
