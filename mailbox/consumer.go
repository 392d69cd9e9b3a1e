package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
)

// Options are the consumer's settings; callers take them from agentctl.yaml.
type Options struct {
	// Known lists the agents of the runtime. A message addressed to anyone
	// else is dead-lettered rather than guessed at. Left empty, it is the
	// mailbox's own agent alone.
	Known []string
	// MaxAttempts is how many tries a message gets before it is dead-lettered.
	MaxAttempts int
	// Backoff is the wait before the first retry; it doubles each retry.
	Backoff time.Duration
	// Settle is how long a dropped file that is not complete JSON must stay
	// unchanged before it is read.
	Settle time.Duration
	// MaxMessageBytes refuses files larger than this (default 4 MiB).
	MaxMessageBytes int64
	// ConsumerWait is how long Consume waits for another consumer to let
	// go before giving up (default: not at all). A consumer killed a moment
	// ago can hold its lock a little longer through a child process that
	// was between fork and exec; a restarted runner should wait that out.
	// A live runner holding the lock is never waited for.
	ConsumerWait time.Duration
	// Runner marks this consumer as the agent's long-lived runner in the
	// lock file, so that another runner refuses to start while it lives.
	Runner bool
	// Wait, if set, makes Consume wait past ConsumerWait while the lock is
	// held by anything but a live runner (a recovery visit, a process that
	// is not agentctl), until the lock comes free or Wait ends.
	Wait context.Context
	// OnWait, if set, is called once when that longer wait begins, with a
	// sentence saying what holds the lock. Runners log it and show it in
	// status.json. A wait of a consumer that took its removed lock afresh
	// (keepLock), mid-loop, is also said over: with "".
	OnWait func(holder string)
	// Clock times the waits for the consumer lock and Serve's loop;
	// clock.System when nil.
	Clock clock.Clock
	// Interrupted, if set, says of a message left in processing/, given
	// its progress record, that its consumer stopped for the runtime (a
	// full disk, a read-only file system, a crash while another machine
	// had the message's turn), not for anything the message did: resuming
	// it costs no attempt, so such stops dead-letter nothing.
	Interrupted func(p Progress) bool
	// OnEvent, if set, hears about everything the consumer does on its own:
	// ingests, duplicates, dead letters and recoveries. Callers log them;
	// package intake tells of its own doings here too.
	OnEvent func(Event)
}

// Event reports something the consumer did without being asked directly.
type Event struct {
	Kind   string // "ingested", "duplicate", "deadlettered", "recovered", "lock-busy", "lock-free", "lock-lost", "notes-edited", "unreadable"
	ID     string
	File   string
	Reason string
}

func (o *Options) defaults() {
	if o.MaxAttempts < 1 {
		o.MaxAttempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 30 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = time.Second
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 4 << 20
	}
}

// defaultLockWait bounds the waits of readers of inbox.json (list, count)
// for inbox.json.lock: the Dream.OS writers hold it for one read and one
// rewrite, so longer means a stuck writer.
const defaultLockWait = 10 * time.Second

// ErrConsumerRunning is returned by Consume when another process already
// consumes the mailbox.
var ErrConsumerRunning = errors.New("another process is consuming this mailbox")

// LockedError says which process holds the consumer lock.
type LockedError struct {
	Agent string
	PID   int // 0 when unknown
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("pid %d is already consuming %s's mailbox", e.PID, e.Agent)
	}
	return fmt.Sprintf("another process is already consuming %s's mailbox", e.Agent)
}

func (e *LockedError) Unwrap() error { return ErrConsumerRunning }

// Consumer claims and settles the messages of one mailbox. Only one
// consumer per mailbox exists at a time, across processes, so everything in
// processing/ belongs to it. A Consumer is not safe for concurrent use: one
// goroutine owns it.
type Consumer struct {
	mb       *Mailbox
	opts     Options
	lock     *flock.Flock
	q        *queue
	settling *Settler
	orphans  []string // stems a crashed consumer left in processing/
	inflight *Claim
	log      progressLog
	// lockUnchecked: the lock's file cannot be told as the same from one
	// look to the next here, so keepLock no longer looks.
	lockUnchecked bool
}

// ConsumerLockPath is the lock file that makes a process the consumer of an
// agent's mailbox; it holds the consumer's pid, start time and role
// (lockfile.Record).
func ConsumerLockPath(root, agent string) string {
	return layout.MustFor(root, agent).ConsumerLock()
}

// Consume makes this process the mailbox's consumer. It fails with a
// *LockedError if another live process is the consumer (see Options for
// how long it waits first). It recovers what a crashed consumer left in
// processing/ and runs a first full scan; when it had to wait, now is
// moved on by the time waited.
func (m *Mailbox) Consume(opts Options, now time.Time) (*Consumer, error) {
	opts.defaults()
	if len(opts.Known) == 0 {
		opts.Known = []string{m.Agent}
	}
	lock, waited, err := m.lockConsumer(ConsumerLockPath(m.Root, m.Agent), opts)
	if err != nil {
		return nil, err
	}
	now = now.Add(waited)
	c := &Consumer{mb: m, opts: opts, lock: lock, q: newQueue(), settling: NewSettler(opts.Settle)}
	if err := c.recover(now); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Scan(now); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close releases the consumer lock. A claim still in flight stays in
// processing/ for the next consumer to recover.
func (c *Consumer) Close() error {
	c.log.close()
	return c.lock.Unlock()
}

// Pending is the number of messages indexed in inbox/.
func (c *Consumer) Pending() int { return c.q.len() }

// Claimable reports whether Claim would hand out a message at now.
func (c *Consumer) Claimable(now time.Time) bool {
	return c.inflight == nil && (len(c.orphans) > 0 || c.q.claimable(now))
}

// NextWake is when the consumer next has something to do without any new
// file event: a held-back message comes due, or a settling file may be
// read. ok is false when nothing is scheduled.
func (c *Consumer) NextWake() (t time.Time, ok bool) {
	t, ok = c.q.nextDue()
	if due, waits := c.settling.Next(); waits && (!ok || due.Before(t)) {
		t, ok = due, true
	}
	if len(c.orphans) > 0 {
		return time.Time{}, true
	}
	return t, ok
}

func (c *Consumer) emit(kind, id, file, reason string) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(Event{Kind: kind, ID: id, File: file, Reason: reason})
	}
}

