// Package cost owns the cost ledger, runtime/costs/YYYY-MM-DD.jsonl: one
// JSON object per line for every turn whose agent reported what it used
// (tokens, and money where the agent says or the configuration's price
// table knows), and the budgets that park a seat once a day's spending
// reaches them.
//
// Each line is appended with a single O_APPEND write, as the audit log's
// are, so every runner of the swarm appends to the same day's file. A turn
// is written once its reply is in: a crash in between may lose a line,
// never invent one. Days are UTC days.
//
// The package prices and sums; whether a seat may take its next prompt is
// the verdict of Budget.Check, and acting on it (holding the seat, telling
// a person) is the runner's. It never reads or writes anything but the
// costs folder.
package cost

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/jsonl"
	"github.com/agentctl/agentctl/internal/layout"
)

// Where a turn's price came from.
const (
	PricedByAgent = "agent" // the agent reported it (Claude Code's total_cost_usd)
	PricedByTable = "table" // the configuration's price for the model
)

// Turn is one line of the ledger: what one turn used.
type Turn struct {
	Time      time.Time `json:"time"`
	Agent     string    `json:"agent"`
	MessageID string    `json:"message_id,omitempty"`
	Model     string    `json:"model,omitempty"`
	Usage
	CostUSD float64 `json:"cost_usd,omitempty"`
	// PricedBy says where CostUSD came from; empty: the turn has no price
	// (its tokens still count).
	PricedBy string `json:"priced_by,omitempty"`
}

// Usage is what a turn used, as its agent reported it.
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Tokens is every token counted.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Path is the ledger of the day t falls on, in UTC.
func Path(root string, t time.Time) string {
	return filepath.Join(layout.Costs(root), t.UTC().Format(layout.DayFormat)+layout.DaySuffix)
}

// Append adds t to the ledger of its day in one O_APPEND write.
func Append(root string, t Turn) error {
	if t.Time.IsZero() {
		return errors.New("cannot write the cost ledger: the turn has no time")
	}
	t.Time = t.Time.UTC()
	if err := jsonl.Append(Path(root, t.Time), t); err != nil {
		return fmt.Errorf("cannot write the cost ledger: %w", err)
	}
	return nil
}

// Day returns the turns of the day t falls on; a day without a ledger has
// none. A line that is not a turn (cut short by a crash) is skipped.
func Day(root string, t time.Time) ([]Turn, error) {
	out, err := jsonl.Read(Path(root, t), Turn.whole)
	if err != nil {
		return out, fmt.Errorf("cannot read the cost ledger: %w", err)
	}
	return out, nil
}

// whole reports whether a line read back is a turn, not a cut one.
func (t Turn) whole() bool { return !t.Time.IsZero() && t.Agent != "" }

// Totals are what a set of turns used.
type Totals struct {
	Turns int `json:"turns"`
	Usage
	CostUSD float64 `json:"cost_usd"`
	// Unpriced counts turns with tokens but no price: CostUSD is then
	// less than was spent.
	Unpriced int `json:"unpriced,omitempty"`
}

func (s *Totals) add(t Turn) {
	s.Turns++
	s.InputTokens += t.InputTokens
	s.OutputTokens += t.OutputTokens
	s.CacheReadTokens += t.CacheReadTokens
	s.CacheWriteTokens += t.CacheWriteTokens
	s.CostUSD += t.CostUSD
	if t.PricedBy == "" && t.Tokens() > 0 {
		s.Unpriced++
	}
}

// Summary is a day's totals, per agent and for the whole swarm.
type Summary struct {
	Agents map[string]Totals
	Swarm  Totals
}

// Sum adds up turns.
func Sum(turns []Turn) Summary {
	s := Summary{Agents: map[string]Totals{}}
	for _, t := range turns {
		a := s.Agents[t.Agent]
		a.add(t)
		s.Agents[t.Agent] = a
		s.Swarm.add(t)
	}
	return s
}
