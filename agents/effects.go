package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// outcome is what the effects of one reply did, for the receipt and the
// devlog. Only what happened is listed as done.
type outcome struct {
	Sent     []string // ids of the messages sent
	Board    []string // task ids changed
	Deferred []string // board changes kept until the boards can take them
	Parked   []string // ids of the approval requests holding effects for a person
	Errors   []string // items refused or effects that failed, and why
	Block    string   // why the agentctl block was refused whole
	Report   *Report
	Carried  []string // ids of the digest notes the turn carried, now archived
	ByRunner bool     // the runner handled the message without a turn
	// Answered is a reply that used the protocol: a block, usable or not,
	// or a report. NoBlock is a reply to a prompt that asked for the block
	// and that has neither: nothing it may have meant was applied.
	Answered bool
	NoBlock  bool
}

// Outcomes of a message whose reply was worked, as its receipt says.
//
// A reply with an effect held for a person's approval, and nothing
// refused, ends "waiting for approval": the message is done, but part of
// what it asked for waits in the person's mailbox (see guardrails.go). A
// reply without the block its prompt asked for ends "done without block":
// the turn happened, but whatever it meant to send or change did not (a
// chat read from its rendering loses the fences; an agent may ignore the
// protocol).
const (
	outcomeDone       = "done"
	outcomeWithErrors = "done with errors"
	outcomeNoBlock    = "done without block"
	outcomeParked     = "waiting for approval"
)

// noBlockReason is why a reply ended "done without block", for its
// receipt and devlog entry.
const noBlockReason = "the prompt asked for an agentctl block at the end of the reply, and the reply has none (nor a Dream.OS report): nothing was sent, changed or noted for it"

func (o outcome) receiptOutcome() string {
	if len(o.Errors) > 0 || len(o.Deferred) > 0 || o.Block != "" {
		return outcomeWithErrors
	}
	if o.NoBlock {
		return outcomeNoBlock
	}
	if len(o.Parked) > 0 {
		return outcomeParked
	}
	if o.ByRunner {
		return outcomeRunner
	}
	return outcomeDone
}

func (o outcome) receiptData() receipt.Data {
	d := receipt.Data{Sent: o.Sent, Board: o.Board, Deferred: o.Deferred, Errors: o.Errors, Parked: o.Parked,
		BlockError: o.Block, Report: (*receipt.Report)(o.Report), Carried: o.Carried}
	if o.NoBlock {
		d.NoBlock = noBlockReason
	}
	if o.ByRunner {
		d.Turn = receipt.NoTurn()
	}
	return d
}

// effect is one thing a reply causes. Its key names it in the progress
// record, with what it did; apply must be safe to run again after a crash
// between applying and recording it (deliveries have derived ids, board
// changes are kept under their key, the devlog entry is looked for).
//
// Being safe to run again, most effects share one synced record: the
// receipt's, which comes next (Runner.complete). A board change is
// recorded before the next effect runs (recordAlone): a message sent
// after it starts work elsewhere that may change the same task, which a
// resumed runner must not replay the older change over.
type effect struct {
	key         string
	apply       func() (result, error)
	recordAlone bool
}

// result is what one effect did, recorded with its key so that a resumed
// runner reports it too.
type result struct {
	Kind   string `json:"kind"` // sent, board, deferred, failed, refused, parked, devlog, ack, carried
	ID     string `json:"id,omitempty"`
	Detail string `json:"detail,omitempty"`
	What   string `json:"what,omitempty"` // the effect in words, for the audit log
}

// applyEffects plans the effects of a reply and applies those not yet
// recorded (applyInOrder says which records it takes).
func (r *Runner) applyEffects(ctx context.Context, log zerolog.Logger, cl *claim, reply string, p Parsed) (outcome, error) {
	store := &projectboard.Store{Root: r.s.Root, Clock: r.s.Clock}
	owners, err := r.taskOwners(cl, store, p)
	if err != nil {
		return outcome{}, err
	}
	pl := r.plan(cl.Message, p, owners)
	if p.BlockError != "" {
		log.Warn().Str("event", "block-refused").Str("reason", p.BlockError).Msg("agentctl block refused; nothing of it applied")
	}
	for _, why := range pl.refused {
		log.Warn().Str("event", "item-refused").Str("reason", why).Msg("an item of the agentctl block was refused; the rest applies")
	}
	results := recordedResults(cl)
	out := func() outcome { return outcomeOf(cl, p, pl, results) }
	err = r.applyInOrder(log, cl, r.effectsOf(ctx, log, cl, store, reply, p, pl, out), results)
	return out(), err
}