// Options are the consumer's settings, with the defaults filled in.
func (c *Consumer) Options() Options { return c.opts }

// Mailbox is the mailbox the consumer consumes.
func (c *Consumer) Mailbox() *Mailbox { return c.mb }

// Scan is the full rescan of the mailbox's folders: it recreates those
// someone removed, reads every file in inbox/ that the index does not know
// yet, and drops index entries whose files are gone. It runs at start and
// periodically, because file events can be lost and never arrive on
// network folders.
func (c *Consumer) Scan(now time.Time) error {
	if _, err := c.repair(); err != nil {
		return err
	}
	entries, err := os.ReadDir(c.mb.path(InboxDir))
	if errors.Is(err, fs.ErrNotExist) {
		// Removed since the repair: repair again, or say the mailbox is gone.
		_, err := c.repair()
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot scan %s's inbox: %w", c.mb.Agent, err)
	}
	present := make(map[string]bool, len(entries))
	// Messages delivered from dropped files during this scan are indexed
	// but were not listed: only what was indexed before may be stale.
	before := make(map[string]bool, len(c.q.byStem))
	for stem := range c.q.byStem {
		before[stem] = true
	}
	for _, e := range entries {
		present[e.Name()] = true
		if atomicfile.IsLeftover(e.Name()) {
			c.removeLeftover(e, now)
			continue
		}
		if isWithdrawn(e.Name()) {
			if name := c.restoreWithdrawn(e, now); name != "" {
				present[name] = true
			}
			continue
		}
		if err := c.ingestFile(e.Name(), now); err != nil {
			return err
		}
	}
	for stem := range c.q.byStem {
		if before[stem] && !present[stem+MessageSuffix] {
			c.q.remove(stem)
		}
	}
	c.settling.Keep(func(name string) bool { return present[name] })
	return nil
}

// repair recreates the mailbox's folders that someone removed, so that the
// consumer never stalls on a folder that is not there, and says so.
func (c *Consumer) repair() (bool, error) {
	recreated, err := c.mb.Repair()
	if err != nil {
		return false, fmt.Errorf("cannot go on with %s's mailbox: %w", c.mb.Agent, err)
	}
	for _, dir := range recreated {
		c.emit("repaired", "", dir+"/", "the folder was removed while the mailbox was in use; recreated it")
	}
	return len(recreated) > 0, nil
}

// Notice handles names that file events reported as changed in inbox/.
// inbox.json and paths outside the mailbox, which the watcher reports too,
// are the intake's, and left to it.
func (c *Consumer) Notice(now time.Time, names ...string) error {
	for _, name := range names {
		if name == InboxJSON || filepath.IsAbs(name) {
			continue
		}
		if err := c.ingestFile(name, now); err != nil {
			return err
		}
	}
	return nil
}

// Tick reads the files dropped into inbox/ whose settle period has passed.
func (c *Consumer) Tick(now time.Time) error {
	for _, name := range c.settling.Due(now) {
		if err := c.Notice(now, name); err != nil {
			return err
		}
	}
	return nil
}

// leftoverAge is how old a temp file must be before a scan removes it: far
// longer than any delivery takes to write one.
const leftoverAge = time.Hour

// restoreWithdrawn puts back, once it is old enough that no delivery is
// still checking it, a message a delivery moved aside and died before it
// could put it back, or removes it when it is a duplicate.
func (c *Consumer) restoreWithdrawn(e fs.DirEntry, now time.Time) (restored string) {
	fi, err := e.Info()
	if err != nil || now.Sub(fi.ModTime()) < leftoverAge {
		return ""
	}
	name, dup, err := c.mb.restoreWithdrawn(e.Name())
	if dup && err == nil {
		c.emit("duplicate", "", name, "a delivery set it aside as a duplicate of a message in flight or handled, and died before removing it; removed")
		return ""
	}
	if name == "" || err != nil {
		return ""
	}
	c.emit("restored", "", name, "a delivery set it aside and did not put it back")
	if err := c.ingestFile(name, now); err != nil {
		c.emit("restored", "", name, err.Error())
	}
	return name
}

// removeLeftover removes the temp file of a delivery that died before
// linking it in. It never was a message; only its writer could have made
// it one.
func (c *Consumer) removeLeftover(e fs.DirEntry, now time.Time) {
	fi, err := e.Info()
	if err != nil || now.Sub(fi.ModTime()) < leftoverAge {
		return
	}
	if os.Remove(c.mb.path(InboxDir, e.Name())) == nil {
		c.emit("cleaned", "", e.Name(), "temp file of a delivery that did not finish")
	}
}
