// Package clock is the one way agentctl's loops read and wait on time.
//
// Whatever decides by time — schedules, heartbeats, stale detection,
// retries and backoff, waits for a lock, a watcher's next look, the
// consumer loop, restarts — is a type with one exported field named Clock,
// which is System when nil; the functions it calls that wait are handed
// that Clock, and a type that starts others hands it on (a runner its
// mailbox, consumer, watcher and intake), so that one clock drives it all
// the way down. A test hands it a clocktest.Clock instead and moves time
// itself, so it never sleeps to prove that something happened or did not.
//
// The package owns only the interface, the wall clock and waits on a
// Clock (After, WithTimeout). Some waits stay in real time and do not go
// through it, each saying so where it waits: the drivers of package
// cursor that poll a real program (a page, a window, a child process)
// wait for the program's sake; package hub's waits on its NATS server,
// which does not move with a test's clock; and the bounds on a command
// agentctl runs for a person (notify's tell, lore's narration).
package clock

import (
	"context"
	"time"
)

// Clock is time as a loop sees it.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock reaches t (at
	// once if it has). A deadline rather than a duration: time may move
	// between reading the clock and going to sleep, most of all a test's.
	At(t time.Time) <-chan time.Time
}

// System is the wall clock.
var System Clock = system{}

type system struct{}

func (system) Now() time.Time                  { return time.Now() }
func (system) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// Or is c, or System when c is nil: how a package fills in a Clock its
// caller left out.
func Or(c Clock) Clock {
	if c == nil {
		return System
	}
	return c
}

// After is a channel that receives once c has moved d past now.
func After(c Clock, d time.Duration) <-chan time.Time { return c.At(c.Now().Add(d)) }

// WithTimeout is context.WithTimeout on c, but for what its context says:
// it ends once c has moved d past now, or when parent ends or cancel is
// called, with context.Cause DeadlineExceeded when it timed out; its Err
// is then Canceled, not DeadlineExceeded, and it has no Deadline. Ask the
// cause.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (ctx context.Context, cancel context.CancelFunc) {
	ctx, stop := context.WithCancelCause(parent)
	due := After(c, d)
	go func() {
		select {
		case <-ctx.Done():
		case <-due:
			stop(context.DeadlineExceeded)
		}
	}()
	return ctx, func() { stop(context.Canceled) }
}

// Fixed is a clock that always reads the same time, for work stamped with
// a time its caller already chose. Waiting on it for a later time waits
// forever.
type Fixed time.Time

// Now is the fixed time.
func (f Fixed) Now() time.Time { return time.Time(f) }

// At receives at once if t is not after the fixed time, and never otherwise.
func (f Fixed) At(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if !t.After(time.Time(f)) {
		ch <- time.Time(f)
	}
	return ch
}
