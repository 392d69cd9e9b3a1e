package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// Stages a claim records in its progress record. The runner adds its own
// (injected, submitted, replied, …); these are the ones this package acts on.
const (
	StageClaimed = "claimed"
	// StageDone is recorded with the receipt; it commits the message to
	// the archive.
	StageDone          = "done"
	stageDeadlettering = "deadlettering"
)

// ReceiptSuffix ends the name of an archived message's receipt: its
// progress log, whose last line holds the Receipt.
const ReceiptSuffix = layout.ReceiptSuffix

// Receipt is the outcome of a message, the last record of its log.
type Receipt struct {
	ID          string            `json:"id"`
	Agent       string            `json:"agent"`
	Outcome     string            `json:"outcome"`
	ClaimedAt   time.Time         `json:"claimed_at"`
	CompletedAt time.Time         `json:"completed_at"`
	Attempts    int               `json:"attempts"`
	Reply       string            `json:"reply,omitempty"`
	Timings     map[string]string `json:"timings,omitempty"`
	// Data is what the settler has to say of the outcome beyond these
	// fields (what a reply sent, who approved, why it was dropped). As
	// with Progress.Data, this package never looks into it: it is a JSON
	// object whose shape the caller owns, kept as written and read back as
	// it is.
	Data json.RawMessage `json:"data,omitempty"`
}

// Claim is a message taken out of the inbox for processing.
type Claim struct {
	Message  Message
	Progress Progress
	// Resumed is set when a previous consumer died with this message in
	// flight; Progress says how far it got.
	Resumed bool
	// Exhausted, on a resumed claim, says why it has had all its attempts
	// (its consumers kept stopping while working it): it is to be
	// dead-lettered with this reason, unless what it did can be finished.
	Exhausted string
	stem      string
	logSynced bool // the progress log's name is durable
}

var (
	// ErrEmpty is returned by Claim when no message is claimable now.
	ErrEmpty = errors.New("no message is waiting")
	// ErrInFlight is returned by Claim while another claim is unsettled:
	// an agent works on one message at a time.
	ErrInFlight = errors.New("a message is already in flight")
)

func (c *Consumer) processing(stem, suffix string) string {
	return c.mb.path(ProcessingDir, stem+suffix)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// Claim takes the most pressing claimable message: first whatever a crashed
// consumer left in flight, then by priority, then oldest first.
func (c *Consumer) Claim(now time.Time) (*Claim, error) {
	if c.inflight != nil {
		return nil, ErrInFlight
	}
	for len(c.orphans) > 0 {
		stem := c.orphans[0]
		c.orphans = c.orphans[1:]
		cl, err := c.resume(stem, now)
		if err != nil || cl != nil {
			return cl, err
		}
	}
	for {
		p := c.q.pop(now)
		if p == nil {
			return nil, ErrEmpty
		}
		err := os.Rename(c.mb.path(InboxDir, p.stem+MessageSuffix), c.processing(p.stem, MessageSuffix))
		if errors.Is(err, fs.ErrNotExist) {
			// Either the message was removed by hand since it was
			// indexed, or processing/ was: then it is put back and the
			// claim tried again.
			repaired, rerr := c.repair()
			if rerr != nil {
				return nil, rerr
			}
			if repaired {
				err = os.Rename(c.mb.path(InboxDir, p.stem+MessageSuffix), c.processing(p.stem, MessageSuffix))
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by hand since it was indexed
		}
		if err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", p.stem, err)
		}
		// Marked only once out of inbox/: a delivery that finds the marker
		// withdraws its copy, which must never be the one being claimed.
		if _, err := c.mb.markSeen(p.stem); err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", p.stem, err)
		}
		msg, err := c.readProcessing(p.stem)
		if err != nil {
			if err := c.deadletterProcessing(p.stem, "", err.Error(), now); err != nil {
				return nil, err
			}
			continue
		}
		cl := &Claim{Message: msg, stem: p.stem, Progress: Progress{
			ID: msg.ID, Agent: c.mb.Agent, PID: os.Getpid(), Host: hostname(),
			ClaimedAt: now, Attempt: msg.Attempts + 1, Stage: StageClaimed,
			Stages: map[string]time.Time{StageClaimed: now},
		}}
		if msg.ExpiresAt != nil && now.After(*msg.ExpiresAt) {
			reason := fmt.Sprintf("it expired at %s before it could be processed", msg.ExpiresAt.UTC().Format(time.RFC3339))
			if err := c.settleDead(cl, reason, now); err != nil {
				return nil, err
			}
			continue
		}
		// The first record needs no fsync: if a power cut takes it, the
		// message is still in processing/ and is recovered without it.
		if err := c.appendProgress(cl, false); err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", msg.ID, err)
		}
		c.inflight = cl
		return cl, nil
	}
}

