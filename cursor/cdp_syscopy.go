package cursor

import (
	"context"
	"fmt"
)

// systemCopy runs a copy script for a seat with cdp.clipboard: system.
// An Electron app (Cursor, VS Code's desktop build) may write its copy to
// the desktop's clipboard from its main process, where no hook inside the
// page sees it. The copy then goes through the desktop's clipboard like a
// GUI seat's: under the desktop input lock, so that no other agentctl
// process copies or pastes meanwhile; with a sentinel there first, so
// that only what the app wrote counts; and the person's clipboard given
// back afterwards. Nothing else of the desktop is used: no key, no click.
func (s *cdpTurn) systemCopy(ctx context.Context, script string) (r cdpReading, err error) {
	lock := s.c.lock
	if lock == nil {
		return r, fmt.Errorf("%w: cdp.clipboard is system, but this driver has no folder for the desktop input lock", ErrNotCalibrated)
	}
	if err := lock.Acquire(ctx); err != nil {
		return r, err
	}
	defer lock.Release()
	saved := saveClipboard()
	defer func() {
		if rerr := saved.restore(context.WithoutCancel(ctx)); rerr != nil && err == nil {
			err = rerr
		}
	}()
	sentinel := newSentinel()
	if err := setClipboard(ctx, sentinel); err != nil {
		return r, fmt.Errorf("%w: %v", ErrNothingCopied, err)
	}
	a := s.readArgs()
	a["system"] = true
	if err := s.p.eval(ctx, script, a, &r); err != nil {
		return r, err
	}
	if !r.CopyFound {
		return r, nil
	}
	got, ok := awaitClipboardChange(ctx, sentinel, copyWait)
	if !ok {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		// An empty copy: the turn goes on to say the copy gave nothing.
		return r, nil
	}
	r.Text = got
	return r, nil
}
