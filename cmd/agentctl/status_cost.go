package main

import (
	"fmt"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/config"
)

// spentCell is an agent's TODAY: dollars where its turns had a price,
// tokens where some had none, so a figure never claims more than is known.
func spentCell(t *cost.Totals) string {
	if t == nil {
		return "-"
	}
	switch {
	case t.Unpriced == 0:
		return fmt.Sprintf("$%.2f", t.CostUSD)
	case t.Unpriced == t.Turns:
		return tokens(t.Tokens()) + " tok"
	default:
		return fmt.Sprintf("$%.2f + %s unpriced", t.CostUSD, plural(t.Unpriced, "turn"))
	}
}

// swarmSpending is the line under the table: the swarm's day and its
// budget; empty when nothing was reported and no budget is set.
func swarmSpending(t cost.Totals, b config.Budget) string {
	if t.Turns == 0 && b.SwarmDayUSD == 0 && b.AgentDayUSD == 0 && len(b.PerAgent) == 0 {
		return ""
	}
	line := fmt.Sprintf("today (UTC): %s, %s tokens, $%.2f", plural(t.Turns, "turn"), tokens(t.Tokens()), t.CostUSD)
	if t.Unpriced > 0 {
		line += fmt.Sprintf(" (%s without a price: add their model to costs.prices)", plural(t.Unpriced, "turn"))
	}
	if b.SwarmDayUSD > 0 {
		line += fmt.Sprintf(" of the swarm's $%.2f budget", b.SwarmDayUSD)
	}
	if b.AgentDayUSD > 0 {
		line += fmt.Sprintf("; $%.2f per agent", b.AgentDayUSD)
	}
	return line
}

// tokens writes a count the way people read it: 950, 12.3k, 4.1M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprint(n)
	}
}

// plural counts things: 1 turn, 2 turns.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
