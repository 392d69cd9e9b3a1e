package agents

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// Guardrails say, per kind of effect, whether a reply's item is applied
// (GuardAllow, also ""), held for a person's approval (GuardConfirm) or
// refused (GuardDeny). The command hands them down from agentctl.yaml.
type Guardrails struct {
	Broadcast     string // a send to "all"
	OthersTask    string // a board change of a task another agent owns
	CloseUnowned  string // marking done a task the agent does not own
	ManySends     string // a reply's sends past its first ManySendsOver
	ManySendsOver int
	// ToolPermission judges a tool an acp seat's agent asks to run while
	// it works (permission.go).
	ToolPermission string
}

// The guardrail levels, strictest last.
const (
	GuardAllow   = "allow"
	GuardConfirm = "confirm"
	GuardDeny    = "deny"
)

// The kinds of effect a guardrail watches.
const (
	guardBroadcast    = "broadcast"
	guardOthersTask   = "others_task"
	guardCloseUnowned = "close_unowned"
	guardManySends    = "many_sends"
)

// proposal is one item of a reply's block as the guardrails see it: a send
// item (Sends > 0) or a board change (Task != "").
type proposal struct {
	Agent string
	// A send item: whether it goes to all, how many messages the reply
	// sends before it, and how many it sends itself.
	Broadcast          bool
	SendsBefore, Sends int
	// A board change: its task, the task's owner before it, and whether it
	// marks the task done. OwnerKnown is false when the boards could not be
	// read; the task is then judged as another's.
	Task       string
	Owner      string
	OwnerKnown bool
	Closes     bool
}

// verdict is what the guardrails say of one proposal: its level, the
// guardrail that set it, and why.
type verdict struct {
	Level  string
	Guard  string
	Reason string
}

func levelRank(l string) int {
	switch l {
	case GuardConfirm:
		return 1
	case GuardDeny:
		return 2
	}
	return 0
}

// judge is the guardrails' verdict on one proposal. Every guardrail that
// applies is weighed and the strictest wins, so a change that both closes
// and touches another agent's task meets the stricter of the two levels.
func (g Guardrails) judge(p proposal) verdict {
	v := verdict{Level: GuardAllow}
	weigh := func(level, guard, reason string) {
		if levelRank(level) > levelRank(v.Level) {
			v = verdict{Level: level, Guard: guard, Reason: reason + " (guardrails." + guard + ": " + level + ")"}
		}
	}
	if p.Sends > 0 {
		if p.Broadcast {
			weigh(g.Broadcast, guardBroadcast, fmt.Sprintf("a send to all (%d agents)", p.Sends))
		}
		if g.ManySendsOver > 0 && p.SendsBefore+p.Sends > g.ManySendsOver {
			weigh(g.ManySends, guardManySends, fmt.Sprintf("the reply's messages %d to %d, past the first %d", p.SendsBefore+1, p.SendsBefore+p.Sends, g.ManySendsOver))
		}
	}
	if p.Task != "" {
		whose := "owned by " + p.Owner
		switch {
		case !p.OwnerKnown:
			whose = "whose owner cannot be read now"
		case p.Owner == "":
			whose = "owned by nobody"
		}
		theirs := !p.OwnerKnown || !strings.EqualFold(p.Owner, p.Agent)
		if theirs && (!p.OwnerKnown || p.Owner != "") {
			weigh(g.OthersTask, guardOthersTask, fmt.Sprintf("a change of task %s, %s", p.Task, whose))
		}
		if theirs && p.Closes {
			weigh(g.CloseUnowned, guardCloseUnowned, fmt.Sprintf("marking done task %s, %s", p.Task, whose))
		}
	}
	return v
}

// owners are the tasks' owners as the guardrails saw them when the reply
// was first planned, kept in the claim's progress record so that a resumed
// runner judges the reply as the first one did, whatever changed since.
// ownerUnread marks a task whose boards could not be read; a task on none
// of the boards has no entry (its change is refused when applied).
type owners map[string]string

const ownerUnread = "?unread"

// readOwners reads the owners of the tasks a block changes from the boards.
func readOwners(store *projectboard.Store, tasks []string) owners {
	o := owners{}
	for _, id := range tasks {
		if _, seen := o[id]; seen {
			continue
		}
		t, err := store.Find(id)
		switch {
		case err == nil:
			o[id] = t.Owner
		case !projectboard.Refused(err):
			o[id] = ownerUnread
		}
	}
	return o
}

// boardProposal is a board change as the guardrails see it.
func boardProposal(agent string, c BoardChange, o owners) (proposal, bool) {
	owner, known := o[c.ID]
	if !known {
		return proposal{}, false // on none of the boards: nothing to guard
	}
	return proposal{Agent: agent, Task: c.ID, Owner: owner, OwnerKnown: owner != ownerUnread,
		Closes: c.Status != nil && *c.Status == string(projectboard.Done)}, true
}

