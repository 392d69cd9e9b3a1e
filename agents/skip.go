package agents

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/mailbox"
)

// A person abandons a turn with `agentctl skip`: the command leaves a
// request in the mailbox folder (mailbox.SkipJSON) and the turn, which
// watches for it, is cancelled. The drivers clean up on cancellation (the
// GUI driver restores the clipboard and releases the desktop lock, the exec
// driver ends the process group), and the message goes to deadletter/ with
// the person's reason, where `agentctl retry` can bring it back.

// skipPoll is how often a turn looks for a skip request: a stat of one
// file, cheap next to a turn, and quick enough for a person waiting.
var skipPoll = 250 * time.Millisecond

// SkipReason is the dead-letter reason of a message a person skipped.
func SkipReason(reason string) string { return "skipped by a person: " + reason }

// skipError ends a turn that a person skipped.
type skipError struct{ req mailbox.SkipRequest }

func (e *skipError) Error() string { return SkipReason(e.req.Reason) }

// watchSkip cancels the turn on message id once a skip request for it
// appears. requested says whether one did; stop ends the watch.
func (r *Runner) watchSkip(id string, cancel func()) (requested func() (mailbox.SkipRequest, bool), stop func()) {
	var mu sync.Mutex
	var req mailbox.SkipRequest
	var seen bool
	look := func() bool {
		q, ok := r.mb.SkipRequested(id)
		if ok {
			mu.Lock()
			req, seen = q, true
			mu.Unlock()
			cancel()
		}
		return ok
	}
	stop = func() {}
	if !look() {
		stop = during(r.s.Clock, skipPoll, look)
	}
	requested = func() (mailbox.SkipRequest, bool) {
		mu.Lock()
		defer mu.Unlock()
		return req, seen
	}
	return requested, stop
}

// skipped settles a message whose turn a person skipped: the devlog says
// so, the sender hears of it as of any dead letter, and the message goes
// to deadletter/ with the person's reason.
func (r *Runner) skipped(log zerolog.Logger, cl *claim, req mailbox.SkipRequest) error {
	now := r.now()
	reason := SkipReason(req.Reason)
	if err := r.devlogOnce(cl, devlogEntry(r.s.Agent, cl.Message, now, "skipped", "", reason)); err != nil {
		return err
	}
	r.notifySettled(cl.Message, "dead-lettered: "+reason, now)
	if err := r.deadletterClaim(cl, reason, now); err != nil {
		return err
	}
	r.hb.count("skipped")
	log.Warn().Str("event", "skipped").Str("reason", reason).Msg("turn skipped by a person; message dead-lettered")
	return r.mb.ClearSkipRequest(cl.Message.ID)
}

// Skip does what a runner does on a skip request, for a message left in
// flight when no runner is up: it dead-letters message id of agent's
// mailbox with the person's reason under the consumer lock, then writes
// the devlog entry and tells the sender. It fails with a
// *mailbox.LockedError when a runner holds the mailbox after all; ask that
// runner instead.
func Skip(root, agent, human, id, reason string, log zerolog.Logger, now time.Time) (mailbox.Message, error) {
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		return mailbox.Message{}, err
	}
	why := SkipReason(reason)
	msg, err := mb.Abandon(id, why, now)
	if err != nil {
		return msg, err
	}
	if err := devlog.Append(root, devlogEntry(agent, msg, now, "skipped", "", why)); err != nil {
		return msg, err
	}
	notifySettled(root, agent, human, log, msg, "dead-lettered: "+why, now)
	return msg, mb.ClearSkipRequest(id)
}

// withHistory adds to a receipt's data how the message died before a person
// brought it back (agentctl retry), so the receipt tells its whole story.
func withHistory(d receipt.Data, msg mailbox.Message) receipt.Data {
	d.DeadletterHistory = mailbox.Deaths(msg)
	return d
}
