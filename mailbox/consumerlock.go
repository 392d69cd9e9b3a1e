package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// Roles a consumer records in its lock file, next to its pid and start
// time.
const (
	roleRunner   = "runner"   // an agent's long-lived runner
	roleConsumer = "consumer" // anything else: recovery visits, tools
)

// Poll intervals for a held consumer lock: quick while it may be a
// moment's overlap with a runner that just died, slower once it is a real
// wait. A kernel file lock sends no event when it is released.
const (
	consumerGracePoll = 20 * time.Millisecond
	consumerWaitPoll  = 100 * time.Millisecond
)

// lockConsumer takes the consumer lock at path (making the runtime's
// locks folder, where it is missing) and records this process in it. A lock held by a live runner is refused at once with a
// *LockedError naming it. Anything else holding it (a recovery visit, a
// child of a crashed runner, a process that is not agentctl at all) is
// waited out for opts.ConsumerWait in silence and then, if opts.Wait is
// set, until the lock comes free or Wait ends, telling opts.OnWait once.
// It returns how long it waited, 0 when the lock was free. The waiting is
// lockfile.Acquire's, on opts.Clock.
func (m *Mailbox) lockConsumer(path string, opts Options) (*flock.Flock, time.Duration, error) {
	if err := atomicfile.MkdirAll(LocksDir(m.Root)); err != nil {
		return nil, 0, err
	}
	ctx := opts.Wait
	if ctx == nil {
		ctx = context.Background()
	}
	w := lockfile.Wait{For: opts.ConsumerWait, Poll: consumerGracePoll, Clock: opts.Clock,
		Refuse: func(h lockfile.Holder) error {
			if h.Believed && h.Record.Role == roleRunner {
				return &LockedError{Agent: m.Agent, PID: h.Record.PID}
			}
			return nil
		}}
	lock, waited, err := lockfile.Acquire(ctx, path, w)
	var busy *lockfile.BusyError
	if errors.As(err, &busy) && opts.Wait != nil {
		if opts.OnWait != nil {
			opts.OnWait(describeConsumerHolder(path, busy.Holder))
		}
		w.For, w.Poll = lockfile.Forever, consumerWaitPoll
		var more time.Duration
		lock, more, err = lockfile.Acquire(ctx, path, w)
		waited = busy.Waited + more
	}
	switch {
	case err == nil:
	case errors.As(err, &busy):
		locked := &LockedError{Agent: m.Agent}
		if busy.Holder.Believed {
			locked.PID = busy.Holder.Record.PID
		}
		return nil, 0, locked
	case opts.Wait != nil && opts.Wait.Err() != nil && errors.Is(err, context.Cause(opts.Wait)):
		return nil, 0, fmt.Errorf("stopped waiting for %s: %w", path, err)
	default:
		return nil, 0, err
	}
	role := roleConsumer
	if opts.Runner {
		role = roleRunner
	}
	if err := lockfile.Write(path, lockfile.Self(role)); err != nil {
		lock.Unlock()
		return nil, 0, err
	}
	return lock, waited, nil
}

// keepLock makes sure the consumer still holds the lock its path names
// (lockfile.Intact): a lock file a person removed is taken afresh, as
// Consume takes it (waiting out a passing holder, such as a recovery
// visit), and the consumer goes on; one that another runner created and
// took since ends this consumer, which is then no longer the mailbox's
// only one.
func (c *Consumer) keepLock() error {
	if c.lockUnchecked || lockfile.Intact(c.lock) {
		return nil
	}
	path := c.lock.Path()
	if _, err := os.Stat(c.mb.Root); errors.Is(err, fs.ErrNotExist) {
		// The whole runtime folder is gone, not the lock: its runner
		// sits that out, and takes the lock anew once it is back. Made
		// again here, the folder would hide what happened.
		return nil
	}
	// The lock held is on a file nobody else can open any more.
	if err := c.lock.Unlock(); err != nil {
		return fmt.Errorf("cannot let go of the lock on a removed %s: %w", path, err)
	}
	opts, told := c.opts, false
	if say := opts.OnWait; say != nil {
		opts.OnWait = func(holder string) { told = true; say(holder) }
	}
	lock, _, err := c.mb.lockConsumer(path, opts)
	if told {
		c.opts.OnWait("") // the wait is over, however it ended
	}
	if err != nil {
		var locked *LockedError
		if errors.As(err, &locked) {
			return fmt.Errorf("%s was removed while this process held it, and since then %w", path, locked)
		}
		return err
	}
	c.lock = lock
	if !lockfile.Intact(c.lock) {
		// A file system that does not tell a file as the same twice: the
		// check would let go of the lock at every look.
		c.lockUnchecked = true
		return nil
	}
	c.emit("lock-lost", "", path, "the consumer lock file was removed or replaced while held; taken afresh")
	return nil
}

// describeConsumerHolder is the sentence a waiting runner logs and shows
// in status.json.
func describeConsumerHolder(path string, h lockfile.Holder) string {
	who := h.String()
	if who == "" {
		who = "another process"
	}
	return fmt.Sprintf("%s holds %s and is not a running agentctl runner; waiting for it to let go", who, path)
}

// RunnerPID returns the pid of the live runner that consumes agent's
// mailbox, from the record in its consumer lock, and whether there is one:
// a record is believed only while it names the same live process that
// holds the lock. It lets a supervisor leave alone a runner started by
// hand. The agent name must be a valid one.
func RunnerPID(root, agent string) (int, bool) {
	a, err := layout.For(root, agent)
	if err != nil {
		return 0, false
	}
	holder, known := lockfile.HeldBy(a.ConsumerLock())
	if !known || holder.Role != roleRunner {
		return 0, false
	}
	return holder.PID, true
}
