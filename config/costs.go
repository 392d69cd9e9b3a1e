package config

import (
	"fmt"
	"math"
)

// Costs are model prices and the daily budgets that park seats once spent.
//
//	costs:
//	  prices:                        # US dollars per million tokens
//	    claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
//	  budget:
//	    agent_day_usd: 5             # each agent, per UTC day
//	    swarm_day_usd: 40            # all agents together
//	    per_agent: {Agent-1: 10}     # an agent's own, instead of agent_day_usd
type Costs struct {
	Prices map[string]ModelPrice `yaml:"prices,omitempty"`
	Budget Budget                `yaml:"budget,omitempty"`
}

// ModelPrice is a model's price in US dollars per million tokens.
type ModelPrice struct {
	Input      float64 `yaml:"input"`
	Output     float64 `yaml:"output"`
	CacheRead  float64 `yaml:"cache_read,omitempty"`
	CacheWrite float64 `yaml:"cache_write,omitempty"`
}

// Budget bounds a UTC day's spending; zero is no limit.
type Budget struct {
	AgentDayUSD float64            `yaml:"agent_day_usd,omitempty"`
	SwarmDayUSD float64            `yaml:"swarm_day_usd,omitempty"`
	PerAgent    map[string]float64 `yaml:"per_agent,omitempty"`
}

func (c Config) validateCosts() error {
	amount := func(name string, v float64) error {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("costs.%s: must be an amount of US dollars, 0 or more", name)
		}
		return nil
	}
	for model, p := range c.Costs.Prices {
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if err := amount("prices."+model+"."+f.name, f.v); err != nil {
				return err
			}
		}
	}
	b := c.Costs.Budget
	if err := amount("budget.agent_day_usd", b.AgentDayUSD); err != nil {
		return err
	}
	if err := amount("budget.swarm_day_usd", b.SwarmDayUSD); err != nil {
		return err
	}
	for agent, v := range b.PerAgent {
		if _, err := c.Agent(agent); err != nil {
			return fmt.Errorf("costs.budget.per_agent: %q is not a configured agent", agent)
		}
		if err := amount("budget.per_agent."+agent, v); err != nil {
			return err
		}
	}
	return nil
}
