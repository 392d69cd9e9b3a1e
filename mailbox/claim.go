package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"agentctl/internal/atomicfile"
)

// Stages a claim records in its progress record. The runner adds its own
// (injected, submitted, replied, …); these are the ones this package acts on.
const (
	StageClaimed       = "claimed"
	stageCompleting    = "completing"
	stageDeadlettering = "deadlettering"
)

// Progress is the record kept beside a message in processing/. It is
// rewritten atomically at every step, so after a crash the next consumer
// knows how far the message got.
type Progress struct {
	ID        string               `json:"id"`
	Agent     string               `json:"agent"`
	PID       int                  `json:"pid"`
	Host      string               `json:"host"`
	ClaimedAt time.Time            `json:"claimed_at"`
	Attempt   int                  `json:"attempt"`
	Stage     string               `json:"stage"`
	Stages    map[string]time.Time `json:"stages"`
	// Data is the caller's own bookkeeping (what it already did), kept
	// across crashes.
	Data map[string]any `json:"data,omitempty"`
	// Set while the message is being archived or dead-lettered, so that a
	// crash half-way is finished the same way.
	Receipt *Receipt `json:"receipt,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}

// Receipt is written beside an archived message.
type Receipt struct {
	ID          string            `json:"id"`
	Agent       string            `json:"agent"`
	Outcome     string            `json:"outcome"`
	ClaimedAt   time.Time         `json:"claimed_at"`
	CompletedAt time.Time         `json:"completed_at"`
	Attempts    int               `json:"attempts"`
	Reply       string            `json:"reply,omitempty"`
	Timings     map[string]string `json:"timings,omitempty"`
	Data        map[string]any    `json:"data,omitempty"`
}

// Claim is a message taken out of the inbox for processing.
type Claim struct {
	Message  Message
	Progress Progress
	// Resumed is set when a previous consumer died with this message in
	// flight; Progress says how far it got.
	Resumed bool
	stem    string
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
		err := os.Rename(c.mb.path(InboxDir, p.stem+".json"), c.processing(p.stem, ".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by hand since it was indexed
		}
		if err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", p.stem, err)
		}
		msg, err := c.readProcessing(p.stem)
		if err != nil {
			if err := c.deadletterProcessing(p.stem, "", err.Error(), now); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := c.mb.markSeen(p.stem); err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", msg.ID, err)
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
		if err := c.saveProgress(cl); err != nil {
			return nil, fmt.Errorf("cannot claim %s: %w", msg.ID, err)
		}
		c.inflight = cl
		return cl, nil
	}
}

func (c *Consumer) readProcessing(stem string) (Message, error) {
	path := c.processing(stem, ".json")
	data, err := os.ReadFile(path)
	if err != nil {
		return Message{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Message{}, err
	}
	msg, err := Decode(data, Source{Name: stem + ".json", ModTime: fi.ModTime(), Owner: c.mb.Agent})
	if err != nil {
		return Message{}, err
	}
	return msg, nil
}

func (c *Consumer) saveProgress(cl *Claim) error {
	data, err := json.MarshalIndent(cl.Progress, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(c.processing(cl.stem, ".progress.json"), append(data, '\n'))
}

// Record marks that the claim reached stage (and saves any change the
// caller made to cl.Progress.Data) before the caller goes on, so a crash
// after this point resumes from here.
func (c *Consumer) Record(cl *Claim, stage string, now time.Time) error {
	cl.Progress.Stage = stage
	cl.Progress.Stages[stage] = now
	if err := c.saveProgress(cl); err != nil {
		return fmt.Errorf("cannot record %s of %s: %w", stage, cl.Message.ID, err)
	}
	return nil
}

// Complete archives the message with its receipt under archive/YYYY-MM-DD/.
func (c *Consumer) Complete(cl *Claim, r Receipt, now time.Time) error {
	r.ID, r.Agent, r.ClaimedAt, r.CompletedAt, r.Attempts = cl.Message.ID, c.mb.Agent, cl.Progress.ClaimedAt, now, cl.Progress.Attempt
	if r.Outcome == "" {
		r.Outcome = "done"
	}
	cl.Progress.Receipt = &r
	if err := c.Record(cl, stageCompleting, now); err != nil {
		return err
	}
	if err := c.finishComplete(cl.stem, r); err != nil {
		return err
	}
	c.inflight = nil
	return nil
}

func (c *Consumer) finishComplete(stem string, r Receipt) error {
	day := c.mb.path(ArchiveDir, r.CompletedAt.UTC().Format("2006-01-02"))
	if err := atomicfile.MkdirAll(day); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(day+"/"+stem+".receipt.json", append(data, '\n')); err != nil {
		return fmt.Errorf("cannot archive %s: %w", r.ID, err)
	}
	if err := os.Rename(c.processing(stem, ".json"), day+"/"+stem+".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot archive %s: %w", r.ID, err)
	}
	if err := atomicfile.SyncDir(day); err != nil {
		return err
	}
	return c.dropProgress(stem)
}

func (c *Consumer) dropProgress(stem string) error {
	if err := os.Remove(c.processing(stem, ".progress.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.SyncDir(c.mb.path(ProcessingDir))
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
	after := now.Add(c.opts.Backoff << (msg.Attempts - 1))
	msg.DeliverAfter = &after
	if err := atomicfile.WriteFile(c.processing(cl.stem, ".json"), msg.Encode()); err != nil {
		return false, fmt.Errorf("cannot requeue %s: %w", msg.ID, err)
	}
	if err := os.Rename(c.processing(cl.stem, ".json"), c.mb.path(InboxDir, cl.stem+".json")); err != nil {
		return false, fmt.Errorf("cannot requeue %s: %w", msg.ID, err)
	}
	if err := c.dropProgress(cl.stem); err != nil {
		return false, err
	}
	c.index(msg)
	c.inflight = nil
	return false, nil
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
	c.emit("deadlettered", cl.Message.ID, cl.stem+".json", reason)
	return nil
}

func (c *Consumer) deadletterProcessing(stem, id, reason string, now time.Time) error {
	dst := c.mb.freeDeadletterName(stem + ".json")
	text := reasonText(c.mb.Agent, ProcessingDir+"/"+stem+".json", id, reason, now)
	if err := c.mb.moveToDeadletter(c.processing(stem, ".json"), dst, text); err != nil {
		return err
	}
	return c.dropProgress(stem)
}

// recover deals with what a crashed consumer left in processing/: archives
// and dead letters that were half done are finished, messages that were in
// flight are handed out again first (see Claim), and progress records whose
// message already moved on are dropped.
func (c *Consumer) recover(now time.Time) error {
	entries, err := os.ReadDir(c.mb.path(ProcessingDir))
	if err != nil {
		return fmt.Errorf("cannot recover %s's processing folder: %w", c.mb.Agent, err)
	}
	for _, e := range entries {
		name := e.Name()
		if isIgnored(name) {
			continue
		}
		if stem, ok := strings.CutSuffix(name, ".progress.json"); ok {
			if _, err := os.Lstat(c.processing(stem, ".json")); errors.Is(err, fs.ErrNotExist) {
				p, _ := c.loadProgress(stem)
				if p.Receipt != nil { // archived, but the record outlived it
					if err := c.finishComplete(stem, *p.Receipt); err != nil {
						return err
					}
				} else if err := c.dropProgress(stem); err != nil {
					return err
				}
			}
			continue
		}
		stem, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.Contains(stem, ".") {
			continue
		}
		p, err := c.loadProgress(stem)
		switch {
		case err == nil && p.Stage == stageCompleting && p.Receipt != nil:
			err = c.finishComplete(stem, *p.Receipt)
		case err == nil && p.Stage == stageDeadlettering:
			err = c.deadletterProcessing(stem, p.ID, p.Reason, now)
		default:
			c.orphans = append(c.orphans, stem)
			err = nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Consumer) loadProgress(stem string) (Progress, error) {
	var p Progress
	data, err := os.ReadFile(c.processing(stem, ".progress.json"))
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(data, &p)
}

// resume hands out a message a crashed consumer left in flight, counting
// the crash as an attempt; a message that keeps crashing its consumer ends
// in deadletter/ instead of looping forever.
func (c *Consumer) resume(stem string, now time.Time) (*Claim, error) {
	msg, err := c.readProcessing(stem)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, c.deadletterProcessing(stem, "", err.Error(), now)
	}
	p, err := c.loadProgress(stem)
	if err != nil || p.ID != msg.ID {
		// Crashed between the claim's rename and its first record.
		p = Progress{ID: msg.ID, ClaimedAt: now, Attempt: msg.Attempts + 1, Stage: StageClaimed, Stages: map[string]time.Time{}}
	}
	if p.Stages == nil {
		p.Stages = map[string]time.Time{}
	}
	p.Agent, p.PID, p.Host = c.mb.Agent, os.Getpid(), hostname()
	p.Attempt++
	p.Stages["resumed"] = now
	cl := &Claim{Message: msg, Progress: p, Resumed: true, stem: stem}
	if p.Attempt > c.opts.MaxAttempts {
		reason := fmt.Sprintf("the consumer stopped %d times while processing it", p.Attempt-1)
		return nil, c.settleDead(cl, reason, now)
	}
	if err := c.saveProgress(cl); err != nil {
		return nil, err
	}
	if _, err := c.mb.markSeen(stem); err != nil {
		return nil, err
	}
	c.emit("recovered", msg.ID, stem+".json", "left in flight by a stopped consumer")
	c.inflight = cl
	return cl, nil
}

func readReceipt(path string) (Receipt, error) {
	var r Receipt
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(data, &r)
}
