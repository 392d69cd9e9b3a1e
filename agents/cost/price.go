package cost

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Prices maps a model's id to its price.
type Prices map[string]Price

// Priced returns t with its price: the agent's own figure when it gave
// one (agentUSD > 0), else the table's for its model, else none.
func (p Prices) Priced(t Turn, agentUSD float64) Turn {
	switch price, ok := p[t.Model]; {
	case agentUSD > 0:
		t.CostUSD, t.PricedBy = agentUSD, PricedByAgent
	case ok && t.Model != "":
		t.CostUSD = (float64(t.InputTokens)*price.Input + float64(t.OutputTokens)*price.Output +
			float64(t.CacheReadTokens)*price.CacheRead + float64(t.CacheWriteTokens)*price.CacheWrite) / 1e6
		t.PricedBy = PricedByTable
	default:
		t.CostUSD, t.PricedBy = 0, ""
	}
	return t
}
