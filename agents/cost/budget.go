package cost

import (
	"fmt"
	"time"
)

// Budget is how much may be spent in a UTC day; zero is no limit.
type Budget struct {
	// AgentDayUSD bounds each agent, unless PerAgent names its own;
	// SwarmDayUSD bounds every agent together.
	AgentDayUSD float64
	SwarmDayUSD float64
	PerAgent    map[string]float64
}

// Verdict says whether a seat may take its next prompt.
type Verdict struct {
	// Spent is true when a budget is used up: the seat waits until Until,
	// the next UTC day.
	Spent  bool
	Until  time.Time
	Reason string
}

// Check decides whether agent may take a prompt at now, given the day's
// summary so far.
func (b Budget) Check(agent string, day Summary, now time.Time) Verdict {
	limit := b.AgentDayUSD
	if own, ok := b.PerAgent[agent]; ok {
		limit = own
	}
	until := NextDay(now)
	if spent := day.Agents[agent].CostUSD; limit > 0 && spent >= limit {
		return Verdict{Spent: true, Until: until,
			Reason: fmt.Sprintf("%s spent $%.2f of its $%.2f budget today (UTC)", agent, spent, limit)}
	}
	if spent := day.Swarm.CostUSD; b.SwarmDayUSD > 0 && spent >= b.SwarmDayUSD {
		return Verdict{Spent: true, Until: until,
			Reason: fmt.Sprintf("the swarm spent $%.2f of its $%.2f budget today (UTC)", spent, b.SwarmDayUSD)}
	}
	return Verdict{}
}

// Set reports whether any budget is set.
func (b Budget) Set() bool {
	if b.AgentDayUSD > 0 || b.SwarmDayUSD > 0 {
		return true
	}
	for _, v := range b.PerAgent {
		if v > 0 {
			return true
		}
	}
	return false
}

// NextDay is the start of the UTC day after now's.
func NextDay(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}