// guard acts on a verdict for one item of a reply: the one place where a
// guardrail's level takes effect. It reports whether the item applies now;
// otherwise it is refused with the reason, or parked for the person in
// the loop (refused when there is nobody to ask).
func (r *Runner) guard(pl *plan, msg mailbox.Message, v verdict, item string, p Parked) (apply bool) {
	switch v.Level {
	case GuardDeny:
		pl.refused = append(pl.refused, item+": refused: "+v.Reason)
	case GuardConfirm:
		if r.s.Human == "" {
			pl.refused = append(pl.refused, item+": needs a person's approval, "+v.Reason+", and no person is configured")
			return false
		}
		p.Agent, p.Message, p.Item, p.Guard, p.Reason = r.s.Agent, msg.ID, item, v.Guard, v.Reason
		pl.parked = append(pl.parked, p)
	default:
		return true
	}
	return false
}

// guardBoard judges a board change and acts on the verdict.
func (r *Runner) guardBoard(pl *plan, msg mailbox.Message, item, key string, c BoardChange, o owners) bool {
	pr, guarded := boardProposal(r.author(msg), c, o)
	if !guarded {
		return true
	}
	ch := r.boardChange(msg, key, c)
	return r.guard(pl, msg, r.s.Guardrails.judge(pr), item, Parked{Board: &ch})
}

// taskOwners are the owners of the tasks a reply changes: as recorded by
// the first plan of this claim, or read from the boards now and recorded
// before any effect applies.
func (r *Runner) taskOwners(cl *claim, store *projectboard.Store, p Parsed) (owners, error) {
	if cl.turn.Owners != nil {
		return cl.turn.Owners, nil
	}
	var tasks []string
	if p.Actions != nil {
		for _, c := range p.Actions.Board {
			tasks = append(tasks, c.ID)
		}
	}
	if p.Report.Done() && cl.Message.TaskID != "" {
		tasks = append(tasks, cl.Message.TaskID)
	}
	if len(tasks) == 0 {
		return owners{}, nil
	}
	o := readOwners(store, tasks)
	cl.turn.Owners = o
	if err := r.record(cl, "guardrails", r.now()); err != nil {
		return nil, err
	}
	return o, nil
}

// parkEffects put each parked item in the person's mailbox as an approval
// request.
func (r *Runner) parkEffects(log zerolog.Logger, msg mailbox.Message, parked []Parked) []effect {
	var effects []effect
	for _, p := range parked {
		kind := parkedKind(p)
		key := "park/" + kind + "/" + p.Item
		effects = append(effects, effect{key: key, apply: func() (result, error) {
			req := approvalRequest(p, msg, r.s.Human, r.now())
			fresh, err := r.deliver(req)
			if err != nil {
				return result{}, fmt.Errorf("cannot ask %s for approval: %w", r.s.Human, err)
			}
			log.Info().Str("event", "parked").Str("item", p.Item).Str("guard", p.Guard).Str("request", req.ID).Bool("fresh", fresh).Msg("held for approval")
			return result{Kind: "parked", ID: req.ID, Detail: p.Reason + "; approval request " + req.ID + " waits in " + r.s.Human + "'s inbox", What: p.What()}, nil
		}})
	}
	return effects
}

// audit writes what one effect did to the audit log, after the effect and
// its record: a crash in between loses the line, never invents one. A log
// that cannot be written is reported, not fatal: the effect happened.
func (r *Runner) audit(log zerolog.Logger, msg mailbox.Message, key string, res result) {
	if res.Kind == "refused" {
		for _, why := range strings.Split(res.Detail, "\n") {
			item, _, _ := strings.Cut(why, ":")
			r.audit(log, msg, "item", result{Kind: "failed", Detail: why, What: item})
		}
		return
	}
	verdict := audit.Applied
	reason := ""
	switch res.Kind {
	case "":
		return // recorded by an older runner: nothing to say
	case "failed":
		verdict, reason = audit.Refused, res.Detail
	case "deferred":
		verdict, reason = audit.Deferred, res.Detail
	case "parked":
		verdict, reason = audit.Parked, res.Detail
	}
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "park":
		kind, _, _ = strings.Cut(rest, "/")
	}
	what := res.What
	if what == "" {
		what = strings.TrimSpace(res.Kind + " " + res.ID)
	}
	rec := audit.Record{Time: r.now(), Agent: r.s.Agent, MessageID: msg.ID, Kind: kind, What: what, Verdict: verdict, Reason: reason}
	if err := audit.Append(r.s.Root, rec); err != nil {
		log.Warn().Str("event", "audit").Str("effect", key).Err(err).Msg("the effect happened but the audit log could not be written")
	}
}
