package agents

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

// budget holds the seat back once its day's budget, or the swarm's, is
// spent: nothing is claimed, status.json says "budget-spent", and the
// person is told once a day. It asks the ledger before every prompt, which
// costs only the lines other runners appended since (cost.Tally).
type budget struct {
	limit cost.Budget
	tally *cost.Tally
	told  string // the day a person was last told
}

func newBudget(root string, limit cost.Budget) *budget {
	return &budget{limit: limit, tally: cost.NewTally(root)}
}

// holdForBudget returns when the seat may take a prompt again, or the zero
// time when it may now.
func (r *Runner) holdForBudget(now time.Time) (time.Time, error) {
	b := r.budget
	if !b.limit.Set() {
		return time.Time{}, nil
	}
	day, err := b.tally.Today(now)
	if err != nil {
		// An unreadable ledger must not stop the swarm's work; it is said.
		r.log.Warn().Err(err).Msg("cannot check the budget")
		return time.Time{}, nil
	}
	v := b.limit.Check(r.s.Agent, day, now)
	if !v.Spent {
		return time.Time{}, nil
	}
	if r.hb.state() != "budget-spent" {
		r.log.Warn().Str("event", "budget-spent").Time("until", v.Until).Int("pending", r.c.Pending()).Msg(v.Reason + "; messages wait")
	}
	if d := now.UTC().Format(layout.DayFormat); b.told != d {
		b.told = d
		r.tellBudgetSpent(v, d)
	}
	return v.Until, r.hb.set("budget-spent", "", "")
}

// tellBudgetSpent puts one notice a day in the person's mailbox; its id
// comes from the agent and the day, so a restarted runner's second notice
// is refused as a duplicate.
func (r *Runner) tellBudgetSpent(v cost.Verdict, day string) {
	if r.s.Human == "" {
		return
	}
	n := mailbox.Message{
		ID: derivedID("budget", r.s.Agent, day), From: "agentctl", To: r.s.Human, Type: "recovery", Priority: mailbox.High,
		Subject: fmt.Sprintf("%s is parked: its budget is spent", r.s.Agent),
		Body: fmt.Sprintf("%s. %s takes no prompt until %s (the next UTC day); its %d pending messages wait in its inbox, none is lost.\n\n"+
			"To go on today, raise costs.budget in agentctl.yaml and restart the runner (agentctl run %s). agentctl status shows what each agent spent.",
			v.Reason, r.s.Agent, v.Until.Format(time.RFC3339), r.c.Pending(), r.s.Agent),
		CreatedAt: r.now().UTC(),
		Meta:      map[string]any{"agent": r.s.Agent, "day": day},
	}
	if _, err := deliver(r.s.Root, n); err != nil {
		r.log.Warn().Err(err).Str("to", r.s.Human).Msg("cannot tell the person that the budget is spent")
	}
}

// recordUsage writes what a turn used to the cost ledger, priced by the
// agent's own figure or else the price table. A ledger that cannot be
// written is logged: the turn's work stands, and status then shows less
// than was spent.
func (r *Runner) recordUsage(log zerolog.Logger, msgID string, u cursor.Usage) {
	model := u.Model
	if model == "" {
		model = r.s.Model
	}
	t := cost.Turn{Time: r.now().UTC(), Agent: r.s.Agent, MessageID: msgID, Model: model, Usage: cost.Usage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
	}}
	t = r.s.Prices.Priced(t, u.CostUSD)
	if err := cost.Append(r.s.Root, t); err != nil {
		log.Warn().Err(err).Msg("cannot record what the turn cost")
		return
	}
	log.Info().Str("event", "usage").Int64("tokens", t.Tokens()).Float64("cost_usd", t.CostUSD).Str("priced_by", t.PricedBy).Msg("turn usage")
}
