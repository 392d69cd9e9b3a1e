package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// recover deals with what a crashed consumer left in processing/: archives
// and dead letters that were half done are finished, messages that were in
// flight are handed out again first (see Claim), and progress logs whose
// message already moved on are dropped.
func (c *Consumer) recover(now time.Time) error {
	entries, err := os.ReadDir(c.mb.path(ProcessingDir))
	if err != nil {
		return fmt.Errorf("cannot recover %s's processing folder: %w", c.mb.Agent, err)
	}
	for _, e := range entries {
		name := e.Name()
		if Ignored(name) {
			continue
		}
		if stem, ok := strings.CutSuffix(name, ProgressSuffix); ok {
			if _, err := os.Lstat(c.processing(stem, MessageSuffix)); !errors.Is(err, fs.ErrNotExist) {
				continue // handled with its message below
			}
			// The message has moved on: archive a completed log, drop any other.
			var err error
			if p, perr := c.loadProgress(stem); perr == nil && p.Receipt != nil {
				err = c.finishComplete(stem, p.Receipt.CompletedAt)
			} else {
				err = c.dropProgress(stem)
			}
			if err != nil {
				return err
			}
			continue
		}
		stem, ok := strings.CutSuffix(name, MessageSuffix)
		if !ok || strings.Contains(stem, ".") {
			// Nothing agentctl writes: a person's file. It is kept, where
			// status counts it as dead rather than forever in flight.
			reason := "found in processing/, where only claimed messages and their progress logs belong"
			if _, err := c.mb.WriteDeadLetter(Letter{Name: now.UTC().Format("20060102T150405Z") + "-" + name, Fresh: true,
				From: c.processing(name, ""), Origin: ProcessingDir + "/" + name, Reason: reason}, now); err != nil {
				return err
			}
			c.emit("deadlettered", "", ProcessingDir+"/"+name, reason)
			continue
		}
		how := ""
		if p, perr := c.loadProgress(stem); perr == nil {
			if how, err = c.finishSettled(stem, p, now); err != nil {
				return err
			}
		}
		if how == "" {
			if err := c.adoptOrphan(stem); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishSettled finishes the move a consumer had decided on for the claim
// stem, as its progress p records, before it stopped: the dead-lettering
// it had begun, or the archive of a turn whose receipt it recorded. how
// says which, in words; "" when it had decided nothing.
func (c *Consumer) finishSettled(stem string, p Progress, now time.Time) (how string, err error) {
	switch {
	case p.Stage == stageDeadlettering:
		return fmt.Sprintf("it was being dead-lettered (%s) and is in deadletter/ now", p.Reason), c.deadletterProcessing(stem, p.ID, p.Reason, now)
	case p.Receipt != nil:
		return fmt.Sprintf("its turn had ended (%s) and is archived now", p.Receipt.Outcome), c.finishComplete(stem, p.Receipt.CompletedAt)
	}
	return "", nil
}

// adoptOrphan queues a message left in flight to be handed out first. A
// crash between the claim's rename and its .seen marker let a delivery of
// the same id put a second copy in inbox/; that copy is the same message
// and is dropped, and the marker is written now.
func (c *Consumer) adoptOrphan(stem string) error {
	c.orphans = append(c.orphans, stem)
	if _, err := c.mb.markSeen(stem); err != nil {
		return err
	}
	err := os.Remove(c.mb.path(InboxDir, stem+MessageSuffix))
	if err == nil {
		c.emit("duplicate", "", stem+MessageSuffix, "a copy of the message left in flight")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot drop the inbox copy of %s: %w", stem, err)
	}
	return nil
}

// resume hands out a message a crashed consumer left in flight, counting
// the crash as an attempt (not a stop on purpose, LetGo); a message that
// keeps crashing its consumer comes back Exhausted, for its caller to
// dead-letter, telling whom it tells, instead of looping forever.
func (c *Consumer) resume(stem string, now time.Time) (*Claim, error) {
	msg, err := c.readProcessing(stem)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, c.deadletterProcessing(stem, "", err.Error(), now)
	}
	if err := endTornLine(c.processing(stem, ProgressSuffix)); err != nil {
		return nil, fmt.Errorf("cannot resume %s: %w", msg.ID, err)
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
	if !p.LetGo && (c.opts.Interrupted == nil || !c.opts.Interrupted(p)) {
		p.Attempt++
	}
	p.LetGo = false // this consumer's own stop is judged afresh
	p.Stages["resumed"] = now
	cl := &Claim{Message: msg, Progress: p, Resumed: true, stem: stem}
	if p.Attempt > c.opts.MaxAttempts {
		cl.Exhausted = fmt.Sprintf("its consumer stopped %d times while processing it", p.Attempt-1)
	}
	if err := c.appendProgress(cl, true); err != nil {
		return nil, err
	}
	c.emit("recovered", msg.ID, stem+MessageSuffix, "left in flight by a stopped consumer")
	c.inflight = cl
	return cl, nil
}
