package poll

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Until returns only once the condition holds, having looked until then.
func TestUntilWaitsForTheCondition(t *testing.T) {
	var looks atomic.Int32
	Until(t, "the third look", func() bool { return looks.Add(1) == 3 })
	if n := looks.Load(); n != 3 {
		t.Fatalf("looked %d times, want 3", n)
	}
}

// logged keeps what a wait logs.
type logged struct {
	testing.TB
	lines []string
}

func (l *logged) Log(args ...any) { l.lines = append(l.lines, fmt.Sprint(args...)) }

// A wait that lasts says, now and then, what it still waits for.
func TestUntilSaysWhatItStillWaitsFor(t *testing.T) {
	defer func(d time.Duration) { tellEvery = d }(tellEvery)
	tellEvery = 0
	l := &logged{TB: t}
	var looks atomic.Int32
	Until(l, "the tenth look", func() bool { return looks.Add(1) == 10 })
	if len(l.lines) == 0 {
		t.Fatal("a wait of ten looks said nothing")
	}
	if want := t.Name() + ": still waiting for the tenth look after "; !strings.HasPrefix(l.lines[0], want) {
		t.Errorf("said %q, want it to start %q", l.lines[0], want)
	}
}

// deadlined is a test whose binary's -timeout is near, and whose Fatalf
// ends the wait, as testing's does, by leaving it (here by a panic that
// the test recovers).
type deadlined struct {
	testing.TB
	deadline time.Time
}

func (d *deadlined) Deadline() (time.Time, bool) { return d.deadline, true }
func (d *deadlined) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// A condition that never holds fails the test shortly before the test
// binary's -timeout, so that its cleanups run, rather than let the binary
// panic.
func TestUntilGivesUpBeforeTheBinarysTimeout(t *testing.T) {
	d := &deadlined{TB: t, deadline: time.Now().Add(time.Second)}
	msg := func() (msg string) {
		defer func() { msg, _ = recover().(string) }()
		Until(d, "what never comes", func() bool { return false })
		return ""
	}()
	if !strings.Contains(msg, "gave up waiting for what never comes") {
		t.Fatalf("failed with %q", msg)
	}
}

// A test's context ends when its waits would give up, and no sooner.
func TestContextEndsWhenWaitsGiveUp(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := Context(&deadlined{TB: t, deadline: deadline})
	defer cancel()
	got, ok := ctx.Deadline()
	if want, _ := giveUpAt(&deadlined{TB: t, deadline: deadline}); !ok || !got.Equal(want) {
		t.Fatalf("the context ends at %v (%v), want %v", got, ok, want)
	}
	if !got.Before(deadline) {
		t.Fatalf("the context ends at %v, not before the binary's -timeout at %v", got, deadline)
	}
}
