package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Clock is the time the consumer loop runs on. Tests step a fake clock
// instead of sleeping; agentctl runs on SystemClock.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock reaches t (at
	// once if it has). A deadline rather than a duration: time may move
	// between reading the clock and going to sleep, most of all a test's.
	At(t time.Time) <-chan time.Time
}

// SystemClock is the wall clock.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time                  { return time.Now() }
func (systemClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

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

// Serve is the consumer loop: claim and handle whatever is claimable, then
// sleep until a change in the mailbox, the consumer's next wake-up (a retry
// coming due, a dropped file settling, a lock to try again), the end of a
// hold, or the worker's next housekeeping. It never polls while idle. It
// returns nil when ctx is done.
func Serve(ctx context.Context, c *Consumer, changes <-chan Change, clock Clock, w Worker) error {
	for {
		held, err := drain(ctx, c, clock, w)
		if err != nil || ctx.Err() != nil {
			return err
		}
		now := clock.Now()
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
		if t, ok := c.NextWake(); ok && (!wake || t.Before(next)) {
			next, wake = t, true
		}
		var timer <-chan time.Time
		if wake {
			timer = clock.At(next)
		}
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-changes:
			if !ok {
				return errors.New("the mailbox watcher stopped")
			}
			now := clock.Now()
			if ch.Rescan {
				err = c.Scan(now)
			}
			if err == nil {
				err = c.Notice(now, ch.Names...)
			}
		case <-timer:
			err = c.Tick(clock.Now())
		}
		if err != nil {
			return err
		}
	}
}

// drain handles every claimable message. It stops early with the time a
// hold ends.
func drain(ctx context.Context, c *Consumer, clock Clock, w Worker) (held time.Time, err error) {
	for ctx.Err() == nil {
		now := clock.Now()
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
