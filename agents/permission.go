package agents

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

// An acp seat's agent asks before it runs a tool; guardrails.tool_permission
// answers: allow, deny, or confirm, which parks the request in the person's
// mailbox as an approval request while the turn waits for agentctl approve
// or deny.

const guardToolPermission = "tool_permission"

// ToolCall is a tool an agent asked to run during a turn, as a parked
// approval request holds it.
type ToolCall struct {
	Title     string   `json:"title"`
	Kind      string   `json:"kind,omitempty"`
	Input     string   `json:"input,omitempty"`
	Locations []string `json:"locations,omitempty"`
}

func toolWhat(t ToolCall) string {
	s := "run " + quoteTitle(t.Title)
	if t.Kind != "" {
		s += " (" + t.Kind + ")"
	}
	if len(t.Locations) > 0 {
		s += " on " + strings.Join(t.Locations, ", ")
	}
	if t.Input != "" {
		s += ", input " + t.Input
	}
	return s
}

func quoteTitle(s string) string { return fmt.Sprintf("%q", s) }

// judgeTool is the guardrails' verdict on a tool the agent asks to run.
func (g Guardrails) judgeTool(req cursor.PermissionRequest) verdict {
	level := g.ToolPermission
	if level == "" {
		level = GuardAllow
	}
	return verdict{Level: level, Guard: guardToolPermission,
		Reason: fmt.Sprintf("the agent asks to run %s (guardrails.%s: %s)", quoteTitle(req.Title), guardToolPermission, level)}
}

// permissionPoll is how often a waiting turn looks whether its approval
// request was settled.
var permissionPoll = 250 * time.Millisecond

// onPermission is the Turn.OnPermission of a claim: the one place a tool
// permission's verdict takes effect.
func (r *Runner) onPermission(log zerolog.Logger, cl *claim) func(context.Context, cursor.PermissionRequest) (cursor.PermissionVerdict, error) {
	return func(ctx context.Context, req cursor.PermissionRequest) (cursor.PermissionVerdict, error) {
		v := r.s.Guardrails.judgeTool(req)
		tool := ToolCall{Title: req.Title, Kind: req.Kind, Input: req.Input, Locations: req.Locations}
		switch v.Level {
		case GuardAllow:
			return cursor.PermissionVerdict{Allow: true, Reason: v.Reason}, nil
		case GuardDeny:
			r.auditTool(log, cl.Message, tool, audit.Refused, v.Reason)
			return cursor.PermissionVerdict{Reason: "refused: " + v.Reason}, nil
		}
		if r.s.Human == "" {
			why := v.Reason + ", and no person is configured to approve it"
			r.auditTool(log, cl.Message, tool, audit.Refused, why)
			return cursor.PermissionVerdict{Reason: "refused: " + why}, nil
		}
		p := Parked{Agent: r.s.Agent, Message: cl.Message.ID, Item: "tool/" + req.ToolCall, Guard: v.Guard, Reason: v.Reason, Tool: &tool}
		return r.askPerson(ctx, log, cl.Message, p)
	}
}

// askPerson parks p in the person's mailbox and waits until it is
// settled: approved runs the tool, anything else refuses it.
func (r *Runner) askPerson(ctx context.Context, log zerolog.Logger, msg mailbox.Message, p Parked) (cursor.PermissionVerdict, error) {
	if err := ctx.Err(); err != nil {
		// The turn stopped before asking: no request to withdraw after.
		return cursor.PermissionVerdict{}, fmt.Errorf("the turn stopped before it could ask for approval: %w", context.Cause(ctx))
	}
	mb, err := mailbox.Open(r.s.Root, r.s.Human)
	if err != nil {
		return cursor.PermissionVerdict{}, err
	}
	mb.Clock = r.s.Clock
	// The same tool asked for again after its request was withdrawn (the
	// turn that asked stopped, and the prompt was sent again): a new
	// request, the person not having answered the first.
	for n, item := 2, p.Item; withdrawn(mb, ApprovalID(msg.ID, p.Item)); n++ {
		p.Item = fmt.Sprintf("%s#%d", item, n)
	}
	req := approvalRequest(p, msg, r.s.Human, r.now())
	fresh, err := r.deliver(req)
	if err != nil {
		return cursor.PermissionVerdict{}, fmt.Errorf("cannot ask %s for approval: %w", r.s.Human, err)
	}
	log.Info().Str("event", "parked").Str("item", p.Item).Str("guard", p.Guard).Str("request", req.ID).Bool("fresh", fresh).Msg("tool call held for approval; the turn waits")
	r.audit(log, msg, "park/tool/"+p.Item, result{Kind: "parked", ID: req.ID, Detail: p.Reason + "; approval request " + req.ID + " waits in " + r.s.Human + "'s inbox", What: p.What()})
	for {
		if v, settled := settledVerdict(mb, req.ID); settled {
			log.Info().Str("event", "permission").Str("request", req.ID).Bool("allow", v.Allow).Msg(v.Reason)
			return v, nil
		}
		select {
		case <-ctx.Done():
			r.withdraw(log, mb, req.ID, context.Cause(ctx))
			return cursor.PermissionVerdict{}, fmt.Errorf("stopped waiting for approval request %s: %w", req.ID, context.Cause(ctx))
		case <-r.s.Clock.At(r.now().Add(permissionPoll)):
		}
	}
}

