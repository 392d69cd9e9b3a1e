package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

const denyUsage = `
Usage: agentctl deny ID [--reason TEXT] [--as NAME]

Refuses the effect that approval request ID holds (see 'agentctl approve'):
nothing of it happens. The request is archived with the outcome "denied",
the agent whose reply asked for it gets a notice saying what was denied and
why, and the audit log (audit/YYYY-MM-DD.jsonl) says so. A request is
settled once: denying it again, or denying an approved one, is refused.

Examples:
  agentctl deny msg_3f2a9c0d1e4b5a6c7d8e9f01 --reason "Agent-2 owns that task; ask it."
  agentctl deny --as alice msg_3f2a9c0d1e4b5a6c7d8e9f01
`

func runDeny(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "deny", denyUsage)
	as := fs.String("as", "", "the `person` whose mailbox holds the request (default: the person in the loop)")
	reason := fs.String("reason", "", "why, for the asking agent and the audit log (`text`)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, 1, "the approval request's ID"); err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	notice, err := denyRequest(env, cfg, *as, rest[0], *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "denied %s; %s told (%s)\n", rest[0], notice.To, notice.ID)
	return nil
}

// denyRequest archives request id "denied" and tells the asking agent;
// the audit record is written after the archive, as for approvals.
func denyRequest(env *Env, cfg config.Config, as, id, reason string) (mailbox.Message, error) {
	mb, person, e, p, err := pendingApproval(env, cfg, as, id)
	if err != nil {
		return mailbox.Message{}, err
	}
	now := time.Now().UTC()
	notice, rec, err := agents.Deny(env.Root, e.Message, p, person, reason, now)
	if err != nil {
		return notice, fmt.Errorf("cannot deny %s: %w", id, err)
	}
	receipt := mailbox.Receipt{Outcome: "denied", Data: map[string]any{"by": person, "reason": reason, "notice": notice.ID}}
	if err := mb.Settle(e, receipt, now); err != nil {
		return notice, fmt.Errorf("%s was told of the denial, but the request stays in %s's inbox (denying it again tells nobody twice): %w", p.Agent, person, err)
	}
	return notice, appendAudit(env, rec)
}
