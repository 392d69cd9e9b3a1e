package cost

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var day = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// Turns appended at once by many runners' processes are each one whole
// line, none lost, and sum to what was spent.
func TestConcurrentRunnersAppendWholeTurns(t *testing.T) {
	if os.Getenv("COST_CHILD") != "" {
		n, _ := strconv.Atoi(os.Getenv("COST_CHILD"))
		for i := range 100 {
			turn := Turn{Time: day, Agent: fmt.Sprintf("Agent-%d", n), MessageID: fmt.Sprintf("m%d", i),
				Model: "m", Usage: Usage{InputTokens: 1000, OutputTokens: 10}, CostUSD: 0.01, PricedBy: PricedByAgent}
			if err := Append(os.Getenv("COST_ROOT"), turn); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	root := t.TempDir()
	var wg sync.WaitGroup
	for n := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentRunnersAppendWholeTurns$")
			cmd.Env = append(os.Environ(), "COST_CHILD="+strconv.Itoa(n), "COST_ROOT="+root)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child %d: %v\n%s", n, err, out)
			}
		}()
	}
	wg.Wait()
	turns, err := Day(root, day.Add(13*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s := Sum(turns)
	if s.Swarm.Turns != 400 || s.Agents["Agent-2"].Turns != 100 || s.Swarm.InputTokens != 400_000 {
		t.Fatalf("summed %d turns (%d of Agent-2, %d input tokens), want 400, 100, 400000", s.Swarm.Turns, s.Agents["Agent-2"].Turns, s.Swarm.InputTokens)
	}
	if math.Abs(s.Swarm.CostUSD-4) > 1e-9 {
		t.Errorf("the swarm spent $%f, want $4", s.Swarm.CostUSD)
	}
}

// A line cut short by a crash is skipped; the day's other turns count.
func TestACutLineIsSkipped(t *testing.T) {
	root := t.TempDir()
	if err := Append(root, Turn{Time: day, Agent: "Agent-1", CostUSD: 0.5, PricedBy: PricedByAgent}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(Path(root, day), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-26T10:00:00Z","agent":"Age`)
	f.Close()
	turns, err := Day(root, day)
	if err != nil || len(turns) != 1 {
		t.Fatalf("Day = %v, %v; want the one whole turn", turns, err)
	}
	if turns, err := Day(root, day.Add(24*time.Hour)); err != nil || len(turns) != 0 {
		t.Errorf("a day without a ledger gave %v, %v", turns, err)
	}
	if err := Append(root, Turn{Agent: "Agent-1"}); err == nil || !strings.Contains(err.Error(), "no time") {
		t.Errorf("a turn without a time: %v", err)
	}
}

// The agent's own figure wins; the table prices the rest by model; a
// model the table does not know stays unpriced and is counted as such.
func TestPricing(t *testing.T) {
	table := Prices{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	u := Usage{InputTokens: 2_000_000, OutputTokens: 100_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 0}
	byTable := table.Priced(Turn{Model: "claude-sonnet-4-5", Usage: u}, 0)
	if want := 6 + 1.5 + 0.3; math.Abs(byTable.CostUSD-want) > 1e-9 || byTable.PricedBy != PricedByTable {
		t.Errorf("priced by the table: $%f by %q, want $%f by table", byTable.CostUSD, byTable.PricedBy, want)
	}
	byAgent := table.Priced(Turn{Model: "claude-sonnet-4-5", Usage: u}, 0.42)
	if byAgent.CostUSD != 0.42 || byAgent.PricedBy != PricedByAgent {
		t.Errorf("the agent's figure: $%f by %q, want $0.42 by agent", byAgent.CostUSD, byAgent.PricedBy)
	}
	unknown := table.Priced(Turn{Agent: "Agent-1", Model: "gpt-9", Usage: u}, 0)
	if unknown.CostUSD != 0 || unknown.PricedBy != "" {
		t.Errorf("an unknown model got $%f by %q", unknown.CostUSD, unknown.PricedBy)
	}
	if s := Sum([]Turn{unknown, byAgent}); s.Swarm.Unpriced != 1 {
		t.Errorf("unpriced turns counted %d, want 1", s.Swarm.Unpriced)
	}
}

// A seat waits once its own budget or the swarm's is spent, until the next
// UTC day; an agent's own budget replaces the default.
func TestBudgetVerdict(t *testing.T) {
	now := time.Date(2026, 11, 26, 23, 59, 0, 0, time.FixedZone("x", 5*3600))
	s := Sum([]Turn{
		{Agent: "Agent-1", CostUSD: 5}, {Agent: "Agent-2", CostUSD: 2}, {Agent: "Agent-3", CostUSD: 1},
	})
	b := Budget{AgentDayUSD: 5, PerAgent: map[string]float64{"Agent-1": 10}, SwarmDayUSD: 9}
	if v := b.Check("Agent-1", s, now); v.Spent {
		t.Errorf("Agent-1 has its own $10 budget, but: %s", v.Reason)
	}
	b.AgentDayUSD = 2
	v := b.Check("Agent-2", s, now)
	if !v.Spent || !strings.Contains(v.Reason, "Agent-2 spent $2.00 of its $2.00 budget") {
		t.Errorf("Agent-2 at its budget: %+v", v)
	}
	if want := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC); !v.Until.Equal(want) {
		t.Errorf("waits until %v, want the next UTC day %v", v.Until, want)
	}
	b.SwarmDayUSD = 8
	if v := b.Check("Agent-3", s, now); !v.Spent || !strings.Contains(v.Reason, "the swarm spent $8.00 of its $8.00") {
		t.Errorf("the swarm at its budget: %+v", v)
	}
	if (Budget{}).Set() || (Budget{}).Check("Agent-1", s, now).Spent {
		t.Error("no budget limits something")
	}
}

// The tally reads only what was appended since it last looked, leaves a
// line still being written for later, and starts afresh with the day.
func TestTallyReadsOnlyWhatIsNew(t *testing.T) {
	root := t.TempDir()
	tally := NewTally(root)
	if s, err := tally.Today(day); err != nil || s.Swarm.Turns != 0 {
		t.Fatalf("an empty ledger: %+v, %v", s, err)
	}
	for range 3 {
		if err := Append(root, Turn{Time: day, Agent: "Agent-1", CostUSD: 1, PricedBy: PricedByAgent}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(Path(root, day), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"time":"2026-11-26T10:00:00Z","agent":"Agent-2","cost_usd":`)
	if s, _ := tally.Today(day); s.Swarm.Turns != 3 || s.Agents["Agent-1"].CostUSD != 3 {
		t.Fatalf("after three turns and a half-written one: %+v", s.Swarm)
	}
	f.WriteString("2,\"priced_by\":\"agent\"}\n")
	if s, _ := tally.Today(day); s.Swarm.Turns != 4 || s.Agents["Agent-2"].CostUSD != 2 {
		t.Fatalf("once the line was finished: %+v", s.Swarm)
	}
	if s, _ := tally.Today(day.Add(24 * time.Hour)); s.Swarm.Turns != 0 {
		t.Errorf("the next day starts with %d turns", s.Swarm.Turns)
	}
}