// outcomeOf is what the effects applied so far did, in the order they
// were applied.
func outcomeOf(cl *claim, p Parsed, pl plan, results map[string]result) outcome {
	o := outcome{Block: p.BlockError, Report: p.Report, Errors: slices.Clone(pl.refused), ByRunner: cl.turn.ByRunner,
		Answered: p.Answered(), NoBlock: cl.turn.asksBlock() && !p.Answered()}
	for _, key := range cl.turn.Effects {
		switch e := results[key]; e.Kind {
		case "sent":
			o.Sent = append(o.Sent, e.ID)
		case "board":
			o.Board = append(o.Board, e.ID)
		case "deferred":
			o.Deferred = append(o.Deferred, e.ID)
			o.Errors = append(o.Errors, fmt.Sprintf("board %s: not changed yet, kept until the boards can take it: %s", e.ID, e.Detail))
		case "failed":
			o.Errors = append(o.Errors, e.Detail)
		case "parked":
			o.Parked = append(o.Parked, e.ID)
		case "carried":
			o.Carried = append(o.Carried, e.ID)
		}
	}
	return o
}

// effectsOf lists the effects of the plan pl for a reply, in the order
// they must happen. Refusals are audited first; board changes and the
// devlog entry come before the messages: a message sent starts work
// elsewhere that may change the same task, and a resumed runner must
// never replay an older change over it. out is the outcome so far, for
// the effects that tell it.
func (r *Runner) effectsOf(ctx context.Context, log zerolog.Logger, cl *claim, store *projectboard.Store, reply string, p Parsed, pl plan, out func() outcome) []effect {
	msg := cl.Message
	var effects []effect
	if len(pl.refused) > 0 {
		// One effect for all refusals: a reply refused a thousand sends
		// records once, and the audit log gets a line for each.
		effects = append(effects, effect{key: "refused", apply: func() (result, error) {
			return result{Kind: "refused", Detail: strings.Join(pl.refused, "\n")}, nil
		}})
	}
	boardEffect := func(key string, c BoardChange) effect {
		return effect{key: key, recordAlone: true, apply: func() (result, error) {
			ch := r.boardChange(msg, key, c)
			waited, err := store.Apply(ctx, ch)
			switch {
			case err != nil && ctx.Err() != nil:
				return result{}, err
			case err != nil:
				// A task on none of the boards is the reply's mistake: it
				// is reported, and the message completes.
				log.Warn().Str("event", "board").Str("task", c.ID).Err(err).Msg("board change refused")
				return result{Kind: "failed", ID: c.ID, Detail: fmt.Sprintf("board %s: %v", c.ID, err), What: boardWhat(ch)}, nil
			case waited != "":
				log.Warn().Str("event", "board-deferred").Str("task", c.ID).Str("reason", waited).Msg("the boards cannot take the change now; kept until they can")
				return result{Kind: "deferred", ID: c.ID, Detail: waited, What: boardWhat(ch)}, nil
			}
			log.Info().Str("event", "board").Str("task", c.ID).Msg("board updated")
			return result{Kind: "board", ID: c.ID, What: boardWhat(ch)}, nil
		}}
	}
	for _, c := range pl.changes {
		effects = append(effects, boardEffect(fmt.Sprintf("board/%d", c.Index), c))
	}
	if pl.report != nil {
		effects = append(effects, boardEffect(reportEffectKey, *pl.report))
	}
	effects = append(effects, r.parkEffects(log, msg, pl.parked)...)
	if msg.RequiresAck {
		effects = append(effects, effect{key: "ack", apply: func() (result, error) {
			// A receipt that could not be delivered is tried again with the
			// effects, as a send is; one that has nowhere to go is said so,
			// in the devlog entry too, which comes after. The outcome it
			// tells is final by now: what follows (sends, notes carried)
			// adds no error.
			n, err := r.notifySettled(msg, out().receiptOutcome(), r.now())
			switch {
			case err != nil:
				return result{}, err
			case n.none != "":
				return result{Kind: "failed", Detail: n.none, What: "receipt to " + msg.From}, nil
			case n.sent.ID == "":
				return result{Kind: "ack"}, nil // nothing due (a receipt about a receipt)
			}
			return result{Kind: "ack", ID: n.sent.ID, What: "receipt to " + n.sent.To}, nil
		}})
	}
	effects = append(effects, effect{key: "devlog/done", apply: func() (result, error) {
		o := out()
		e := devlogEntry(r.s.Agent, msg, r.now(), o.receiptOutcome(), reply, strings.Join(append(slices.Clone(o.Errors), blockNote(o)...), "\n"))
		if !r.isBoardUpdate(msg) { // another's words, not this agent's note
			e.Note = noteOf(p)
		}
		e.Actions = append(e.Actions, actionsOf(o, pl, p.Report)...)
		if ids := cl.turn.Notes; len(ids) > 0 {
			e.Actions = append(e.Actions, "carried the notes "+strings.Join(ids, ", ")+" in its prompt")
		}
		res := result{Kind: "devlog", What: "devlog entry, outcome " + e.Outcome}
		if cl.Resumed && devlogHas(r.s.Root, e.Agent, e.MessageID, e.Outcome) {
			return res, nil
		}
		return res, devlog.Append(r.s.Root, e)
	}})
	for _, m := range append(slices.Clone(pl.sends), pl.escalations...) {
		effects = append(effects, effect{key: "send/" + m.ID, apply: func() (result, error) {
			fresh, err := r.deliver(m)
			if err != nil {
				return result{}, err
			}
			log.Info().Str("event", "sent").Str("to", m.To).Str("sent_id", m.ID).Bool("fresh", fresh).Msg("sent")
			return result{Kind: "sent", ID: m.ID, What: sendWhat(m)}, nil
		}})
	}
	effects = append(effects, r.noteEffects(cl)...)
	return effects
}

