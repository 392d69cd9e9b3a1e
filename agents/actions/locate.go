package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Located is a message found by id, and the mailbox it is in.
type Located struct {
	Mailbox *mailbox.Mailbox
	Entry   mailbox.Entry
}

func (l Located) String() string { return l.Mailbox.Agent + " " + l.Entry.File }

// Locate finds ref (a message id, or a dead letter's file name) in the
// mailbox of only, or in every agent's and person's when only is empty.
// With ingest, mailboxes no runner holds first get what waits in
// inbox.json a file of its own, as their runner would.
func (rt Runtime) Locate(ref, only string, ingest bool) ([]Located, error) {
	names := rt.Config.MailboxNames()
	if only != "" {
		names = []string{only}
	}
	var found []Located
	for _, name := range names {
		mb, err := rt.OpenMailbox(name)
		if err != nil {
			if only != "" {
				return nil, err
			}
			continue // a missing mailbox holds nothing; status reports it
		}
		if ingest {
			if err := intake.Idle(mb, AdminOptions(rt.Config), IntakeOptions(rt.Config), rt.now()); err != nil {
				return nil, err
			}
		}
		entries, err := mb.Locate(ref)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			found = append(found, Located{mb, e})
		}
	}
	return found, nil
}

// LockOne finds ref as Locate does and lets pick choose the entry to act
// on, then takes the by-hand lock of its mailbox (mailbox.LockByHand) and
// looks again there under the lock: another person's command that settled
// or moved it meanwhile is seen, and pick says so. The entry it returns
// stays as it is, as far as those commands go, until release is called.
func (rt Runtime) LockOne(ctx context.Context, ref, only string, ingest bool, pick func(all []Located) (Located, error)) (found Located, release func(), err error) {
	all, err := rt.Locate(ref, only, ingest)
	if err != nil {
		return Located{}, nil, err
	}
	if found, err = pick(all); err != nil {
		return Located{}, nil, err
	}
	if release, err = found.Mailbox.LockByHand(ctx); err != nil {
		return Located{}, nil, err
	}
	entries, err := found.Mailbox.Locate(ref)
	if err == nil {
		all = all[:0]
		for _, e := range entries {
			all = append(all, Located{found.Mailbox, e})
		}
		found, err = pick(all)
	}
	if err != nil {
		release()
		return Located{}, nil, err
	}
	return found, release, nil
}

// InState keeps the entries in one of the given states.
func InState(all []Located, states ...string) []Located {
	var out []Located
	for _, l := range all {
		if slices.Contains(states, l.Entry.State) {
			out = append(out, l)
		}
	}
	return out
}

// OneOf picks the single entry an action works on, or says why it cannot:
// matches are the entries fit for it, all every entry ref names.
func OneOf(ref, what string, matches, all []Located) (Located, error) {
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		if len(all) > 0 {
			return Located{}, fmt.Errorf("%s is not %s: it is %s (%s)", ref, what, all[0].Entry.State, all[0])
		}
		return Located{}, WithHint(fmt.Errorf("no message %s in any mailbox", ref),
			"list messages with 'agentctl inbox NAME --state all'; a dead letter that could not be read goes by its file name")
	}
	var where []string
	for _, m := range matches {
		where = append(where, m.String())
	}
	return Located{}, WithHint(fmt.Errorf("%s names %d messages: %s", ref, len(matches), strings.Join(where, ", ")),
		"narrow it with --agent NAME, or name a dead letter by its file name")
}
