package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"agentctl/devlog"
	"agentctl/internal/agentname"
	"agentctl/mailbox"
	"agentctl/projectboard"
)

// outcome is what the effects of one reply did, for the receipt.
type outcome struct {
	Sent   []string // ids of the messages sent
	Board  []string // task ids changed
	Errors []string // effects that could not be applied, and why
	Block  string   // why the agentctl block was refused
	Report *Report
}

func (o outcome) receiptData() map[string]any {
	d := map[string]any{}
	if len(o.Sent) > 0 {
		d["sent"] = o.Sent
	}
	if len(o.Board) > 0 {
		d["board"] = o.Board
	}
	if len(o.Errors) > 0 {
		d["errors"] = o.Errors
	}
	if o.Block != "" {
		d["block_error"] = o.Block
	}
	if o.Report != nil {
		d["report"] = o.Report
	}
	return d
}

// effect is one thing a reply causes. Its key names it in the progress
// record; apply must be safe to run again after a crash between applying
// and recording it (deliveries have derived ids, board changes set values).
type effect struct {
	key   string
	apply func() error
}

// applyEffects plans the effects of a reply and applies those not yet
// recorded, recording each before going on.
func (r *Runner) applyEffects(ctx context.Context, log zerolog.Logger, cl *mailbox.Claim, reply string, p Parsed) (outcome, error) {
	msg := cl.Message
	out := outcome{Block: p.BlockError, Report: p.Report}
	var sends []mailbox.Message
	var changes []BoardChange
	if p.Actions != nil {
		var err error
		sends, changes, err = r.plan(msg, *p.Actions)
		if err != nil {
			out.Block = err.Error()
			sends, changes = nil, nil
		}
	}
	if out.Block != "" {
		log.Warn().Str("event", "block-refused").Str("reason", out.Block).Msg("agentctl block refused; nothing of it applied")
	}
	// The receipt lists everything planned, including what a crashed run
	// already applied.
	for _, m := range sends {
		out.Sent = append(out.Sent, m.ID)
	}
	for _, c := range changes {
		out.Board = append(out.Board, c.ID)
	}
	store := &projectboard.Store{Root: r.s.Root, Now: r.now}
	// Board changes and the devlog entry come before the messages: a
	// message sent starts work elsewhere that may change the same task,
	// and a resumed runner must never replay an older change over it.
	var effects []effect
	boardEffect := func(key string, c BoardChange) effect {
		return effect{key, func() error {
			_, err := store.Update(ctx, c.ID, func(t *projectboard.Task) error {
				if c.Status != nil {
					t.Status = projectboard.Status(*c.Status)
				}
				if c.Owner != nil {
					t.Owner = *c.Owner
				}
				if c.Notes != nil {
					t.Notes = *c.Notes
				}
				return nil
			})
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				// A missing task or a board a human left invalid is the
				// reply's problem or the human's, not a reason to run the
				// turn again: it is reported and the message completes.
				out.Errors = append(out.Errors, fmt.Sprintf("board %s: %v", c.ID, err))
				log.Warn().Str("event", "board").Str("task", c.ID).Err(err).Msg("board change not applied")
				return nil
			}
			log.Info().Str("event", "board").Str("task", c.ID).Msg("board updated")
			return nil
		}}
	}
	for i, c := range changes {
		effects = append(effects, boardEffect(fmt.Sprintf("board/%d", i), c))
	}
	if p.Report.Done() && msg.TaskID != "" && !slices.ContainsFunc(changes, func(c BoardChange) bool { return c.ID == msg.TaskID && c.Status != nil }) {
		done := string(projectboard.Done)
		effects = append(effects, boardEffect("board/report", BoardChange{ID: msg.TaskID, Status: &done}))
	}
	effects = append(effects, effect{"devlog/done", func() error {
		e := devlogEntry(r.s.Agent, msg, r.now(), "done", reply, strings.Join(append(slices.Clone(out.Errors), blockNote(out.Block)...), "\n"))
		e.Note = noteOf(p)
		e.Actions = actionsOf(out, p.Report)
		// Recorded by the loop below, like every effect.
		if cl.Resumed && devlogHas(r.s.Root, e.Agent, e.MessageID, e.Outcome) {
			return nil
		}
		return devlog.Append(r.s.Root, e)
	}})
	for _, m := range sends {
		effects = append(effects, effect{"send/" + m.ID, func() error {
			fresh, err := r.deliver(m)
			if err != nil {
				return err
			}
			log.Info().Str("event", "sent").Str("to", m.To).Str("sent_id", m.ID).Bool("fresh", fresh).Msg("sent")
			return nil
		}})
	}
	if msg.RequiresAck {
		effects = append(effects, effect{"ack", func() error {
			r.notifySettled(msg, "done", r.now())
			return nil
		}})
	}

	done := recordedEffects(cl)
	for _, e := range effects {
		if done[e.key] {
			continue
		}
		if err := e.apply(); err != nil {
			return out, fmt.Errorf("cannot apply %s of %s: %w", e.key, msg.ID, err)
		}
		cl.Progress.Data[dataEffects] = append(effectKeys(cl), e.key)
		if err := r.c.Record(cl, "effects", r.now()); err != nil {
			return out, err
		}
	}
	return out, nil
}

