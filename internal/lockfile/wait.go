package lockfile

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/clock"
)

// Forever, as Wait.For, waits until the context ends.
const Forever time.Duration = -1

// DefaultPoll is how often a waiter tries a held lock again when its Wait
// names no Poll. A kernel file lock sends no event when it is released, so
// waiting is trying again.
const DefaultPoll = 5 * time.Millisecond

// Wait says how Acquire waits for a held lock. The zero value tries once.
type Wait struct {
	// For bounds the wait; 0 tries once, Forever waits until the context
	// ends.
	For time.Duration
	// Poll is how often the lock is tried again; DefaultPoll when zero.
	Poll time.Duration
	// Clock times the wait; clock.System when nil.
	Clock clock.Clock
	// Shared takes a shared lock, as a reader does: other shared holders
	// may hold it at the same time, and it keeps out those who take it
	// alone, the writers. Exclusive when false.
	Shared bool
	// Refuse, if set, is shown who holds the lock after every failed try;
	// an error it returns ends the wait at once (e.g. a holder that will
	// never let go soon, whom waiting for would only hide).
	Refuse func(Holder) error
}

// Holder is what a waiter can learn of who holds a lock.
type Holder struct {
	// Kernel names the processes the kernel lists as holding the lock,
	// e.g. "pid 4242 (flock)"; "" where it does not say (see Describe).
	Kernel string
	// Record is what the holder wrote into the lock file. Believed says it
	// names the live process that holds the lock (see HeldBy); a record
	// not believed is only a hint, e.g. of a holder on another machine.
	Record   Record
	Believed bool
}

// Who returns what is known of the holder of the lock at path.
func Who(path string) Holder {
	h := Holder{Kernel: Describe(path)}
	if r, ok := HeldBy(path); ok {
		h.Record, h.Believed = r, true
	} else if r, ok := Read(path); ok {
		h.Record = r
	}
	return h
}

// String names the holder for a human, "" when nothing is known: the
// kernel's word first, then a believed record, then a record written on
// another machine, which this one cannot check.
func (h Holder) String() string {
	switch {
	case h.Kernel != "":
		return h.Kernel
	case h.Believed:
		return fmt.Sprintf("pid %d", h.Record.PID)
	case h.Record.Host != "" && h.Record.Host != hostname():
		return fmt.Sprintf("pid %d on %s", h.Record.PID, h.Record.Host)
	}
	return ""
}

// BusyError says a lock was still held when the wait ran out.
type BusyError struct {
	Path   string
	Holder Holder
	Waited time.Duration
}

func (e *BusyError) Error() string {
	msg := fmt.Sprintf("%s is still held after %s", e.Path, e.Waited.Round(time.Millisecond))
	if who := e.Holder.String(); who != "" {
		msg += " by " + who
	}
	return msg
}

// Acquire takes the lock on path (creating the file as New does), waiting
// as w says, and returns it with how long it waited: 0 when it was free at
// the first try. A lock still held when the wait runs out gives a
// *BusyError; a context that ends first gives its cause, unwrapped, so
// callers see context.Canceled as such.
func Acquire(ctx context.Context, path string, w Wait) (*flock.Flock, time.Duration, error) {
	lock := New(path)
	waited, err := Take(ctx, lock, w)
	if err != nil {
		return nil, 0, err
	}
	return lock, waited, nil
}

// Take is Acquire for a lock its caller keeps (made by New, or by Open
// for another program's lock file): a handle that already holds its lock
// in the mode w asks for takes it again at once. One that holds it in the
// other mode is refused: flock would convert the lock, and a conversion
// that fails lets go of the lock held. It is agentctl's one loop that
// waits for a lock.
func Take(ctx context.Context, lock *flock.Flock, w Wait) (time.Duration, error) {
	if w.Shared && lock.Locked() || !w.Shared && lock.RLocked() {
		return 0, fmt.Errorf("cannot lock %s: this handle holds it in the other mode already", lock.Path())
	}
	clk := clock.Or(w.Clock)
	poll := w.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	try := lock.TryLock
	if w.Shared {
		try = lock.TryRLock
	}
	path := lock.Path()
	start := clk.Now()
	reopened := 0
	for tries := 0; ; tries++ {
		ok, err := try()
		if err != nil {
			return 0, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if ok && reopened < maxReopen && !Intact(lock) {
			// The file was removed or replaced between its opening and
			// its locking, or since this handle took it: a lock on it
			// keeps out no one who opens the path now. (A file system
			// that never tells one file as the same twice is not asked
			// for ever.)
			if err := lock.Unlock(); err != nil {
				return 0, fmt.Errorf("cannot let go of the lock on a removed %s: %w", path, err)
			}
			reopened++
			continue
		}
		now := clk.Now()
		if ok {
			if tries == 0 {
				return 0, nil
			}
			return now.Sub(start), nil
		}
		var holder Holder
		if w.Refuse != nil {
			holder = Who(path)
			if err := w.Refuse(holder); err != nil {
				return 0, err
			}
		}
		next := now.Add(poll)
		if w.For != Forever {
			deadline := start.Add(w.For)
			if !now.Before(deadline) {
				if w.Refuse == nil {
					holder = Who(path)
				}
				return 0, &BusyError{Path: path, Holder: holder, Waited: now.Sub(start)}
			}
			if next.After(deadline) {
				next = deadline
			}
		}
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-clk.At(next):
		}
	}
}

// maxReopen bounds how often Take opens a lock file afresh because the
// one it locked is no longer the one at its path.
const maxReopen = 3

// Intact reports whether lock, held, is on the file its path names now. A
// lock file a person removes (or replaces) leaves its holder locking a
// file nobody else can open, and the next process to come creates and
// takes a new one: both would go on as the only holder. Holders look
// again now and then, and take the lock afresh (Take) when it is not.
func Intact(lock *flock.Flock) bool {
	held, err := lock.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(lock.Path())
	return err == nil && os.SameFile(held, now)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
