package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// TestReceiptWithNowhereToGoIsSaidSo: a message that asks for a receipt
// from a sender with no mailbox (a script, a typo) gets none, and its own
// receipt says so, ending "done with errors", rather than record a receipt
// as sent.
func TestReceiptWithNowhereToGoIsSaidSo(t *testing.T) {
	root := newRuntime(t, demoAgents)
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	s := testSettings(root, "Agent-1", demoAgents, byBody)
	s.Clock, s.Log = clock, logOnFailure(t)
	startRunner(t, s)

	deliverTo(t, root, mailbox.Message{ID: "acked", From: "night-script", To: "Agent-1", Body: "block", RequiresAck: true, CreatedAt: clock.Now()})
	poll.Until(t, "acked to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	rc := receiptOf(t, root, "Agent-1", "acked")
	want := `no receipt sent: the sender "night-script" has no mailbox`
	if rc.Outcome != "done with errors" || !strings.Contains(strings.Join(rc.Data.Errors, "\n"), want) {
		t.Errorf("receipt %q %v, want done with errors saying %q", rc.Outcome, rc.Data.Errors, want)
	}
	if e := devlogEntryOf(t, root, "Agent-1", "acked"); e.Outcome != "done with errors" || !strings.Contains(e.Error, want) {
		t.Errorf("devlog entry %q %q, want it to say what the receipt says", e.Outcome, e.Error)
	}
}
