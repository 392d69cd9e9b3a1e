package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// TypeApproval is the type of the message that asks a person to approve
// an effect a guardrail held (level confirm).
const TypeApproval = "approval"

// metaApproval is the meta key of an approval request that holds its
// parked effect: the request is the one place the effect waits, written
// atomically into the person's mailbox, so it survives any restart.
const metaApproval = "approval"

// Parked is an effect of a reply held for a person's approval: the
// messages a send item would send, or a board change, with who asked for
// it and which guardrail held it.
type Parked struct {
	Agent   string               `json:"agent"`   // whose reply asked for it
	Message string               `json:"message"` // the message that reply answered
	Item    string               `json:"item"`    // the block's item: send[0], board[1], report
	Guard   string               `json:"guard"`   // the guardrail that held it
	Reason  string               `json:"reason"`
	Sends   []mailbox.Message    `json:"sends,omitempty"`
	Board   *projectboard.Change `json:"board,omitempty"`
	// Tool is a tool the agent asked to run during its turn, which waits
	// for the answer (permission.go); approving lets it run, once.
	Tool *ToolCall `json:"tool,omitempty"`
}

// What says in words what the effect does once approved.
func (p Parked) What() string {
	var lines []string
	for _, m := range p.Sends {
		lines = append(lines, sendWhat(m))
	}
	if p.Board != nil {
		lines = append(lines, boardWhat(*p.Board))
	}
	if p.Tool != nil {
		lines = append(lines, toolWhat(*p.Tool))
	}
	return strings.Join(lines, "\n")
}

// summary is What in one line, for a subject.
func (p Parked) summary() string {
	if p.Tool != nil {
		return "run " + quoteTitle(p.Tool.Title)
	}
	if p.Board != nil {
		return boardWhat(*p.Board)
	}
	var to []string
	for _, m := range p.Sends {
		to = append(to, m.To)
	}
	what := "a message"
	if len(p.Sends) > 0 && p.Sends[0].Subject != "" {
		what = fmt.Sprintf("%q", p.Sends[0].Subject)
	}
	return "send " + what + " to " + strings.Join(to, ", ")
}

func sendWhat(m mailbox.Message) string {
	s := fmt.Sprintf("send %s to %s (type %s, priority %s)", m.ID, m.To, m.Type, m.Priority)
	if m.Subject != "" {
		s += fmt.Sprintf(", subject %q", m.Subject)
	}
	return s
}

func boardWhat(c projectboard.Change) string {
	var set []string
	if c.Status != nil {
		set = append(set, "status "+string(*c.Status))
	}
	if c.Owner != nil {
		set = append(set, fmt.Sprintf("owner %q", *c.Owner))
	}
	if c.Notes != nil {
		set = append(set, fmt.Sprintf("notes %q", *c.Notes))
	}
	return fmt.Sprintf("set task %s: %s", c.Task, strings.Join(set, ", "))
}

// approvalRequest is the message that parks p in person's mailbox. Its id
// comes from the message and the item, so parking it again after a crash
// is refused as a duplicate.
func approvalRequest(p Parked, cause mailbox.Message, person string, now time.Time) mailbox.Message {
	id := ApprovalID(cause.ID, p.Item)
	var body strings.Builder
	if p.Tool != nil {
		fmt.Fprintf(&body, "%s, working on %s, asks to run a tool, which needs your approval: %s. Its turn waits for your answer.\n\nApproved, this happens, once:\n", p.Agent, cause.ID, p.Reason)
	} else {
		fmt.Fprintf(&body, "%s's reply to %s asks for %s, which needs your approval: %s.\n\nApproved, this happens, once:\n", p.Agent, cause.ID, p.Item, p.Reason)
	}
	body.WriteString(indent(p.What()) + "\n")
	for _, m := range p.Sends {
		fmt.Fprintf(&body, "\nMessage %s to %s:\n%s\n", m.ID, m.To, indent(m.Body))
	}
	fmt.Fprintf(&body, "\nagentctl approve %s\nagentctl deny %s --reason \"...\"\n", id, id)
	data, _ := json.Marshal(p)
	var generic any
	_ = json.Unmarshal(data, &generic) // meta holds only what encoding/json decodes
	return mailbox.Message{
		ID: id, From: p.Agent, To: person, Type: TypeApproval, Priority: mailbox.High,
		Subject:   fmt.Sprintf("approval: %s wants to %s", p.Agent, p.summary()),
		Body:      body.String(),
		CreatedAt: now.UTC(), ReplyTo: cause.ID, ThreadID: cause.Thread(), TaskID: cause.TaskID,
		Meta: map[string]any{metaApproval: generic},
	}
}

// ApprovalID is the id of the approval request for item of the reply to
// message: one request per item, whatever crashes in between.
func ApprovalID(message, item string) string { return derivedID(message, "approval", item) }

