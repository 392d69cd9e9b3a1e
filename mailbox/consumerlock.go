package mailbox

import (
	"context"
	"fmt"
	"time"

	"github.com/gofrs/flock"

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

// lockConsumer takes the consumer lock at path and records this process
// in it. A lock held by a live runner is refused at once with a
// *LockedError naming it. Anything else holding it (a recovery visit, a
// child of a crashed runner, a process that is not agentctl at all) is
// waited out for opts.ConsumerWait in silence and then, if opts.Wait is
// set, until the lock comes free or Wait ends, telling opts.OnWait once.
// It returns how long it waited, 0 when the lock was free.
func (m *Mailbox) lockConsumer(path string, opts Options) (*flock.Flock, time.Duration, error) {
	lock := lockfile.New(path)
	start := time.Now()
	told := false
	var waited time.Duration
	for try := 0; ; try++ {
		ok, err := lock.TryLock()
		if err != nil {
			return nil, 0, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if ok {
			if try > 0 {
				waited = time.Since(start)
			}
			break
		}
		holder, known := lockfile.HeldBy(path)
		if known && holder.Role == roleRunner {
			return nil, 0, &LockedError{Agent: m.Agent, PID: holder.PID}
		}
		poll := consumerGracePoll
		if time.Since(start) >= opts.ConsumerWait {
			if opts.Wait == nil {
				locked := &LockedError{Agent: m.Agent}
				if known {
					locked.PID = holder.PID
				}
				return nil, 0, locked
			}
			if !told && opts.OnWait != nil {
				opts.OnWait(describeConsumerHolder(path, holder, known))
			}
			told, poll = true, consumerWaitPoll
		}
		var done <-chan struct{}
		if opts.Wait != nil {
			done = opts.Wait.Done()
		}
		select {
		case <-done:
			return nil, 0, fmt.Errorf("stopped waiting for %s: %w", path, context.Cause(opts.Wait))
		case <-time.After(poll):
		}
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

// describeConsumerHolder is the sentence a waiting runner logs and shows
// in status.json.
func describeConsumerHolder(path string, rec lockfile.Record, known bool) string {
	who := lockfile.Describe(path)
	if who == "" && known {
		who = fmt.Sprintf("pid %d", rec.PID)
	}
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
	holder, known := lockfile.HeldBy(ConsumerLockPath(root, agent))
	if !known || holder.Role != roleRunner {
		return 0, false
	}
	return holder.PID, true
}
