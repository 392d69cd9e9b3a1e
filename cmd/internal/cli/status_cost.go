package cli

import (
	"fmt"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/config"
)

// swarmSpending is the line under the table: the swarm's day and its
// budget; empty when nothing was reported and no budget is set.
func swarmSpending(t cost.Totals, b config.Budget) string {
	if t.Turns == 0 && b.SwarmDayUSD == 0 && b.AgentDayUSD == 0 && len(b.PerAgent) == 0 {
		return ""
	}
	line := fmt.Sprintf("today (UTC): %s, %s tokens, $%.2f", plural(t.Turns, "turn"), cost.Tokens(t.Tokens()), t.CostUSD)
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

// plural counts things: 1 turn, 2 turns.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
