package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

const approveUsage = `
Usage: agentctl approve ID [--as NAME]

Applies the effect that approval request ID holds: what an agent's reply
asked for and a guardrail (guardrails: in agentctl.yaml, level confirm)
held for a person. The held messages are sent, or the held board change is
made, exactly as the reply asked, once; the request is archived with the
outcome "approved", and the audit log (audit/YYYY-MM-DD.jsonl) says so.

Requests wait in the person's mailbox (human's, or NAME's with --as) as
messages of type approval; their text says what approving does. A request
is settled once: approving it again, or approving a denied one, is refused.

Examples:
  agentctl inbox human
  agentctl approve msg_3f2a9c0d1e4b5a6c7d8e9f01
  agentctl approve --as alice msg_3f2a9c0d1e4b5a6c7d8e9f01
`

func runApprove(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "approve", approveUsage)
	as := fs.String("as", "", "the `person` whose mailbox holds the request (default: the person in the loop)")
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
	done, err := approveRequest(ctx, env, cfg, *as, rest[0])
	if err != nil {
		return err
	}
	for _, r := range done {
		fmt.Fprintln(env.Stdout, r)
	}
	return nil
}

// approveRequest applies the effect request id holds and archives the
// request "approved"; it returns what happened, in words. The audit
// records are written after the archive, so a request approved again
// after a crash (which applies nothing twice) is audited once.
func approveRequest(ctx context.Context, env *Env, cfg config.Config, as, id string) ([]string, error) {
	mb, person, e, p, err := pendingApproval(env, cfg, as, id)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	recs, err := agents.ApplyApproved(ctx, env.Root, person, p, now)
	if err != nil {
		return nil, withHint(fmt.Errorf("cannot apply what %s holds: %w", id, err),
			fmt.Sprintf("the request still waits; to refuse it instead: agentctl deny %s --reason ...", id))
	}
	var done []string
	for _, r := range recs {
		done = append(done, "approved: "+r.What)
	}
	receipt := mailbox.Receipt{Outcome: "approved", Data: map[string]any{"by": person, "applied": done}}
	if err := mb.Settle(e, receipt, now); err != nil {
		return done, fmt.Errorf("%s was applied, but the request stays in %s's inbox (approving it again applies nothing twice): %w", id, person, err)
	}
	return done, appendAudit(env, recs...)
}

func appendAudit(env *Env, recs ...audit.Record) error {
	for _, r := range recs {
		if err := audit.Append(env.Root, r); err != nil {
			return err
		}
	}
	return nil
}

// pendingApproval finds approval request id waiting in a person's mailbox
// and the effect it holds, or says why it cannot be settled.
func pendingApproval(env *Env, cfg config.Config, as, id string) (*mailbox.Mailbox, string, mailbox.Entry, agents.Parked, error) {
	var none agents.Parked
	if as == "" {
		as = cfg.Human()
	}
	person, err := resolvePerson(env, cfg, as)
	if err != nil {
		return nil, "", mailbox.Entry{}, none, err
	}
	mb, err := openMailbox(env, cfg, person)
	if err != nil {
		return nil, "", mailbox.Entry{}, none, err
	}
	if err := intake.Idle(mb, adminOptions(cfg), intakeOptions(cfg), time.Now().UTC()); err != nil {
		return nil, "", mailbox.Entry{}, none, err
	}
	found, err := mb.Locate(id)
	if err != nil {
		return nil, "", mailbox.Entry{}, none, err
	}
	for _, e := range found {
		if e.State == mailbox.StateDone && e.Receipt != nil && (e.Receipt.Outcome == "approved" || e.Receipt.Outcome == "denied") {
			return nil, "", mailbox.Entry{}, none, withHint(fmt.Errorf("%s was %s already (%s); a request is settled once", id, e.Receipt.Outcome, e.Receipt.CompletedAt.Format(time.RFC3339)),
				fmt.Sprintf("the audit log says what became of it: grep %s %s", id, auditGlob(env)))
		}
	}
	e, err := pendingFor(mb, id)
	if err != nil {
		return nil, "", mailbox.Entry{}, none, err
	}
	p, err := agents.ParkedOf(e.Message)
	if err != nil {
		return nil, "", mailbox.Entry{}, none, withHint(err, fmt.Sprintf("to answer it: agentctl reply %s TEXT; to set it aside: agentctl drop %s --reason ...", id, id))
	}
	return mb, person, e, p, nil
}

func auditGlob(env *Env) string {
	return filepath.Join(audit.Dir(env.Root), "*.jsonl")
}
