package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// byHandWait bounds how long a person's command waits for another one
// acting on the same mailbox: each holds the lock for one message's
// find, act and settle, which takes well under a second unless a board
// lock it needs is itself held.
const byHandWait = 30 * time.Second

// LockByHand keeps every other person's command off this mailbox's
// messages until release is called. Reply, approve, deny, drop and retry
// each find their message, act on it and settle it under this lock, so two
// of them never act on one message at once: without it, an approve and a
// deny of one request could both pass the check that it still waits, and
// the effect be applied while the request was archived as denied; two
// retries of one dead letter could each put a copy back.
//
// A runner takes it only to withdraw an approval request its turn no
// longer waits for, never to claim, so a message may still be claimed
// while a command holds it: Settle then reports ErrMoved. Within one process the
// lock is not reentrant: take it once per command.
func (m *Mailbox) LockByHand(ctx context.Context) (release func(), err error) {
	path := layout.MustFor(m.Root, m.Agent).ByHandLock()
	if err := atomicfile.MkdirAll(LocksDir(m.Root)); err != nil {
		return nil, err
	}
	lock, _, err := lockfile.Acquire(ctx, path, lockfile.Wait{For: byHandWait, Clock: m.Clock})
	var busy *lockfile.BusyError
	switch {
	case err == nil:
		return func() { lock.Unlock() }, nil
	case errors.As(err, &busy):
		who := busy.Holder.String()
		if who == "" {
			who = "another command"
		}
		return nil, fmt.Errorf("%s is still acting on a message of %s's mailbox after %s; try again once it is done", who, m.Agent, busy.Waited.Round(time.Second))
	default:
		return nil, fmt.Errorf("cannot lock %s's mailbox for a change by hand: %w", m.Agent, err)
	}
}