// applyInOrder applies the effects not yet in results, in order, adding
// what each did to results and to the turn's record. Each effect is
// audited once its record is synced: a crash in between loses the line,
// never writes it twice. Those applied after the last record it takes are
// left in cl.unaudited for the receipt's record: one sync here would only
// shorten the time in which a crash makes a resumed runner apply them
// again, which each is safe to.
func (r *Runner) applyInOrder(log zerolog.Logger, cl *claim, effects []effect, results map[string]result) error {
	var unaudited []string
	recordApplied := func() error {
		if len(unaudited) == 0 {
			return nil
		}
		if err := r.record(cl, "effects", r.now()); err != nil {
			return err
		}
		for _, key := range unaudited {
			r.audit(log, cl.Message, key, results[key])
		}
		unaudited = unaudited[:0]
		return nil
	}
	for _, e := range effects {
		if _, done := results[e.key]; done {
			continue
		}
		res, err := e.apply()
		if err != nil {
			if rerr := recordApplied(); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return fmt.Errorf("cannot apply %s of %s: %w", e.key, cl.Message.ID, err)
		}
		results[e.key] = res
		cl.turn.Effects = append(cl.turn.Effects, e.key)
		cl.turn.Results = results
		unaudited = append(unaudited, e.key)
		if e.recordAlone {
			if err := recordApplied(); err != nil {
				return err
			}
		}
	}
	cl.unaudited = unaudited
	return nil
}

