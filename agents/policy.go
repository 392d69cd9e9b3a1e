package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// Message policies: what a message of a type costs. A turn is a prompt to
// the model; the runner answers some messages itself (status requests,
// pings, board updates, acknowledgements); digest notes wait to be folded
// into the next turn's prompt instead of taking a turn each.
const (
	PolicyTurn   = "turn"
	PolicyRunner = "runner"
	PolicyDigest = "digest"
)

// metaDigestUntil is the meta key of when a waiting note gets a turn of
// its own.
const metaDigestUntil = "digest_until"

// outcomeRunner is the receipt outcome of a message the runner handled
// without a turn.
const outcomeRunner = "handled by the runner"

// policyOf is the policy of msg's type: the configured one, else a turn,
// except receipts, which never cost one.
func (r *Runner) policyOf(msg mailbox.Message) string {
	typ := strings.ToLower(msg.Type)
	if typ == typeBoardTask {
		return PolicyTurn // its take is the runner's; its work is the model's
	}
	if p, ok := r.s.Policy[typ]; ok {
		return p
	}
	if typ == "receipt" {
		return PolicyRunner
	}
	return PolicyTurn
}

// runnerReply is the reply the runner writes itself for a message of the
// runner policy: an answer for a status request or a ping, the message's
// own agentctl block for a board update, an acknowledgement otherwise. It
// goes through the same effects as a model's reply, so whatever it sends
// has an id derived from msg and is sent once.
func (r *Runner) runnerReply(msg mailbox.Message) (string, error) {
	var typ, subject, body string
	switch strings.ToLower(msg.Type) {
	case "status-request", "status_request":
		typ, subject, body = "status-report", "status of "+r.s.Agent, r.statusText()
	case "ping":
		typ, subject, body = "pong", "pong from "+r.s.Agent, fmt.Sprintf("%s's runner is up (pid %d).", r.s.Agent, r.hb.snapshot().PID)
	case "board-update", "board_update":
		return msg.Body, nil
	default:
		return "Acknowledged by the runner, without a turn.", nil
	}
	if msg.From == "" || strings.EqualFold(msg.From, r.s.Agent) {
		return body, nil
	}
	block, err := json.Marshal(Actions{Send: []Send{{To: msg.From, Type: typ, Subject: subject, Body: body}}})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Answered by the runner, without a turn.\n\n%s\n\n```agentctl\n%s\n```\n", body, block), nil
}

// isBoardUpdate reports a message whose own block the runner applies as
// a reply (a board-update of the runner policy).
func (r *Runner) isBoardUpdate(msg mailbox.Message) bool {
	typ := strings.ToLower(msg.Type)
	return (typ == "board-update" || typ == "board_update") && r.policyOf(msg) == PolicyRunner
}

// author is the agent whose reply's changes the guardrails judge: the
// runner's own agent, but for a board-update the agent that sent it, so
// that a change refused to one agent is not passed to another's runner to
// make for it. A board-update from a person or an old script is judged as
// this agent, as before.
func (r *Runner) author(msg mailbox.Message) string {
	if r.isBoardUpdate(msg) {
		if from, err := agentname.Resolve(r.s.Agents, msg.From); err == nil {
			return from
		}
	}
	return r.s.Agent
}

// statusText answers a status request from what status.json holds and
// the agent's tasks on the boards.
func (r *Runner) statusText() string {
	st := r.hb.snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: runner pid %d on %s, up since %s, %d pending.\n", r.s.Agent, st.PID, st.Host,
		st.StartedAt.UTC().Format(time.RFC3339), r.c.Pending())
	var names []string
	for k := range st.Counters {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		if i == 0 {
			b.WriteString("Counters:")
		}
		fmt.Fprintf(&b, " %s %d;", k, st.Counters[k])
	}
	if len(names) > 0 {
		b.WriteString("\n")
	}
	store := projectboard.Store{Root: r.s.Root}
	tasks, err := store.Tasks()
	mine := 0
	for _, t := range tasks {
		if t.Owner == r.s.Agent && t.Status != projectboard.Done {
			if mine == 0 {
				b.WriteString("Tasks:\n")
			}
			mine++
			fmt.Fprintf(&b, "- %s %s: %s\n", t.ID, t.Status, t.Title)
		}
	}
	if mine == 0 {
		b.WriteString("No open tasks on the boards.\n")
	}
	if err != nil {
		fmt.Fprintf(&b, "(some boards could not be read: %v)\n", err)
	}
	return b.String()
}

