package actions

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/mailbox"
)

// Dropped is a pending or dead message archived without being worked.
type Dropped struct {
	Located
	// Reason is the reason its receipt keeps.
	Reason string
}

// Drop archives the pending or dead message ref (an id, or the file name
// of a dead letter that could not be read) with a receipt whose outcome is
// "dropped" and the reason. only limits the search to one mailbox. A
// message in flight is refused: only its turn settles it.
func (rt Runtime) Drop(ctx context.Context, ref, only, reason string) (Dropped, error) {
	found, release, err := rt.LockOne(ctx, ref, only, true, func(all []Located) (Located, error) {
		if busy := InState(all, mailbox.StateProcessing); len(busy) > 0 {
			agent := busy[0].Mailbox.Agent
			return Located{}, WithHint(fmt.Errorf("%s is in flight in %s's mailbox: only its turn can settle it", ref, agent),
				fmt.Sprintf("abandon the turn with 'agentctl skip %s', then drop it", agent))
		}
		return OneOf(ref, "pending or dead", InState(all, mailbox.StatePending, mailbox.StateDead), all)
	})
	if err != nil {
		return Dropped{}, err
	}
	defer release()
	if reason == "" {
		reason = "no reason given"
	}
	data, err := receipt.Encode(receipt.Data{Reason: reason, Was: found.Entry.State})
	if err != nil {
		return Dropped{}, err
	}
	err = found.Mailbox.Settle(found.Entry, mailbox.Receipt{Outcome: "dropped", Data: data}, rt.now().UTC())
	if errors.Is(err, mailbox.ErrMoved) {
		return Dropped{}, WithHint(fmt.Errorf("%s moved while it was being dropped (a runner claimed it?)", ref),
			fmt.Sprintf("see where it is with 'agentctl inbox %s --state all'", found.Mailbox.Agent))
	}
	if err != nil {
		return Dropped{}, err
	}
	return Dropped{found, reason}, nil
}