func (c *Consumer) readProcessing(stem string) (Message, error) {
	path := c.processing(stem, MessageSuffix)
	data, err := os.ReadFile(path)
	if err != nil {
		return Message{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Message{}, err
	}
	msg, err := Decode(data, Source{Name: stem + MessageSuffix, ModTime: fi.ModTime(), Owner: c.mb.Agent})
	if err != nil {
		return Message{}, err
	}
	return msg, nil
}

// Complete archives the message and its progress log, which ends with the
// receipt, under archive/YYYY-MM-DD/: Commit, then Archive.
func (c *Consumer) Complete(cl *Claim, r Receipt, now time.Time) error {
	if err := c.Commit(cl, r, now); err != nil {
		return err
	}
	return c.Archive(cl)
}

// Commit records the receipt, the commit point: a message whose log ends
// with a receipt is finished by recovery, never redone. The claim stays in
// flight until Archive, so that what must follow the commit and precede
// the archive (a caller's audit) can go in between.
func (c *Consumer) Commit(cl *Claim, r Receipt, now time.Time) error {
	r.ID, r.Agent, r.ClaimedAt, r.CompletedAt, r.Attempts = cl.Message.ID, c.mb.Agent, cl.Progress.ClaimedAt, now, cl.Progress.Attempt
	if r.Outcome == "" {
		r.Outcome = "done"
	}
	cl.Progress.Receipt = &r
	if err := c.Record(cl, StageDone, now); err != nil {
		// Not committed as far as this consumer knows: no later record of
		// the claim may carry the receipt. (One written but not synced
		// may still be read back; recovery then archives the message.)
		cl.Progress.Receipt = nil
		return fmt.Errorf("cannot record the receipt of %s: %w", r.ID, err)
	}
	return nil
}

// Archive moves a committed claim into the archive. The moves need no
// fsync of their own (recovery repeats them after a power cut), and no
// file is created, which here costs more than an fsync.
func (c *Consumer) Archive(cl *Claim) error {
	if cl.Progress.Receipt == nil {
		return fmt.Errorf("cannot archive %s: it has no receipt (Commit)", cl.Message.ID)
	}
	if err := c.finishComplete(cl.stem, cl.Progress.Receipt.CompletedAt); err != nil {
		return err
	}
	c.inflight = nil
	return nil
}

// finishComplete moves a message whose receipt is recorded, and its log,
// into the archive folder of the day it completed. It is idempotent, so
// recovery can repeat it.
func (c *Consumer) finishComplete(stem string, completed time.Time) error {
	c.log.close()
	day := c.mb.path(ArchiveDir, completed.UTC().Format("2006-01-02"))
	if err := atomicfile.MkdirAll(day); err != nil {
		return err
	}
	// The message first, the receipt last: the archive counts a message as
	// done by its receipt, so it never counts one still in processing/.
	for _, mv := range [][2]string{
		{c.processing(stem, MessageSuffix), filepath.Join(day, stem+MessageSuffix)},
		{c.processing(stem, ProgressSuffix), filepath.Join(day, stem+ReceiptSuffix)},
	} {
		if err := os.Rename(mv[0], mv[1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot archive %s: %w", stem, err)
		}
	}
	return nil
}

func (c *Consumer) dropProgress(stem string) error {
	c.log.close()
	// No fsync: a record that comes back after a power cut is dropped by
	// recovery, since its message has moved on.
	if err := os.Remove(c.processing(stem, ProgressSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Retry puts a failed message back in the inbox, held back by an
// exponential backoff, or dead-letters it once it has had all its attempts.
// dead reports which happened.
func (c *Consumer) Retry(cl *Claim, cause error, now time.Time) (dead bool, err error) {
	if cl.Progress.Attempt >= c.opts.MaxAttempts {
		reason := fmt.Sprintf("it failed %d times; last error: %v", cl.Progress.Attempt, cause)
		return true, c.Deadletter(cl, reason, now)
	}
	msg := cl.Message
	msg.Attempts = cl.Progress.Attempt
	msg.LastError = cause.Error()
	after := now.Add(backoff(c.opts.Backoff, msg.Attempts))
	msg.DeliverAfter = &after
	return false, c.requeue(cl, msg)
}

// Postpone puts a claimed message back in the inbox, not claimable before
// until, without counting an attempt: its consumer chose to work it later
// (a note that waits to be folded into a turn). What the caller changed in
// cl.Message (its meta) is kept.
func (c *Consumer) Postpone(cl *Claim, until time.Time) error {
	msg := cl.Message
	msg.DeliverAfter = &until
	return c.requeue(cl, msg)
}

// requeue replaces the claimed message with msg and moves it back to the
// inbox.
func (c *Consumer) requeue(cl *Claim, msg Message) error {
	if err := atomicfile.WriteFile(c.processing(cl.stem, MessageSuffix), msg.Encode()); err != nil {
		return fmt.Errorf("cannot requeue %s: %w", msg.ID, err)
	}
	if err := os.Rename(c.processing(cl.stem, MessageSuffix), c.mb.path(InboxDir, cl.stem+MessageSuffix)); err != nil {
		return fmt.Errorf("cannot requeue %s: %w", msg.ID, err)
	}
	if err := c.dropProgress(cl.stem); err != nil {
		return err
	}
	c.index(msg)
	c.inflight = nil
	return nil
}

// maxBackoff caps the doubling wait between retries.
const maxBackoff = time.Hour

// backoff is the wait before retry number attempt: base, doubling with
// each attempt, at most maxBackoff (and never an overflowed shift).
func backoff(base time.Duration, attempt int) time.Duration {
	wait := base
	for i := 1; i < attempt && wait < maxBackoff; i++ {
		wait *= 2
	}
	return min(wait, max(base, maxBackoff))
}

// Deadletter moves the claimed message to deadletter/ with reason.
func (c *Consumer) Deadletter(cl *Claim, reason string, now time.Time) error {
	if err := c.settleDead(cl, reason, now); err != nil {
		return err
	}
	c.inflight = nil
	return nil
}

func (c *Consumer) settleDead(cl *Claim, reason string, now time.Time) error {
	cl.Progress.Reason = reason
	if err := c.Record(cl, stageDeadlettering, now); err != nil {
		return err
	}
	if err := c.deadletterProcessing(cl.stem, cl.Message.ID, reason, now); err != nil {
		return err
	}
	c.emit("deadlettered", cl.Message.ID, cl.stem+MessageSuffix, reason)
	return nil
}

func (c *Consumer) deadletterProcessing(stem, id, reason string, now time.Time) error {
	_, err := c.mb.WriteDeadLetter(Letter{Name: stem + MessageSuffix, Fresh: true, From: c.processing(stem, MessageSuffix),
		Origin: ProcessingDir + "/" + stem + MessageSuffix, ID: id, Reason: reason}, now)
	if err != nil {
		return err
	}
	return c.dropProgress(stem)
}

// readReceipt reads the receipt at the end of an archived progress log.
func readReceipt(path string) (Receipt, error) {
	p, err := readProgressLog(path)
	if err != nil {
		return Receipt{}, err
	}
	if p.Receipt == nil {
		return Receipt{}, fmt.Errorf("%s ends without a receipt", path)
	}
	return *p.Receipt, nil
}
