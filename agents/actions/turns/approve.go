package turns

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Approve applies the effect that approval request id holds, waiting in
// the mailbox of person as (the person in the loop when empty), and
// archives the request "approved". It returns what happened, a sentence
// each. The audit records are written after the archive, so a request
// approved again after a crash (which applies nothing twice) is audited
// once.
func (rt Runtime) Approve(ctx context.Context, as, id string) ([]string, error) {
	mb, person, e, p, release, err := rt.pendingApproval(ctx, as, id)
	if err != nil {
		return nil, err
	}
	defer release()
	clk := clock.Or(rt.Clock)
	recs, err := agents.ApplyApproved(ctx, rt.Root, person, p, clk)
	if err != nil {
		return nil, actions.WithHint(fmt.Errorf("cannot apply what %s holds: %w", id, err),
			fmt.Sprintf("the request still waits; to refuse it instead: agentctl deny %s --reason ...", id))
	}
	var done []string
	for _, r := range recs {
		done = append(done, "approved: "+r.What)
	}
	data, err := receipt.Encode(receipt.Data{By: person, Applied: done})
	if err != nil {
		return done, err
	}
	if err := mb.Settle(e, mailbox.Receipt{Outcome: "approved", Data: data}, clk.Now().UTC()); err != nil {
		return done, fmt.Errorf("%s was applied, but the request stays in %s's inbox (approving it again applies nothing twice): %w", id, person, err)
	}
	return done, rt.appendAudit(recs...)
}

// Deny archives approval request id "denied" and tells the asking agent,
// whose notice it returns; the audit record is written after the archive,
// as for approvals.
func (rt Runtime) Deny(ctx context.Context, as, id, reason string) (mailbox.Message, error) {
	mb, person, e, p, release, err := rt.pendingApproval(ctx, as, id)
	if err != nil {
		return mailbox.Message{}, err
	}
	defer release()
	now := clock.Or(rt.Clock).Now().UTC()
	notice, rec, err := agents.Deny(rt.Root, e.Message, p, person, reason, now)
	if err != nil {
		return notice, fmt.Errorf("cannot deny %s: %w", id, err)
	}
	data, err := receipt.Encode(receipt.Data{By: person, Reason: reason, Notice: notice.ID})
	if err != nil {
		return notice, err
	}
	if err := mb.Settle(e, mailbox.Receipt{Outcome: "denied", Data: data}, now); err != nil {
		return notice, fmt.Errorf("%s was told of the denial, but the request stays in %s's inbox (denying it again tells nobody twice): %w", p.Agent, person, err)
	}
	return notice, rt.appendAudit(rec)
}

func (rt Runtime) appendAudit(recs ...audit.Record) error {
	for _, r := range recs {
		if err := audit.Append(rt.Root, r); err != nil {
			return err
		}
	}
	return nil
}

// pendingApproval finds approval request id waiting in a person's mailbox
// and the effect it holds, or says why it cannot be settled. It holds the
// mailbox's by-hand lock from before it looks until release is called, so
// that what it found still holds when the caller settles the request.
func (rt Runtime) pendingApproval(ctx context.Context, as, id string) (mb *mailbox.Mailbox, person string, e mailbox.Entry, p agents.Parked, release func(), err error) {
	if as == "" {
		as = rt.Config.Human()
	}
	if person, err = rt.ResolvePerson(as); err != nil {
		return nil, "", e, p, nil, err
	}
	if mb, err = rt.OpenMailbox(person); err != nil {
		return nil, "", e, p, nil, err
	}
	unlock, err := mb.LockByHand(ctx)
	if err != nil {
		return nil, "", e, p, nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	if err := intake.Idle(mb, actions.AdminOptions(rt.Config), actions.IntakeOptions(rt.Config), clock.Or(rt.Clock).Now().UTC()); err != nil {
		return nil, "", e, p, nil, err
	}
	found, err := mb.Locate(id)
	if err != nil {
		return nil, "", e, p, nil, err
	}
	for _, f := range found {
		if f.State == mailbox.StateDone && f.Receipt != nil && (f.Receipt.Outcome == "approved" || f.Receipt.Outcome == "denied") {
			return nil, "", e, p, nil, actions.WithHint(fmt.Errorf("%s was %s already (%s); a request is settled once", id, f.Receipt.Outcome, f.Receipt.CompletedAt.Format(time.RFC3339)),
				fmt.Sprintf("the audit log says what became of it: grep %s %s", id, filepath.Join(audit.Dir(rt.Root), "*"+layout.DaySuffix)))
		}
	}
	if e, err = actions.PendingFor(mb, id); err != nil {
		return nil, "", e, p, nil, err
	}
	if p, err = agents.ParkedOf(e.Message); err != nil {
		return nil, "", e, p, nil, actions.WithHint(err, fmt.Sprintf("to answer it: agentctl reply %s TEXT; to set it aside: agentctl drop %s --reason ...", id, id))
	}
	return mb, person, e, p, unlock, nil
}