// blockNote says what became of the block as a whole: refused, or missing
// where the prompt asked for it.
func blockNote(o outcome) []string {
	switch {
	case o.Block != "":
		return []string{"agentctl block refused, nothing of it applied: " + o.Block}
	case o.NoBlock:
		return []string{noBlockReason}
	}
	return nil
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

// actionsOf lists what the reply did, for the devlog: board changes as
// they went, and the messages it is about to send (sending them comes
// after the devlog entry, and a runner stopped in between sends them when
// it resumes).
func actionsOf(o outcome, pl plan, rp *Report) []string {
	var a []string
	if rp != nil {
		a = append(a, rp.Actions...)
	}
	for _, m := range pl.sends {
		a = append(a, "sent "+m.ID+" to "+m.To)
	}
	for _, m := range pl.escalations {
		a = append(a, "sent "+m.ID+" to "+m.To+" (over the thread's hop budget)")
	}
	// A task changed by several items of one block is told once.
	for _, id := range slices.Compact(slices.Sorted(slices.Values(o.Board))) {
		a = append(a, "updated task "+id)
	}
	for _, id := range o.Deferred {
		a = append(a, "kept the change of task "+id+" until the boards can take it")
	}
	for _, p := range pl.parked {
		a = append(a, "asked for approval to "+strings.ReplaceAll(p.What(), "\n", "; ")+" ("+p.Guard+")")
	}
	return a
}

// recordedResults is what the effects recorded so far did; an effect
// recorded by an older runner without its result counts as done with
// nothing to report.
func recordedResults(cl *claim) map[string]result {
	out := map[string]result{}
	for _, k := range cl.turn.Effects {
		out[k] = result{}
	}
	maps.Copy(out, cl.turn.Results)
	return out
}

// plan is what a reply's block will do, item by item.
type plan struct {
	sends       []mailbox.Message
	escalations []mailbox.Message // sends over the hop budget, to a person instead
	changes     []BoardChange
	report      *BoardChange // the message's task made done by a Dream.OS report
	parked      []Parked     // items a guardrail holds for a person's approval
	refused     []string     // the items that will not happen, and why
}

// reportEffectKey is the effect key of the board change a report asks for.
const reportEffectKey = "board/report"

// plan judges each item of the reply on its own: every recipient must be
// a configured agent or person, every status and priority valid, the
// thread within its hop budget, the reply within its cap on sends, and
// each item within the guardrails, given the tasks' owners o.
func (r *Runner) plan(msg mailbox.Message, p Parsed, o owners) plan {
	var a Actions
	if p.Actions != nil {
		a = *p.Actions
	}
	pl := plan{refused: slices.Clone(a.Refused)}
	if a.Devlog != "" && r.isBoardUpdate(msg) {
		pl.refused = append(pl.refused, "devlog: a board-update carries board changes only")
	}
	now := r.now().UTC()
	thread := msg.Thread()
	hops := Hops(msg) + 1
	planned := 0 // messages sent or parked so far
	for _, s := range a.Send {
		i := s.Index
		if r.isBoardUpdate(msg) {
			// Its sends would go out as this agent's, written by another.
			pl.refused = append(pl.refused, fmt.Sprintf("send[%d]: a board-update carries board changes only", i))
			continue
		}
		prio := mailbox.Normal
		if s.Priority != "" {
			p, err := mailbox.ParsePriority(s.Priority)
			if err != nil {
				pl.refused = append(pl.refused, fmt.Sprintf("send[%d]: %v", i, err))
				continue
			}
			prio = p
		}
		var to []string
		all := strings.EqualFold(s.To, "all")
		if all {
			for _, a := range r.s.Agents {
				if a != r.s.Agent {
					to = append(to, a)
				}
			}
		} else {
			name, err := agentname.Resolve(r.mailboxes(), s.To)
			if err != nil {
				pl.refused = append(pl.refused, fmt.Sprintf("send[%d]: %v", i, err))
				continue
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
		var item []mailbox.Message
		for _, name := range to {
			m := mailbox.Message{
				ID: derivedID(msg.ID, "send", fmt.Sprint(i), name), From: r.s.Agent, To: name,
				Type: typ, Priority: prio, Subject: s.Subject, Body: s.Body, CreatedAt: now,
				ReplyTo: msg.ID, ThreadID: thread, TaskID: task, Meta: map[string]any{metaHops: hops},
			}
			switch {
			case planned+len(item) >= r.s.MaxSendsPerReply:
				pl.refused = append(pl.refused, fmt.Sprintf("send[%d] to %s: over the cap of %d messages per reply (run.max_sends_per_reply)", i, name, r.s.MaxSendsPerReply))
			case hops > r.s.MaxHops && !r.isPerson(name):
				why := fmt.Sprintf("send[%d] to %s: the thread %s has used its budget of %d hops (run.max_hops)", i, name, thread, r.s.MaxHops)
				if r.s.Human == "" {
					pl.refused = append(pl.refused, why+"; no person is configured to decide")
					continue
				}
				pl.refused = append(pl.refused, why+"; sent to "+r.s.Human+" to decide")
				pl.escalations = append(pl.escalations, r.escalation(m, thread))
			default:
				item = append(item, m)
			}
		}
		if len(item) == 0 {
			continue
		}
		v := r.s.Guardrails.judge(proposal{Agent: r.s.Agent, Broadcast: all, SendsBefore: planned, Sends: len(item)})
		if r.guard(&pl, msg, v, fmt.Sprintf("send[%d]", i), Parked{Sends: item}) {
			pl.sends = append(pl.sends, item...)
		}
		if v.Level != GuardDeny {
			planned += len(item)
		}
	}
	var valid []BoardChange // the changes asked for that can be made, guarded or not
	for _, c := range a.Board {
		i := c.Index
		if c.Status != nil {
			st, err := projectboard.ParseStatus(*c.Status)
			if err != nil {
				pl.refused = append(pl.refused, fmt.Sprintf("board[%d] (%s): %v", i, c.ID, err))
				continue
			}
			v := string(st)
			c.Status = &v
		}
		if c.Owner != nil && *c.Owner != "" {
			name, err := agentname.Resolve(r.s.Agents, *c.Owner)
			if err != nil {
				pl.refused = append(pl.refused, fmt.Sprintf("board[%d] (%s) owner: %v", i, c.ID, err))
				continue
			}
			c.Owner = &name
		}
		valid = append(valid, c)
		key := fmt.Sprintf("board/%d", i)
		if r.guardBoard(&pl, msg, fmt.Sprintf("board[%d]", i), key, c, o) {
			pl.changes = append(pl.changes, c)
		}
	}
	if p.Report.Done() && msg.TaskID != "" && !slices.ContainsFunc(valid, func(c BoardChange) bool { return c.ID == msg.TaskID && c.Status != nil }) {
		done := string(projectboard.Done)
		c := BoardChange{ID: msg.TaskID, Status: &done}
		if r.guardBoard(&pl, msg, "report", reportEffectKey, c, o) {
			pl.report = &c
		}
	}
	return pl
}

// boardChange is the change a reply's board item asks of the boards, under
// a key made of the message and the item, so it is kept once.
func (r *Runner) boardChange(msg mailbox.Message, key string, c BoardChange) projectboard.Change {
	ch := projectboard.Change{Task: c.ID, Owner: c.Owner, Notes: c.Notes, Key: msg.ID + "/" + key, By: r.s.Agent, At: r.now().UTC()}
	if c.Status != nil {
		st := projectboard.Status(*c.Status)
		ch.Status = &st
	}
	return ch
}

// metaHops is the meta key that counts how many replies deep a thread is.
const metaHops = "hops"

// Hops is how many replies deep msg is in its thread: 0 for a message a
// person or script sent.
func Hops(msg mailbox.Message) int {
	switch v := msg.Meta[metaHops].(type) {
	case int:
		return v
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// escalation is the message a person gets instead of a send that went over
// the thread's hop budget: what was to be sent, to whom, so they can send it
// on or stop the thread.
func (r *Runner) escalation(m mailbox.Message, thread string) mailbox.Message {
	return mailbox.Message{
		ID: derivedID(m.ID, "escalate"), From: r.s.Agent, To: r.s.Human, Type: "question", Priority: mailbox.High,
		Subject: fmt.Sprintf("thread %s is over its hop budget: %s wants to send to %s", thread, r.s.Agent, m.To),
		Body: fmt.Sprintf("Agents have answered each other %d times in thread %s (run.max_hops is %d), so this was not sent to %s.\n"+
			"To let it through, send it yourself (agentctl send --to %s); to end the thread, do nothing.\n\nSubject: %s\n\n%s",
			Hops(m)-1, thread, r.s.MaxHops, m.To, m.To, m.Subject, m.Body),
		CreatedAt: m.CreatedAt, ReplyTo: m.ReplyTo, ThreadID: thread, TaskID: m.TaskID,
		Meta: map[string]any{"held_to": m.To, "held_id": m.ID, metaHops: Hops(m)},
	}
}

// mailboxes are the names a reply may send to: agents and people.
func (r *Runner) mailboxes() []string { return append(slices.Clone(r.s.Agents), r.s.People...) }

func (r *Runner) isPerson(name string) bool { return slices.Contains(r.s.People, name) }

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
// dead-lettered. A dead-letter notice for a sender without a mailbox (a
// Dream.OS script, a typo) goes to the person in the loop, human, instead;
// with no person, and for receipts, it is only logged. Notices about
// notices are never sent.
//
// It returns what it did: the notice sent, or why none went where one was
// due. Callers that can only log that (a dead letter's notice) leave it:
// it is logged here.
func (r *Runner) notifySettled(msg mailbox.Message, how string, now time.Time) (notified, error) {
	return notifySettled(r.s.Root, r.s.Agent, r.s.Human, r.log, msg, how, now)
}

// notified is what notifySettled did: sent, the notice it delivered, or
// none, why it sent none where one was due.
type notified struct {
	sent mailbox.Message
	none string
}

func notifySettled(root, agent, human string, log zerolog.Logger, msg mailbox.Message, how string, now time.Time) (notified, error) {
	typ := strings.ToLower(msg.Type)
	if typ == "receipt" || typ == "notice" || msg.From == "" || strings.EqualFold(msg.From, agent) {
		return notified{}, nil
	}
	dead := strings.HasPrefix(how, "dead-lettered")
	if !msg.RequiresAck && !dead {
		return notified{}, nil
	}
	to := msg.From
	if !hasMailbox(root, to) {
		if !dead || human == "" {
			what := map[bool]string{true: "notice", false: "receipt"}[dead]
			log.Warn().Str("id", msg.ID).Str("to", msg.From).Msg("the sender has no mailbox; no " + what + " sent")
			return notified{none: fmt.Sprintf("no %s sent: the sender %q has no mailbox", what, msg.From)}, nil
		}
		to = human
	}
	kind, nt := "notice", "notice"
	if msg.RequiresAck {
		kind, nt = "receipt", "receipt"
	}
	subject := msg.Subject
	if subject == "" {
		subject = msg.ID
	}
	body := fmt.Sprintf("Your message %s to %s was %s.", msg.ID, agent, how)
	if to != msg.From {
		body = fmt.Sprintf("The message %s from %q to %s was %s. Its sender has no mailbox, so you are told instead.", msg.ID, msg.From, agent, how)
	}
	n := mailbox.Message{
		ID: derivedID(msg.ID, kind), From: agent, To: to, Type: nt, Priority: mailbox.Normal,
		Subject: kind + ": " + subject, CreatedAt: now.UTC(), ReplyTo: msg.ID, ThreadID: msg.ThreadID, TaskID: msg.TaskID,
		Body: body, Meta: map[string]any{"about": msg.ID, "outcome": how, "sender": msg.From},
	}
	fresh, err := deliver(root, n)
	if err != nil {
		log.Warn().Str("id", msg.ID).Str("to", to).Err(err).Msg(kind + " not delivered")
		return notified{}, fmt.Errorf("cannot deliver the %s to %s: %w", kind, to, err)
	}
	log.Info().Str("event", kind).Str("id", msg.ID).Str("to", to).Str("sent_id", n.ID).Bool("fresh", fresh).Msg(kind + " sent")
	return notified{sent: n}, nil
}

// hasMailbox reports whether name is a valid name with a mailbox here.
func hasMailbox(root, name string) bool {
	_, err := mailbox.Open(root, name)
	return err == nil
}

// devlogEntry is the devlog entry about msg. It notes the fields of an
// old-format message that fell back, so a person sees what was guessed.
func devlogEntry(agent string, msg mailbox.Message, now time.Time, outcome, reply, errText string) devlog.Entry {
	e := devlog.Entry{Time: now, Agent: agent, MessageID: msg.ID, Subject: msg.Subject, From: msg.From,
		Outcome: outcome, Reply: reply, Error: errText}
	for _, f := range mailbox.Fallbacks(msg) {
		e.Actions = append(e.Actions, "read with a fallback: "+f)
	}
	return e
}

// devlogOnce appends e unless this claim already did. A crash between the
// append and its record is caught by looking for the entry in the devlog.
func (r *Runner) devlogOnce(cl *claim, e devlog.Entry) error {
	key := "devlog/" + e.Outcome + "/" + fmt.Sprint(cl.Progress.Attempt)
	if slices.Contains(cl.turn.Effects, key) {
		return nil
	}
	if cl.Resumed && e.Outcome != "retry" && devlogHas(r.s.Root, e.Agent, e.MessageID, e.Outcome) {
		return nil
	}
	if err := devlog.Append(r.s.Root, e); err != nil {
		return err
	}
	cl.turn.Effects = append(cl.turn.Effects, key)
	return r.record(cl, "devlog", r.now())
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
