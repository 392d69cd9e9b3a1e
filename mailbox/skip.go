package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// SkipJSON is the request, in the mailbox folder, that the runner abandon
// the turn in flight (agentctl skip). The runner watches for it during a
// turn and removes it once the message is settled.
const SkipJSON = layout.SkipJSON

// SkipRequest asks the runner to abandon the turn on message ID.
type SkipRequest struct {
	ID     string    `json:"id"`
	Reason string    `json:"reason"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at"`
}

// RequestSkip writes the skip request atomically, replacing an older one.
func (m *Mailbox) RequestSkip(r SkipRequest) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(m.path(SkipJSON), append(data, '\n')); err != nil {
		return fmt.Errorf("cannot ask %s's runner to skip: %w", m.Agent, err)
	}
	return nil
}

// SkipRequested returns the skip request for message id, if there is one.
// A request for another message is not this turn's and is ignored.
func (m *Mailbox) SkipRequested(id string) (SkipRequest, bool) {
	data, err := os.ReadFile(m.path(SkipJSON))
	if err != nil {
		return SkipRequest{}, false
	}
	var r SkipRequest
	if json.Unmarshal(data, &r) != nil || r.ID != id {
		return SkipRequest{}, false
	}
	return r, true
}

// ClearSkipRequest removes the skip request for message id, leaving one
// for another message in place.
func (m *Mailbox) ClearSkipRequest(id string) error {
	if _, ok := m.SkipRequested(id); !ok {
		return nil
	}
	if err := os.Remove(m.path(SkipJSON)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove %s's skip request: %w", m.Agent, err)
	}
	return nil
}

// ErrSettled is returned by Abandon for a message whose runner had settled
// it (its receipt or its dead-lettering recorded) before it stopped: the
// skip came too late, and the message is put where its runner meant it to
// go.
var ErrSettled = errors.New("its runner had already settled it")

// Abandon dead-letters the message id in flight with reason, for when no
// runner is there to do it: it takes the consumer lock as Consume does and
// fails with a *LockedError while a runner holds it. The dead-lettering is
// recorded first, so a crash half-way is finished by the next consumer.
// A message its runner had settled before it stopped is finished as the
// next consumer would finish it, and Abandon says so with ErrSettled:
// dead-lettering a turn whose receipt is recorded would have it run again
// on a retry, effects and all.
func (m *Mailbox) Abandon(id, reason string, now time.Time) (Message, error) {
	lock, _, err := m.lockConsumer(ConsumerLockPath(m.Root, m.Agent), Options{})
	if err != nil {
		return Message{}, err
	}
	defer lock.Unlock()
	c := &Consumer{mb: m, lock: lock, q: newQueue(), settling: NewSettler(0)}
	stem := Stem(id)
	msg, err := c.readProcessing(stem)
	if errors.Is(err, fs.ErrNotExist) {
		return Message{}, fmt.Errorf("cannot skip %s: %w", id, ErrMoved)
	}
	if err != nil {
		return Message{}, c.deadletterProcessing(stem, id, reason, now)
	}
	p, err := c.loadProgress(stem)
	if err != nil || p.ID != msg.ID {
		p = Progress{ID: msg.ID, Agent: m.Agent, ClaimedAt: now, Attempt: msg.Attempts + 1}
	}
	if p.Stages == nil {
		p.Stages = map[string]time.Time{}
	}
	how, err := c.finishSettled(stem, p, now)
	var settled error
	if how != "" {
		settled = fmt.Errorf("%w: %s", ErrSettled, how)
	} else if err == nil {
		err = c.settleDead(&Claim{Message: msg, Progress: p, Resumed: true, stem: stem}, reason, now)
	}
	if err != nil {
		return msg, err
	}
	// The runner that died in the turn left its heartbeat saying it works
	// on the message, settled now. Under the consumer lock no runner is
	// up to write its own.
	if st, err := m.ReadStatus(); err == nil && st.Current == msg.ID {
		st.State, st.Current, st.Subject, st.Since, st.Waiting = "stopped", "", "", now.UTC(), ""
		if err := m.WriteStatus(st); err != nil {
			return msg, err
		}
	}
	return msg, settled
}
