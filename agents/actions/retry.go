package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
)

// Retried is a dead letter put back into an inbox.
type Retried struct {
	// Message is the message as requeued.
	Message mailbox.Message
	// Mailbox is where it went.
	Mailbox *mailbox.Mailbox
	// Was is the dead letter it was.
	Was mailbox.DeadLetter
}

// Retry puts the dead letter ref (an id or a file name) back into an
// inbox: the mailbox of to when set, else its own. only limits the search
// to one mailbox. The dead letter's mailbox is locked by hand meanwhile,
// so that of two retries at once the second finds it retried.
func (rt Runtime) Retry(ctx context.Context, ref, to, only string) (Retried, error) {
	found, release, err := rt.LockOne(ctx, ref, only, false, func(all []Located) (Located, error) {
		return OneOf(ref, "a dead letter", InState(all, mailbox.StateDead), all)
	})
	if err != nil {
		return Retried{}, err
	}
	defer release()
	dl := found.Mailbox.ReadDeadLetter(found.Entry)
	if dl.Problem != "" {
		return Retried{Was: dl}, WithHint(fmt.Errorf("cannot retry %s: it still cannot be read: %s", found, dl.Problem),
			fmt.Sprintf("fix %s/%s and run retry again, or settle it with 'agentctl drop %s'", found.Mailbox.Dir, dl.File, ref))
	}
	target := found.Mailbox
	switch {
	case to != "":
		if target, err = rt.OpenMailbox(to); err != nil {
			return Retried{Was: dl}, err
		}
	case dl.Message.To != "" && !strings.EqualFold(dl.Message.To, found.Mailbox.Agent):
		addressee, err := agentname.Resolve(rt.Config.MailboxNames(), dl.Message.To)
		if err != nil {
			return Retried{Was: dl}, WithHint(fmt.Errorf("cannot retry %s: it is addressed to %q, who has no mailbox here", ref, dl.Message.To),
				"deliver it to someone who has one with --to AGENT")
		}
		return Retried{Was: dl}, WithHint(fmt.Errorf("cannot retry %s in %s's mailbox: it is addressed to %s", ref, found.Mailbox.Agent, addressee),
			fmt.Sprintf("deliver it there with: agentctl retry %s --to %s", ref, addressee))
	}
	msg, err := found.Mailbox.Requeue(dl, target, rt.now())
	return Retried{Message: msg, Mailbox: target, Was: dl}, err
}