func blockNote(reason string) []string {
	if reason == "" {
		return nil
	}
	return []string{"agentctl block refused, nothing of it applied: " + reason}
}

func noteOf(p Parsed) string {
	var parts []string
	if p.Actions != nil && p.Actions.Devlog != "" {
		parts = append(parts, p.Actions.Devlog)
	}
	if rp := p.Report; rp != nil {
		s := "Task: " + rp.Task
		if rp.CommitMessage != "" {
			s += "\nCommit Message: " + rp.CommitMessage
		}
		parts = append(parts, s+"\nStatus: "+rp.Status)
	}
	return strings.Join(parts, "\n")
}

func actionsOf(o outcome, rp *Report) []string {
	var a []string
	if rp != nil {
		a = append(a, rp.Actions...)
	}
	for _, id := range o.Sent {
		a = append(a, "sent "+id)
	}
	for _, id := range o.Board {
		a = append(a, "updated task "+id)
	}
	return a
}

func effectKeys(cl *mailbox.Claim) []string {
	var keys []string
	switch v := cl.Progress.Data[dataEffects].(type) {
	case []string:
		keys = v
	case []any: // as read back from the progress record
		for _, k := range v {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	return keys
}

func recordedEffects(cl *mailbox.Claim) map[string]bool {
	m := map[string]bool{}
	for _, k := range effectKeys(cl) {
		m[k] = true
	}
	return m
}

// plan checks the whole block before anything of it is applied: every
// recipient must be a configured agent, every status and priority valid.
func (r *Runner) plan(msg mailbox.Message, a Actions) ([]mailbox.Message, []BoardChange, error) {
	var sends []mailbox.Message
	now := r.now().UTC()
	thread := msg.ThreadID
	if thread == "" {
		thread = msg.ID
	}
	for i, s := range a.Send {
		prio := mailbox.Normal
		if s.Priority != "" {
			p, err := mailbox.ParsePriority(s.Priority)
			if err != nil {
				return nil, nil, fmt.Errorf("send[%d]: %w", i, err)
			}
			prio = p
		}
		var to []string
		if strings.EqualFold(s.To, "all") {
			for _, a := range r.s.Agents {
				if a != r.s.Agent {
					to = append(to, a)
				}
			}
		} else {
			name, err := agentname.Resolve(r.s.Agents, s.To)
			if err != nil {
				return nil, nil, fmt.Errorf("send[%d]: %w", i, err)
			}
			to = []string{name}
		}
		typ := s.Type
		if typ == "" {
			typ = "message"
		}
		task := s.TaskID
		if task == "" {
			task = msg.TaskID
		}
		for _, name := range to {
			sends = append(sends, mailbox.Message{
				ID: derivedID(msg.ID, "send", fmt.Sprint(i), name), From: r.s.Agent, To: name,
				Type: typ, Priority: prio, Subject: s.Subject, Body: s.Body, CreatedAt: now,
				ReplyTo: msg.ID, ThreadID: thread, TaskID: task,
			})
		}
	}
	for i, c := range a.Board {
		if c.Status != nil {
			st, err := projectboard.ParseStatus(*c.Status)
			if err != nil {
				return nil, nil, fmt.Errorf("board[%d] (%s): %w", i, c.ID, err)
			}
			v := string(st)
			a.Board[i].Status = &v
		}
		if c.Owner != nil && *c.Owner != "" {
			name, err := agentname.Resolve(r.s.Agents, *c.Owner)
			if err != nil {
				return nil, nil, fmt.Errorf("board[%d] (%s) owner: %w", i, c.ID, err)
			}
			a.Board[i].Owner = &name
		}
	}
	return sends, a.Board, nil
}

// derivedID names a message caused by another one. The same cause always
// gives the same id, so delivering it again after a crash is refused as a
// duplicate instead of sending it twice.
func derivedID(parent string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(parent))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return "msg_" + hex.EncodeToString(h.Sum(nil))[:24]
}

// deliver stores m in its recipient's inbox; fresh is false when an
// earlier run of the same step already delivered it.
func (r *Runner) deliver(m mailbox.Message) (fresh bool, err error) {
	return deliver(r.s.Root, m)
}

func deliver(root string, m mailbox.Message) (fresh bool, err error) {
	mb, err := mailbox.Open(root, m.To)
	if err != nil {
		return false, err
	}
	err = mb.Deliver(m)
	if errors.Is(err, mailbox.ErrDuplicate) {
		return false, nil
	}
	return err == nil, err
}

// notifySettled tells a message's sender how it ended: a receipt when it
// asked for one (requires_ack / --ack), otherwise a notice when it was
// dead-lettered. A sender without a mailbox (a person who has none, a
// Dream.OS script) is only logged. Notices about notices are never sent.
func (r *Runner) notifySettled(msg mailbox.Message, how string, now time.Time) {
	notifySettled(r.s.Root, r.s.Agent, r.log, msg, how, now)
}

func notifySettled(root, agent string, log zerolog.Logger, msg mailbox.Message, how string, now time.Time) {
	typ := strings.ToLower(msg.Type)
	if typ == "receipt" || typ == "notice" || msg.From == "" || strings.EqualFold(msg.From, agent) {
		return
	}
	dead := strings.HasPrefix(how, "dead-lettered")
	if !msg.RequiresAck && !dead {
		return
	}
	if agentname.Valid(msg.From) != nil {
		log.Warn().Str("id", msg.ID).Str("to", msg.From).Msg("sender is not an agent name; no receipt sent")
		return
	}
	kind, nt := "notice", "notice"
	if msg.RequiresAck {
		kind, nt = "receipt", "receipt"
	}
	subject := msg.Subject
	if subject == "" {
		subject = msg.ID
	}
	n := mailbox.Message{
		ID: derivedID(msg.ID, kind), From: agent, To: msg.From, Type: nt, Priority: mailbox.Normal,
		Subject: kind + ": " + subject, CreatedAt: now.UTC(), ReplyTo: msg.ID, ThreadID: msg.ThreadID, TaskID: msg.TaskID,
		Body: fmt.Sprintf("Your message %s to %s was %s.", msg.ID, agent, how),
		Meta: map[string]any{"about": msg.ID, "outcome": how},
	}
	fresh, err := deliver(root, n)
	if err != nil {
		log.Warn().Str("id", msg.ID).Str("to", msg.From).Err(err).Msg(kind + " not delivered")
		return
	}
	log.Info().Str("event", kind).Str("id", msg.ID).Str("to", msg.From).Str("sent_id", n.ID).Bool("fresh", fresh).Msg(kind + " sent")
}

func devlogEntry(agent string, msg mailbox.Message, now time.Time, outcome, reply, errText string) devlog.Entry {
	return devlog.Entry{Time: now, Agent: agent, MessageID: msg.ID, Subject: msg.Subject, From: msg.From,
		Outcome: outcome, Reply: reply, Error: errText}
}

// devlogOnce appends e unless this claim already did. A crash between the
// append and its record is caught by looking for the entry in the devlog.
func (r *Runner) devlogOnce(cl *mailbox.Claim, e devlog.Entry) error {
	key := "devlog/" + e.Outcome + "/" + fmt.Sprint(cl.Progress.Attempt)
	if recordedEffects(cl)[key] {
		return nil
	}
	if cl.Resumed && e.Outcome != "retry" && devlogHas(r.s.Root, e.Agent, e.MessageID, e.Outcome) {
		return nil
	}
	if err := devlog.Append(r.s.Root, e); err != nil {
		return err
	}
	cl.Progress.Data[dataEffects] = append(effectKeys(cl), key)
	return r.c.Record(cl, "devlog", r.now())
}

func devlogHas(root, agent, id, outcome string) bool {
	entries, err := devlog.ReadAgent(root, agent)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.MessageID == id && e.Outcome == outcome {
			return true
		}
	}
	return false
}
