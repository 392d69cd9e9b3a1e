package intake

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

// Options are the intake's settings; callers take them from agentctl.yaml.
// The rest (the agents of the runtime, the settle period, the size limit
// of one message, who hears of events) it takes from its consumer's
// mailbox.Options.
type Options struct {
	// MaxInboxJSONBytes is the largest inbox.json ingested (default 64 MiB);
	// a larger one goes to deadletter/ unread. It bounds an appended text
	// file read whole too.
	MaxInboxJSONBytes int64
	// LockWait is how long one look at inbox.json tries inbox.json.lock
	// (default 100ms). A lock held longer is tried again within a second,
	// and meanwhile Waiting says so.
	LockWait time.Duration
	// Clock times the waits for the writers' locks (inbox.json.lock and
	// those of the watched inboxes); clock.System when nil.
	Clock clock.Clock
	// Watch and Shared are places outside the mailbox where old writers
	// still write (extra.go): absolute paths of folders, files or globs.
	// Watch holds this agent's messages; Shared holds every agent's, each
	// taken by the intake of the agent it is addressed to.
	Watch, Shared []string
	// Take lists those of the places above, spelled the same, that this
	// intake may empty: a message file there is removed once delivered,
	// and an inbox.json is given back empty under its writers' lock, as an
	// old reader did. Every other place is only read (watched.go).
	Take []string
	// SharedDeadletters makes this intake the one that dead-letters what
	// the shared places hold for no agent (one agent of the runtime has it).
	SharedDeadletters bool
	// Human is the person who routes by hand what is addressed to several
	// agents or none (review.go), and People everyone who has a mailbox
	// without being an agent. With no Human such messages are
	// dead-lettered.
	Human  string
	People []string
	// Stop, once closed, ends a long look between two messages: a runner
	// told to stop while it takes in 20,000 entries of an old inbox.json
	// stops within one delivery, and what is left waits, whole, in its
	// spool or its place for the next look.
	Stop <-chan struct{}
}

// stopped reports whether Stop is closed.
func (in *Intake) stopped() bool {
	select {
	case <-in.opts.Stop:
		return true
	default:
		return false
	}
}

// errStopped ends a walk over a spool when Stop is closed.
var errStopped = errors.New("the intake was told to stop")

func (o *Options) defaults() {
	if o.MaxInboxJSONBytes <= 0 {
		o.MaxInboxJSONBytes = 64 << 20
	}
	if o.LockWait <= 0 {
		o.LockWait = 100 * time.Millisecond
	}
}

// Intake takes in the messages of one mailbox that arrive other than as
// canonical files in inbox/, and hands each to its Consumer. Like the
// Consumer, it is owned by one goroutine.
type Intake struct {
	c        *mailbox.Consumer
	mb       *mailbox.Mailbox
	opts     Options
	store    mailbox.Options // the consumer's, defaults filled in
	settling *mailbox.Settler
	lockBusy lockBusy // inbox.json.lock found held by another process
	// oversized is, for each watched inbox too large to read whole, the
	// size it was said to be left unread at: said once, not at each look.
	oversized map[string]int64
	// linked is each path a glob matched through a symbolic link, said
	// once (throughLink).
	linked map[string]bool
}

// tooLarge reports whether the watched inbox at path (an inbox.json, or a
// .txt one appended to) is over mailbox.max_inbox_json_bytes, and then
// says once, for its size, that it is left unread.
func (in *Intake) tooLarge(path string, fi fs.FileInfo) bool {
	if fi.Size() <= in.opts.MaxInboxJSONBytes {
		return false
	}
	if in.oversized[path] != fi.Size() {
		if in.oversized == nil {
			in.oversized = map[string]int64{}
		}
		in.oversized[path] = fi.Size()
		in.emit("unreadable", "", path, fmt.Sprintf("it is %d bytes, over the %d-byte limit (mailbox.max_inbox_json_bytes) for an inbox read whole; left where it is, unread", fi.Size(), in.opts.MaxInboxJSONBytes))
	}
	return true
}

// New makes the intake of c's mailbox. It looks at nothing until Scan.
func New(c *mailbox.Consumer, opts Options) *Intake {
	opts.defaults()
	return &Intake{c: c, mb: c.Mailbox(), opts: opts, store: c.Options(), settling: mailbox.NewSettler(c.Options().Settle)}
}

// Idle does what a runner does first when no consumer holds the mailbox:
// it takes in inbox.json and the files dropped into inbox/, so that every
// pending message has a canonical file to act on. With a consumer up it
// does nothing, since that consumer's intake takes them in itself.
func Idle(mb *mailbox.Mailbox, store mailbox.Options, opts Options, now time.Time) error {
	c, err := mb.Consume(store, now)
	if errors.Is(err, mailbox.ErrConsumerRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	err = New(c, opts).Scan(now)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// Scan is the full rescan: the consumer's of inbox/, then inbox.json (and
// what earlier takings left in .ingest/), then the places outside the
// mailbox.
func (in *Intake) Scan(now time.Time) error {
	if err := in.c.Scan(now); err != nil {
		return err
	}
	if err := in.ingestInboxJSON(now); err != nil {
		return err
	}
	return in.scanExtra(now)
}

// Notice handles names that file events reported: inbox.json, paths of the
// places outside the mailbox, and names in inbox/, which are the
// consumer's.
func (in *Intake) Notice(now time.Time, names ...string) error {
	for _, name := range names {
		var err error
		switch {
		case name == mailbox.InboxJSON:
			err = in.ingestInboxJSON(now)
		case filepath.IsAbs(name): // a file of the places old writers write to
			err = in.noticeExtra(name, now)
		default:
			err = in.c.Notice(now, name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Tick looks at inbox.json again when its lock was held last time, reads
// the settling files outside the mailbox whose settle period has passed,
// and lets the consumer do the same in inbox/.
func (in *Intake) Tick(now time.Time) error {
	if retry, busy := in.lockBusy.retryAt(); busy && !now.Before(retry) {
		if err := in.ingestInboxJSON(now); err != nil {
			return err
		}
	}
	for _, path := range in.settling.Due(now) {
		if err := in.noticeExtra(path, now); err != nil {
			return err
		}
	}
	return in.c.Tick(now)
}

// NextWake is when the intake or its consumer next has something to do
// without any new file event.
func (in *Intake) NextWake() (t time.Time, ok bool) {
	t, ok = in.c.NextWake()
	if due, waits := in.settling.Next(); waits && (!ok || due.Before(t)) {
		t, ok = due, true
	}
	if retry, busy := in.lockBusy.retryAt(); busy && (!ok || retry.Before(t)) {
		t, ok = retry, true
	}
	return t, ok
}

func (in *Intake) emit(kind, id, file, reason string) {
	if in.store.OnEvent != nil {
		in.store.OnEvent(mailbox.Event{Kind: kind, ID: id, File: file, Reason: reason})
	}
}

// path is a file of the intake's inside the mailbox folder: inbox.json,
// its lock, .ingest/ and .offsets/.
func (in *Intake) path(parts ...string) string {
	return filepath.Join(append([]string{in.mb.Dir}, parts...)...)
}

// deadletter hands what cannot be used to the mailbox's one writer of
// deadletter/, and tells of it when it landed.
func (in *Intake) deadletter(l mailbox.Letter, now time.Time) error {
	written, err := in.mb.WriteDeadLetter(l, now)
	if written {
		in.emit("deadlettered", "", l.Origin, l.Reason)
	}
	return err
}
