// Package poll is how agentctl's tests wait for what real work makes true:
// a process started or gone, a file written, a file event handled. Until
// looks at a condition again and again, with no deadline of its own, so a
// loaded machine never fails a test that is only slow. A condition that
// never holds fails the test shortly before the test binary's -timeout
// (scripts/test gives each package's run 45 minutes, 25 under -race and
// 10 under Wine), so that its cleanups run and its logs show; meanwhile
// Until says every so often, in the test's log and on standard error,
// what it is still waiting for.
//
// It moves no clock: what an injected clock drives, a test drives with
// package clocktest (whose Pump waits here while it moves the clock). It
// owns nothing and starts nothing.
package poll

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// every is how often a quick condition is looked at. One that takes time
// to look at (a listing of many files) is looked at less often, up to
// every rarest: looking takes at most a tenth of the wait, and leaves the
// machine to the work it waits for.
const (
	every  = 5 * time.Millisecond
	rarest = 200 * time.Millisecond
)

// giveUpBefore is how long before the test binary's -timeout a wait gives
// up, at most: a tenth of the time left when it starts, if that is less.
const giveUpBefore = 2 * time.Minute

// giveUpAt is when a wait of tb gives up, if the test has a deadline (a
// test binary run with -timeout, as scripts/test runs every package).
func giveUpAt(tb testing.TB) (time.Time, bool) {
	d, ok := tb.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Time{}, false
	}
	deadline, ok := d.Deadline()
	if !ok {
		return time.Time{}, false
	}
	return deadline.Add(-min(giveUpBefore, time.Until(deadline)/10)), true
}

// tellEvery is how often a wait says that it still waits.
var tellEvery = 30 * time.Second

// Until returns once cond holds, looking at it every few milliseconds.
// what names the condition for the messages of a wait that lasts. It
// gives up, failing tb, only shortly before the test binary's own
// -timeout would end it (giveUpBefore): a test that fails runs its
// cleanups, which end the processes it started, and shows its logs,
// where a binary that times out only panics.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	start := time.Now()
	told := start
	giveUp, bounded := giveUpAt(tb)
	for {
		look := time.Now()
		if cond() {
			return
		}
		if bounded && look.After(giveUp) {
			tb.Fatalf("gave up waiting for %s after %s, shortly before the test binary's -timeout", what, look.Sub(start).Round(time.Second))
		}
		time.Sleep(min(max(every, 9*time.Since(look)), rarest))
		if time.Since(told) >= tellEvery {
			told = time.Now()
			msg := fmt.Sprintf("%s: still waiting for %s after %s", tb.Name(), what, told.Sub(start).Round(time.Second))
			tb.Log(msg)
			fmt.Fprintln(os.Stderr, msg)
		}
	}
}

// Context is tb's context (cancelled as the test ends), ended too when a
// wait of tb would give up: shortly before the test binary's -timeout. A
// test hands it to a call into real work (a server, a client, a page)
// that takes a context, where a deadline of its own would fail a test
// that a loaded machine only slows.
func Context(tb testing.TB) (context.Context, context.CancelFunc) {
	giveUp, bounded := giveUpAt(tb)
	if !bounded {
		return context.WithCancel(tb.Context())
	}
	return context.WithDeadline(tb.Context(), giveUp)
}
