package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// located is a message found by id, and the mailbox it is in.
type located struct {
	mb *mailbox.Mailbox
	e  mailbox.Entry
}

func (l located) String() string { return l.mb.Agent + " " + l.e.File }

// locateEverywhere finds ref (a message id, or a dead letter's file name)
// in the mailbox of only, or in every agent's and person's when only is
// empty. With ingest, mailboxes no runner holds first get what waits in
// inbox.json a file of its own, as their runner would.
func locateEverywhere(env *Env, cfg config.Config, ref, only string, ingest bool) ([]located, error) {
	names := cfg.MailboxNames()
	if only != "" {
		names = []string{only}
	}
	var found []located
	for _, name := range names {
		mb, err := openMailbox(env, cfg, name)
		if err != nil {
			if only != "" {
				return nil, err
			}
			continue // a missing mailbox holds nothing; status reports it
		}
		if ingest {
			if err := intake.Idle(mb, adminOptions(cfg), intakeOptions(cfg), time.Now()); err != nil {
				return nil, err
			}
		}
		entries, err := mb.Locate(ref)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			found = append(found, located{mb, e})
		}
	}
	return found, nil
}

// inState keeps the entries in one of the given states.
func inState(all []located, states ...string) []located {
	var out []located
	for _, l := range all {
		if contains(states, l.e.State) {
			out = append(out, l)
		}
	}
	return out
}

// oneOf picks the single entry a command acts on, or says why it cannot.
func oneOf(ref, what string, matches, all []located) (located, error) {
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		if len(all) > 0 {
			return located{}, fmt.Errorf("%s is not %s: it is %s (%s)", ref, what, all[0].e.State, all[0])
		}
		return located{}, withHint(fmt.Errorf("no message %s in any mailbox", ref),
			"list messages with 'agentctl inbox NAME --state all'; a dead letter that could not be read goes by its file name")
	}
	var where []string
	for _, m := range matches {
		where = append(where, m.String())
	}
	return located{}, withHint(fmt.Errorf("%s names %d messages: %s", ref, len(matches), strings.Join(where, ", ")),
		"narrow it with --agent NAME, or name a dead letter by its file name")
}