// withdraw archives approval request id "withdrawn" when the turn that
// waits for it stops waiting (a skip, a stop, a timeout): approved later,
// it would say a tool runs that nothing waits to run. It holds the
// mailbox's by-hand lock, so that a person's approve or deny of the same
// request comes before it, or finds it settled.
func (r *Runner) withdraw(log zerolog.Logger, mb *mailbox.Mailbox, id string, cause error) {
	ctx, cancel := clock.WithTimeout(context.Background(), r.s.Clock, withdrawWait)
	defer cancel()
	release, err := mb.LockByHand(ctx)
	if err == nil {
		defer release()
		var found []mailbox.Entry
		if found, err = mb.Locate(id); err == nil {
			for _, e := range found {
				if e.State != mailbox.StatePending {
					continue
				}
				var data []byte
				if data, err = receipt.Encode(receipt.Data{By: r.s.Agent, Reason: "the turn that asked stopped waiting: " + cause.Error()}); err == nil {
					err = mb.Settle(e, mailbox.Receipt{Outcome: "withdrawn", Data: data}, r.now().UTC())
				}
			}
		}
	}
	if err != nil {
		log.Warn().Err(err).Str("request", id).Msg("cannot withdraw the approval request nothing waits for; approving it would run nothing")
	}
}

// withdrawWait bounds withdraw's wait for the mailbox's by-hand lock.
const withdrawWait = 10 * time.Second

// withdrawn reports an approval request archived withdrawn.
func withdrawn(mb *mailbox.Mailbox, id string) bool {
	found, _ := mb.Locate(id)
	for _, e := range found {
		if e.State == mailbox.StateDone && e.Receipt != nil && e.Receipt.Outcome == "withdrawn" {
			return true
		}
	}
	return false
}

// settledVerdict reads what became of approval request id, if it was
// settled: approved allows; denied, dropped or answered otherwise refuses.
func settledVerdict(mb *mailbox.Mailbox, id string) (cursor.PermissionVerdict, bool) {
	found, err := mb.Locate(id)
	if err != nil {
		return cursor.PermissionVerdict{}, false
	}
	for _, e := range found {
		if e.State == mailbox.StateDead {
			return cursor.PermissionVerdict{Reason: "the approval request was set aside (" + e.Reason + ")"}, true
		}
		if e.State != mailbox.StateDone || e.Receipt == nil {
			continue
		}
		d, _ := receipt.Read(e.Receipt)
		switch e.Receipt.Outcome {
		case "approved":
			return cursor.PermissionVerdict{Allow: true, Reason: "approved by " + d.By}, true
		case "denied":
			why := "denied by " + d.By
			if d.Reason != "" {
				why += ": " + d.Reason
			}
			return cursor.PermissionVerdict{Reason: why}, true
		default:
			return cursor.PermissionVerdict{Reason: "the approval request was settled " + e.Receipt.Outcome + ", not approved"}, true
		}
	}
	return cursor.PermissionVerdict{}, false
}

// auditTool records a tool call the guardrails refused.
func (r *Runner) auditTool(log zerolog.Logger, msg mailbox.Message, t ToolCall, v, reason string) {
	rec := audit.Record{Time: r.now(), Agent: r.s.Agent, MessageID: msg.ID, Kind: "tool", What: toolWhat(t), Verdict: v, Reason: reason}
	if err := audit.Append(r.s.Root, rec); err != nil {
		log.Warn().Str("event", "audit").Err(err).Msg("the tool call was refused but the audit log could not be written")
	}
}

// onProgress is the Turn.OnProgress of a claim: what the agent does goes
// to the log while the turn lasts, the streaming reply at debug level.
func onProgress(log zerolog.Logger) func(cursor.Progress) {
	return func(p cursor.Progress) {
		ev := log.Info()
		if p.Kind == "message" || p.Kind == "thought" {
			ev = log.Debug()
		}
		ev.Str("event", "progress").Str("kind", p.Kind).Msg(p.Text)
	}
}