// ParkedOf reads the parked effect an approval request holds. A request
// whose id, sender or effects do not match what a runner parks (a file
// dropped by hand with an "approval" field) is refused: approving applies
// what the request holds, so it must be what a guardrail held.
func ParkedOf(m mailbox.Message) (Parked, error) {
	var p Parked
	raw, ok := m.Meta[metaApproval]
	if !strings.EqualFold(m.Type, TypeApproval) || !ok {
		return p, fmt.Errorf("%s is not an approval request (its type is %q)", m.ID, m.Type)
	}
	data, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(data, &p)
	}
	if err == nil {
		err = p.check(m)
	}
	if err != nil {
		return p, fmt.Errorf("cannot read the effect approval request %s holds: %w", m.ID, err)
	}
	return p, nil
}

// ApplyApproved applies an approved parked effect through the runner's own
// effect code (deliveries with the ids the reply gave them, the board
// change under the key of its item), so approving again after a crash
// sends nothing twice. It returns the audit records of what it did, for
// the caller to append once the request is archived. clk stamps them and
// the board change, and times the change's wait for the boards' lock.
func ApplyApproved(ctx context.Context, root, person string, p Parked, clk clock.Clock) ([]audit.Record, error) {
	clk = clock.Or(clk)
	now := clk.Now().UTC()
	var done []audit.Record
	rec := audit.Record{Time: now, Agent: p.Agent, MessageID: p.Message, Verdict: audit.Approved, Reason: p.Reason, By: person}
	for _, m := range p.Sends {
		if _, err := deliver(root, m); err != nil {
			return done, fmt.Errorf("cannot send %s to %s: %w", m.ID, m.To, err)
		}
		r := rec
		r.Kind, r.What = "send", sendWhat(m)
		done = append(done, r)
	}
	if t := p.Tool; t != nil {
		// The waiting turn lets the tool run when it sees the request
		// archived approved: nothing to do here.
		r := rec
		r.Kind, r.What = "tool", toolWhat(*t)
		done = append(done, r)
	}
	if c := p.Board; c != nil {
		store := &projectboard.Store{Root: root, Clock: clk}
		waited, err := store.Apply(ctx, *c)
		if err != nil {
			return done, fmt.Errorf("cannot change task %s: %w", c.Task, err)
		}
		r := rec
		r.Kind, r.What = "board", boardWhat(*c)
		if waited != "" {
			r.Reason = "approved, and kept until the boards can take it: " + waited
		}
		done = append(done, r)
	}
	return done, nil
}

// Deny tells the asking agent that person denied its parked effect, once
// (the notice's id comes from the request), and returns the notice and
// the audit record to append once the request is archived.
func Deny(root string, request mailbox.Message, p Parked, person, reason string, now time.Time) (mailbox.Message, audit.Record, error) {
	body := fmt.Sprintf("%s denied what your reply to %s asked for (%s):\n%s", person, p.Message, p.Item, indent(p.What()))
	if reason != "" {
		body += "\n\nReason: " + reason
	}
	n := mailbox.Message{
		ID: derivedID(request.ID, "denied"), From: person, To: p.Agent, Type: "notice", Priority: mailbox.Normal,
		Subject: "denied: " + p.summary(), Body: body, CreatedAt: now.UTC(),
		ReplyTo: p.Message, ThreadID: request.ThreadID, TaskID: request.TaskID,
		Meta: map[string]any{"about": request.ID, "outcome": "denied"},
	}
	why := reason
	if why == "" {
		why = "denied by " + person
	}
	rec := audit.Record{Time: now, Agent: p.Agent, MessageID: p.Message, Kind: parkedKind(p), What: p.What(), Verdict: audit.Denied, Reason: why, By: person}
	if p.Tool != nil {
		// The agent's turn waits for the answer and hears it from the
		// archived request: a notice would only be another turn.
		return mailbox.Message{To: p.Agent}, rec, nil
	}
	if _, err := deliver(root, n); err != nil {
		return n, rec, fmt.Errorf("cannot tell %s: %w", p.Agent, err)
	}
	return n, rec, nil
}

func parkedKind(p Parked) string {
	if p.Tool != nil {
		return "tool"
	}
	if p.Board != nil {
		return "board"
	}
	return "send"
}

func (p Parked) check(req mailbox.Message) error {
	if len(p.Sends) == 0 && p.Board == nil && p.Tool == nil {
		return errors.New("it holds no effect")
	}
	if req.ID != ApprovalID(p.Message, p.Item) || !strings.EqualFold(req.From, p.Agent) {
		return fmt.Errorf("it was not made by %s's runner for item %s of its reply to %s", p.Agent, p.Item, p.Message)
	}
	for _, m := range p.Sends {
		if !strings.EqualFold(m.From, p.Agent) {
			return fmt.Errorf("it holds a message from %q, not from %s", m.From, p.Agent)
		}
	}
	if p.Board != nil && !strings.EqualFold(p.Board.By, p.Agent) {
		return fmt.Errorf("it holds a board change by %q, not by %s", p.Board.By, p.Agent)
	}
	return nil
}
