// Package clocktest is a clock.Clock that moves only when a test moves it,
// for testing loops that sleep until something is due (mailbox.Serve, the
// runner, watchers, supervise's restarts) without sleeping in the test.
// Sleeping tells the test that the loop under test went to sleep on it.
//
// It owns nothing but its own time and the channels waiting on it.
package clocktest

import (
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// Clock satisfies clock.Clock. The zero value is not usable; use New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	// waiting is signalled whenever At registers a waiter, so a test
	// can tell that the loop under test went to sleep.
	waiting chan struct{}
	// asleep is broadcast whenever the number of waiters changes.
	asleep *sync.Cond
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// New returns a clock standing at now.
func New(now time.Time) *Clock {
	c := &Clock{now: now, waiting: make(chan struct{}, 1)}
	c.asleep = sync.NewCond(&c.mu)
	return c
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives once the clock has been moved to t
// or past it.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: t, ch: ch})
	c.asleep.Broadcast()
	select {
	case c.waiting <- struct{}{}:
	default:
	}
	return ch
}

// Sleeping returns a channel that receives after a new At call: the
// loop under test has gone to sleep on this clock.
func (c *Clock) Sleeping() <-chan struct{} { return c.waiting }

// BlockUntil returns once n waiters sleep on the clock: where several loops
// share it, the test knows they all went to sleep. A waiter counts until
// the clock reaches its time, even if its loop stopped waiting.
func (c *Clock) BlockUntil(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waiters) < n {
		c.asleep.Wait()
	}
}

// Advance moves the clock by d and wakes every waiter that is due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
	c.asleep.Broadcast()
}

var _ clock.Clock = (*Clock)(nil)

// Pump moves c a second at a time until cond holds, so that back-offs,
// heartbeats and probes come due without the test sleeping on them. It
// waits as poll.Until does, with no deadline: a loop that never gets there
// hangs the test until its -timeout, and what says meanwhile what for.
func (c *Clock) Pump(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	poll.Until(tb, what, func() bool {
		if cond() {
			return true
		}
		c.Advance(time.Second)
		return false
	})
}
