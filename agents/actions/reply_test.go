package actions

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Two replies to one question at once: one answer is sent and the
// question archived with it; the other is told the question was answered
// already, and its text goes nowhere. Without the by-hand lock, the second
// reply found its answer a duplicate, went on to archive the question, and
// said its answer "was sent" although it never was.
func TestTwoRepliesAtOnceSendOneAnswer(t *testing.T) {
	rt := newRuntime(t)
	for round := range 20 {
		sent, err := rt.Send(Draft{To: "human", From: "Agent-2", Body: "which branch?", Priority: "normal"})
		if err != nil {
			t.Fatal(err)
		}
		q := sent[0].ID
		texts := [2]string{fmt.Sprintf("A-%d", round), fmt.Sprintf("B-%d", round)}
		var errs [2]error
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = rt.Reply(context.Background(), "", q, texts[i]) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: the replies gave %v and %v; want exactly one to succeed", round, errs[0], errs[1])
		}
		won, lost := 0, 1
		if errs[0] != nil {
			won, lost = 1, 0
		}
		if !strings.Contains(errs[lost].Error(), "was answered already") {
			t.Errorf("round %d: the second reply said %q; want that the question was answered already", round, errs[lost])
		}
		got := map[string]int{}
		for _, e := range pending(t, rt, "Agent-2") {
			got[e.Message.Body]++
		}
		if got[texts[won]] != 1 || got[texts[lost]] != 0 {
			t.Fatalf("round %d: Agent-2 got %v; want %q once and %q never", round, got, texts[won], texts[lost])
		}
	}
}
