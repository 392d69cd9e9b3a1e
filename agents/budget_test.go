package agents

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// A seat whose day's budget is spent takes no prompt: its message waits in
// the inbox, status.json says why, the person is told once, and the next
// UTC day the message is worked.
func TestSpentBudgetParksTheSeatUntilTheNextDay(t *testing.T) {
	root := newRuntime(t, demoAgents)
	// The clock starts at the real time: the mailbox's scans judge the
	// age of files by their real modification times.
	clock := clocktest.New(time.Now())
	midnight := cost.NextDay(clock.Now())
	if err := cost.Append(root, cost.Turn{Time: clock.Now(), Agent: "Agent-1", Model: "m", CostUSD: 3, PricedBy: cost.PricedByAgent}); err != nil {
		t.Fatal(err)
	}
	if err := cost.Append(root, cost.Turn{Time: clock.Now(), Agent: "Agent-2", CostUSD: 2.5, PricedBy: cost.PricedByAgent}); err != nil {
		t.Fatal(err)
	}
	var turns atomic.Int32
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		turns.Add(1)
		return "done", nil
	}))
	s.Clock, s.Human = clock, "Agent-2"
	// No rescans: the watcher's wake-up would pass for the loop's on Sleeping.
	s.Watch.RescanInterval = 1000 * time.Hour
	s.Budget = cost.Budget{AgentDayUSD: 3}
	// The clock jumps hours at a time, past any heartbeat: the stall
	// check, not under test here, would take the jump for a hung runner.
	s.Recovery.Cron.Stall = ""
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-3", To: "Agent-1", Body: "work", CreatedAt: clock.Now()})

	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "status.json to say the budget is spent", func() bool {
		st, err := mb.ReadStatus()
		return err == nil && st.State == "budget-spent"
	})
	poll.Until(t, "the person's notice", func() bool { return counts(t, root, "Agent-2").Pending == 1 })
	if c := counts(t, root, "Agent-1"); turns.Load() != 0 || c.Pending != 1 {
		t.Fatalf("while the budget is spent: %d turns, counts %+v", turns.Load(), c)
	}
	select { // a sleep from before the advance says nothing
	case <-clock.Sleeping():
	default:
	}
	clock.Advance(midnight.Sub(clock.Now()) - time.Second)
	<-clock.Sleeping()
	if c := counts(t, root, "Agent-1"); turns.Load() != 0 || c.Done != 0 {
		t.Fatalf("a second before midnight UTC: %d turns, counts %+v", turns.Load(), c)
	}
	clock.Advance(time.Second) // midnight UTC: a new day, a new budget
	poll.Until(t, "the message worked the next day", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if n := counts(t, root, "Agent-2").Pending; n != 1 {
		t.Errorf("the person has %d messages, want the one notice", n)
	}
}

// usageDriver replies and reports what the turn used, as the exec
// driver's presets do.
type usageDriver cursor.Usage

func (d usageDriver) Run(ctx context.Context, t cursor.Turn) (string, error) {
	if err := t.OnStage(cursor.StageSubmitted); err != nil {
		return "", err
	}
	t.OnUsage(cursor.Usage(d))
	return "done", nil
}

// What a turn used goes to the ledger: the agent's own price when it gives
// one, else the table's for the seat's model.
func TestTurnsWriteWhatTheyUsedToTheLedger(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, usageDriver{InputTokens: 2_000_000, OutputTokens: 100_000})
	s.Model, s.Prices = "m1", cost.Prices{"m1": {Input: 3, Output: 15}}
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "work", CreatedAt: time.Now()})
	poll.Until(t, "the turn", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	turns, err := cost.Day(root, time.Now())
	if err != nil || len(turns) != 1 {
		t.Fatalf("the ledger holds %v (%v), want the one turn", turns, err)
	}
	if got := turns[0]; got.Agent != "Agent-1" || got.MessageID != "m1" || got.Model != "m1" || got.PricedBy != cost.PricedByTable || got.CostUSD != 7.5 {
		t.Errorf("ledger line %+v, want Agent-1's turn on m1 priced $7.50 by the table", got)
	}
}
