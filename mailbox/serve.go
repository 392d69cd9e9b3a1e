package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

// Worker is what Serve hands claims to, and what it asks about time.
type Worker struct {
	// Handle works on one claim and settles it (Complete, Retry or
	// Deadletter) before returning. An error stops Serve; the claim then
	// stays in processing/ for the next consumer to recover.
	Handle func(ctx context.Context, cl *Claim) error
	// Hold, if set, is asked before each claim while something is
	// claimable; a non-zero time holds every claim back until then (a rate
	// limit).
	Hold func(now time.Time) (until time.Time, err error)
	// Between, if set, runs whenever the loop has nothing claimable, after
	// every wake-up: the housekeeping due at now (a heartbeat, cron jobs).
	// It returns when it next wants to run (zero: whenever something else
	// wakes the loop).
	Between func(now time.Time) (next time.Time, err error)
}

// Feed is what looks at the mailbox when it changes or time passes: a
// Consumer itself, for its inbox/ folder, or package intake's Intake, which
// also takes in inbox.json and the places outside the mailbox, and passes
// on to its Consumer what is the Consumer's.
type Feed interface {
	// Scan looks at everything again; Notice at the names a Change
	// reports.
	Scan(now time.Time) error
	Notice(now time.Time, names ...string) error
	// Tick does what NextWake said was due.
	Tick(now time.Time) error
	NextWake() (t time.Time, ok bool)
}

// Serve is the consumer loop: claim from c and handle whatever is
// claimable, then sleep until a change in the mailbox, the feed's next
// wake-up (a retry coming due, a dropped file settling, a lock to try
// again), the end of a hold, or the worker's next housekeeping; changes
// and wake-ups go to feed. It never polls while idle. It returns nil when
// ctx is done. Its time is c's Clock (Options.Clock).
func Serve(ctx context.Context, c *Consumer, feed Feed, changes <-chan Change, w Worker) error {
	clk := clock.Or(c.opts.Clock)
	for {
		held, err := drain(ctx, c, clk, w)
		if err != nil || ctx.Err() != nil {
			return err
		}
		now := clk.Now()
		next, wake := held, !held.IsZero()
		if w.Between != nil {
			t, err := w.Between(now)
			if err != nil {
				return err
			}
			if !t.IsZero() && (!wake || t.Before(next)) {
				next, wake = t, true
			}
		}
		if t, ok := feed.NextWake(); ok && (!wake || t.Before(next)) {
			next, wake = t, true
		}
		var timer <-chan time.Time
		if wake {
			timer = clk.At(next)
		}
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-changes:
			if !ok {
				return errors.New("the mailbox watcher stopped")
			}
			now := clk.Now()
			if ch.Rescan {
				err = feed.Scan(now)
			}
			if err == nil {
				err = feed.Notice(now, ch.Names...)
			}
		case <-timer:
			err = feed.Tick(clk.Now())
		}
		if err != nil {
			return err
		}
	}
}

// drain handles every claimable message. It stops early with the time a
// hold ends.
func drain(ctx context.Context, c *Consumer, clk clock.Clock, w Worker) (held time.Time, err error) {
	for ctx.Err() == nil {
		// Before every claim, and at every wake-up: a backlog keeps the
		// loop here for hours.
		if err := c.keepLock(); err != nil {
			return time.Time{}, err
		}
		now := clk.Now()
		if w.Hold != nil && c.Claimable(now) {
			until, err := w.Hold(now)
			if err != nil || !until.IsZero() {
				return until, err
			}
		}
		cl, err := c.Claim(now)
		if errors.Is(err, ErrEmpty) {
			return time.Time{}, nil
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("cannot claim a message: %w", err)
		}
		if err := w.Handle(ctx, cl); err != nil {
			return time.Time{}, err
		}
		if c.inflight != nil {
			return time.Time{}, fmt.Errorf("%s was left unsettled", cl.Message.ID)
		}
	}
	return time.Time{}, nil
}