// postponeNote puts a digest note back in the inbox to wait for a turn to
// carry it, at most DigestWait from when it was first claimed. It reports
// false once the wait is over: the note then takes a turn of its own
// (which carries the other waiting notes too).
func (r *Runner) postponeNote(cl *claim) (bool, error) {
	now := r.now()
	until, ok := digestUntil(cl.Message)
	if !ok {
		until = now.Add(r.s.DigestWait)
		if cl.Message.Meta == nil {
			cl.Message.Meta = map[string]any{}
		}
		cl.Message.Meta[metaDigestUntil] = until.UTC().Format(time.RFC3339Nano)
	}
	if !now.Before(until) {
		return false, nil
	}
	if err := r.c.Postpone(cl.Claim, until); err != nil {
		return false, err
	}
	r.look.postponed = true
	r.hb.count("digest waiting")
	r.log.Info().Str("event", "digest-waiting").Str("id", cl.Message.ID).Time("until", until).Msg("note waits for the next turn to carry it")
	return true, nil
}

func digestUntil(m mailbox.Message) (time.Time, bool) {
	s, _ := m.Meta[metaDigestUntil].(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// maxNotes caps the notes one prompt carries; the rest wait for the next.
const maxNotes = 20

// notesFor picks the digest notes the turn of cl carries. Their ids are
// recorded before the prompt is sent, so that a resumed turn carries the
// same ones and settles exactly those; a turn whose prompt went out with
// none on record carries none. budget is how many bytes the notes may add
// to the prompt.
func (r *Runner) notesFor(cl *claim, budget int) ([]mailbox.Entry, error) {
	if cl.turn.Notes != nil {
		var out []mailbox.Entry
		for _, id := range cl.turn.Notes {
			if e, ok := r.pendingEntry(id); ok {
				out = append(out, e)
			}
		}
		return out, nil
	}
	if promptDelivered(cl.Progress) || !slices.Contains(slices.Collect(maps.Values(r.s.Policy)), PolicyDigest) {
		return nil, nil
	}
	pending, err := r.mb.List(mailbox.StatePending)
	if err != nil {
		return nil, err
	}
	var out []mailbox.Entry
	var ids []string
	for _, e := range pending {
		m := e.Message
		if !strings.HasPrefix(e.File, mailbox.InboxDir+"/") || m.ID == "" || m.ID == cl.Message.ID || r.policyOf(m) != PolicyDigest {
			continue
		}
		size := len(noteText(m))
		if len(out) >= maxNotes || size > budget {
			break
		}
		budget -= size
		out = append(out, e)
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cl.turn.Notes = ids
	return out, r.record(cl, "notes", r.now())
}

// pendingEntry finds a note still waiting in the inbox.
func (r *Runner) pendingEntry(id string) (mailbox.Entry, bool) {
	es, err := r.mb.Locate(id)
	if err != nil {
		return mailbox.Entry{}, false
	}
	for _, e := range es {
		if e.State == mailbox.StatePending && strings.HasPrefix(e.File, mailbox.InboxDir+"/") {
			return e, true
		}
	}
	return mailbox.Entry{}, false
}

func noteText(m mailbox.Message) string {
	subject := ""
	if m.Subject != "" {
		subject = " · " + m.Subject
	}
	return fmt.Sprintf("- %s from %s (%s%s):\n%s\n", m.ID, m.From, m.Type, subject, indent(m.Body))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// notesSection is what a prompt carrying notes ends with, after whatever
// template rendered it, so that no template can leave them out.
func notesSection(notes []mailbox.Entry) string {
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nAlso, %d note(s) came in that need no turn of their own; take them into account:\n", len(notes))
	for _, e := range notes {
		b.WriteString(noteText(e.Message))
	}
	return b.String()
}

// noteEffects archive the notes a turn carried, once its reply is in:
// each with a receipt that names the turn's message.
func (r *Runner) noteEffects(cl *claim) []effect {
	var effects []effect
	for _, id := range cl.turn.Notes {
		effects = append(effects, effect{key: "note/" + id, apply: func() (result, error) {
			e, ok := r.pendingEntry(id)
			if !ok {
				// A person dropped or moved it meanwhile; it was carried
				// all the same.
				return result{Kind: "carried", ID: id, Detail: "no longer pending"}, nil
			}
			data, err := receipt.Encode(receipt.Data{CarriedBy: cl.Message.ID})
			if err != nil {
				return result{}, err
			}
			err = r.mb.Settle(e, mailbox.Receipt{Outcome: "carried by a turn", Data: data}, r.now())
			if errors.Is(err, mailbox.ErrMoved) {
				return result{Kind: "carried", ID: id, Detail: "no longer pending"}, nil
			}
			if err != nil {
				return result{}, fmt.Errorf("cannot archive the note %s: %w", id, err)
			}
			r.hb.count("carried")
			r.notifySettled(e.Message, "carried by the turn of "+cl.Message.ID, r.now())
			return result{Kind: "carried", ID: id}, nil
		}})
	}
	return effects
}
