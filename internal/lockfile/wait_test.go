//go:build linux

package lockfile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

type acquired struct {
	lock   *flock.Flock
	waited time.Duration
	err    error
}

// acquireAsync runs Acquire on the fake clock and returns its result.
func acquireAsync(ctx context.Context, path string, w Wait) <-chan acquired {
	done := make(chan acquired, 1)
	go func() {
		l, waited, err := Acquire(ctx, path, w)
		done <- acquired{l, waited, err}
	}()
	return done
}

// stepUntilDone moves clk by step each time Acquire goes to sleep on it,
// until Acquire returns.
func stepUntilDone(clk *clocktest.Clock, step time.Duration, done <-chan acquired) acquired {
	for {
		select {
		case r := <-done:
			return r
		case <-clk.Sleeping():
			clk.Advance(step)
		}
	}
}

func TestAcquireTakesAFreeLockWithoutWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	l, waited, err := Acquire(context.Background(), path, Wait{Clock: clk})
	if err != nil || waited != 0 {
		t.Fatalf("Acquire = %v, %v, %v", l, waited, err)
	}
	defer l.Unlock()
	if locked, _ := New(path).TryLock(); locked {
		t.Fatal("another handle took the lock Acquire holds")
	}
	if waited, err := Take(context.Background(), l, Wait{Clock: clk}); err != nil || waited != 0 {
		t.Fatalf("the holding handle took its lock again: %v, %v", waited, err)
	}
}

// A lock kept past the wait fails after exactly the wait, as the clock
// tells it, naming the lock and its holder.
func TestAcquireGivesUpNamingTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, _ := holdLock(t, path, "LOCKFILE_TEST_ROLE=runner")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	done := acquireAsync(context.Background(), path, Wait{For: time.Second, Poll: 250 * time.Millisecond, Clock: clk})
	r := stepUntilDone(clk, 250*time.Millisecond, done)
	var busy *BusyError
	if !errors.As(r.err, &busy) {
		t.Fatalf("Acquire under a held lock: %v, want a *BusyError", r.err)
	}
	if busy.Waited != time.Second || busy.Path != path {
		t.Errorf("BusyError = %+v, want the path and a wait of 1s", busy)
	}
	if !busy.Holder.Believed || busy.Holder.Record.PID != holder.Process.Pid || busy.Holder.Record.Role != "runner" {
		t.Errorf("holder = %+v, want the record of pid %d", busy.Holder, holder.Process.Pid)
	}
	want := fmt.Sprintf("%s is still held after 1s by pid %d", path, holder.Process.Pid)
	if !strings.HasPrefix(r.err.Error(), want) {
		t.Errorf("error %q, want it to start %q", r.err, want)
	}
}

// A poll longer than what is left of the wait sleeps only until the wait
// ends.
func TestAcquireSleepsNoLongerThanTheWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holdLock(t, path)
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	done := acquireAsync(context.Background(), path, Wait{For: time.Second, Poll: time.Hour, Clock: clk})
	r := stepUntilDone(clk, time.Second, done)
	var busy *BusyError
	if !errors.As(r.err, &busy) || busy.Waited != time.Second {
		t.Fatalf("Acquire = %v, want a *BusyError after 1s", r.err)
	}
}

// A lock let go during the wait is taken at the next try, and the wait is
// what the clock moved.
func TestAcquireTakesALockLetGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	_, release := holdLock(t, path)
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	done := acquireAsync(context.Background(), path, Wait{For: Forever, Poll: time.Minute, Clock: clk})
	<-clk.Sleeping()
	clk.Advance(time.Minute)
	<-clk.Sleeping()
	release()
	clk.Advance(time.Minute)
	r := <-done
	if r.err != nil || r.waited != 2*time.Minute {
		t.Fatalf("Acquire after the holder let go = %v, %v; want the lock after 2m", r.waited, r.err)
	}
	r.lock.Unlock()
}

// Refuse ends the wait at once, before the clock moves.
func TestAcquireRefusesAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, _ := holdLock(t, path, "LOCKFILE_TEST_ROLE=runner")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	refused := errors.New("a runner holds it")
	var seen Holder
	_, _, err := Acquire(context.Background(), path, Wait{For: Forever, Clock: clk, Refuse: func(h Holder) error {
		seen = h
		if h.Believed && h.Record.Role == "runner" {
			return refused
		}
		return nil
	}})
	if !errors.Is(err, refused) || seen.Record.PID != holder.Process.Pid {
		t.Fatalf("Acquire = %v having seen %+v; want it refused, pid %d", err, seen, holder.Process.Pid)
	}
	if runtime.GOOS == "linux" && !strings.HasPrefix(seen.Kernel, fmt.Sprintf("pid %d (", holder.Process.Pid)) {
		t.Errorf("Kernel = %q, want pid %d", seen.Kernel, holder.Process.Pid)
	}
}

// A wait ends with its context, giving the context's cause.
func TestAcquireStopsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holdLock(t, path)
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancelCause(context.Background())
	done := acquireAsync(ctx, path, Wait{For: Forever, Clock: clk})
	<-clk.Sleeping()
	stop := errors.New("shutting down")
	cancel(stop)
	if r := <-done; !errors.Is(r.err, stop) {
		t.Fatalf("Acquire after its context ended: %v", r.err)
	}
}

// The holder is named by the kernel first, then by a record it can check,
// then by a record from another machine; an unchecked record from this
// machine names nobody.
func TestHolderNamesWhatIsKnown(t *testing.T) {
	here := hostname()
	for _, c := range []struct {
		h    Holder
		want string
	}{
		{Holder{Kernel: "pid 7 (flock)", Record: Record{PID: 8}, Believed: true}, "pid 7 (flock)"},
		{Holder{Record: Record{PID: 8}, Believed: true}, "pid 8"},
		{Holder{Record: Record{PID: 9, Role: "runner", Host: here + "-elsewhere"}}, "pid 9 on " + here + "-elsewhere"},
		{Holder{Record: Record{PID: 9, Role: "runner", Host: here}}, ""},
		{Holder{}, ""},
	} {
		if got := c.h.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.h, got, c.want)
		}
	}
}

// The host follows the role, so that readers that stop at the role still
// read what they know, and a record without a role stays as it was.
func TestRecordCarriesItsHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	New(path).Lock()
	for _, r := range []Record{{PID: 5, Start: 6, Role: "up", Host: "box-1"}, {PID: 5, Start: 6}} {
		if err := Write(path, r); err != nil {
			t.Fatal(err)
		}
		if got, ok := Read(path); !ok || got != r {
			t.Errorf("read back %+v, %v; wrote %+v", got, ok, r)
		}
	}
}
