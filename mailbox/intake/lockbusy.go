package intake

import (
	"fmt"
	"time"

	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/mailbox"
)

// lockRetry is how soon inbox.json is looked at again when another process
// held its lock: soon enough that a writer's message waits at most about a
// second longer, rare enough to cost nothing while a writer is stuck.
const lockRetry = time.Second

// lockBusy remembers that inbox.json.lock was held by another process, so
// that the intake goes on with its other work, looks again soon, and can
// say what it is waiting for.
type lockBusy struct {
	since   time.Time // first try that found the lock held; zero when free
	checked time.Time // the latest such try
	holder  string    // "pid 123 (python3)", or "" when unknown
}

// retryAt is when inbox.json is due for another look; busy is false when
// the lock was free last time.
func (b *lockBusy) retryAt() (t time.Time, busy bool) {
	if b.since.IsZero() {
		return time.Time{}, false
	}
	return b.checked.Add(lockRetry), true
}

func (b *lockBusy) held() string {
	if b.holder == "" {
		return "another process"
	}
	return b.holder
}

// noteLockBusy records a try that found the lock held by holder. Only the
// first try of a wait is worth an event; Waiting tells how long it has
// lasted.
func (in *Intake) noteLockBusy(now time.Time, holder lockfile.Holder) {
	b := &in.lockBusy
	b.holder = holder.String()
	b.checked = now
	if !b.since.IsZero() {
		return
	}
	b.since = now
	in.emit("lock-busy", "", mailbox.InboxJSONLock, fmt.Sprintf("held by %s for more than %s; inbox.json is looked at again every %s meanwhile",
		b.held(), in.opts.LockWait, lockRetry))
}

// noteLockFree ends a wait for the lock. gotIt says whether the lock was
// taken at last, rather than no longer needed (inbox.json was emptied).
func (in *Intake) noteLockFree(now time.Time, gotIt bool) {
	b := &in.lockBusy
	if b.since.IsZero() {
		return
	}
	if gotIt {
		in.emit("lock-free", "", mailbox.InboxJSONLock, fmt.Sprintf("taken after waiting %s", now.Sub(b.since).Round(time.Second)))
	}
	*b = lockBusy{}
}

// Waiting says what keeps the intake from part of its work, or "" when
// nothing does: today only inbox.json.lock held by another process, as of
// the latest try.
func (in *Intake) Waiting() string {
	b := &in.lockBusy
	if b.since.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s has been held by %s for %s", mailbox.InboxJSONLock, b.held(), b.checked.Sub(b.since).Round(time.Second))
}
