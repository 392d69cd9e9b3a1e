package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/mailbox"
)

// parkedSend delivers to human an approval request, as Agent-1's runner
// parks it, holding a message to Agent-2; it returns the request's id and
// the held message's.
func parkedSend(t *testing.T, rt Runtime, round int) (request, held string) {
	t.Helper()
	cause := fmt.Sprintf("m-%d", round)
	p := agents.Parked{Agent: "Agent-1", Message: cause, Item: "send[0]", Guard: "guardrails.send", Reason: "a send needs approval",
		Sends: []mailbox.Message{{ID: fmt.Sprintf("held-%d", round), From: "Agent-1", To: "Agent-2", Body: "heads up", Priority: mailbox.Normal, CreatedAt: time.Now().UTC()}}}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var meta any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	req := mailbox.Message{ID: agents.ApprovalID(cause, p.Item), From: "Agent-1", To: "human", Type: agents.TypeApproval,
		Priority: mailbox.High, Body: "approve?", CreatedAt: time.Now().UTC(), Meta: map[string]any{"approval": meta}}
	if err := mailboxOf(t, rt, "human").Deliver(req); err != nil {
		t.Fatal(err)
	}
	return req.ID, p.Sends[0].ID
}

// An approve and a deny of one request at once: exactly one settles it,
// and what happened is what its receipt says. Without the by-hand lock
// both passed the check that the request still waited, and the held
// message was sent while the request was archived as denied.
func TestApproveAndDenyAtOnceSettleOnce(t *testing.T) {
	rt := newRuntime(t)
	for round := range 20 {
		id, held := parkedSend(t, rt, round)
		var approveErr, denyErr error
		var wg sync.WaitGroup
		wg.Go(func() { _, approveErr = rt.Approve(context.Background(), "", id) })
		wg.Go(func() { _, denyErr = rt.Deny(context.Background(), "", id, "no") })
		wg.Wait()
		if (approveErr == nil) == (denyErr == nil) {
			t.Fatalf("round %d: approve gave %v, deny %v; want exactly one to succeed", round, approveErr, denyErr)
		}
		lost := denyErr
		if lost == nil {
			lost = approveErr
		}
		if !strings.Contains(lost.Error(), "already") {
			t.Errorf("round %d: the one that lost said %q; want that the request was settled already", round, lost)
		}
		found, err := mailboxOf(t, rt, "human").Locate(id)
		if err != nil || len(found) != 1 || found[0].State != mailbox.StateDone || found[0].Receipt == nil {
			t.Fatalf("round %d: the request is %+v, %v; want it archived once", round, found, err)
		}
		sent, err := mailboxOf(t, rt, "Agent-2").Locate(held)
		if err != nil {
			t.Fatal(err)
		}
		switch outcome := found[0].Receipt.Outcome; {
		case outcome == "approved" && approveErr == nil && len(sent) == 1:
		case outcome == "denied" && denyErr == nil && len(sent) == 0:
		default:
			t.Fatalf("round %d: archived %q (approve: %v, deny: %v) and the held message is in Agent-2's mailbox %d times", round, outcome, approveErr, denyErr, len(sent))
		}
	}
}

// Two retries of one dead letter at once, while a runner claims what
// comes into the inbox: the message is worked once. Without the by-hand
// lock, a copy the runner claimed between the two retries went unseen by
// the second, which put another one back.
func TestTwoRetriesAtOnceWorkTheMessageOnce(t *testing.T) {
	rt := newRuntime(t)
	mb := mailboxOf(t, rt, "Agent-1")
	c, err := mb.Consume(actions.ConsumerOptions(rt.Config), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The runner dead-letters a message the first time, and completes it
	// once it is back: it tells each step on worked.
	type step struct{ id, did string }
	worked := make(chan step, 8)
	ctx, stop := context.WithCancel(context.Background())
	var runner sync.WaitGroup
	runner.Go(func() {
		defer c.Close()
		for ctx.Err() == nil {
			cl, err := c.Claim(time.Now())
			if errors.Is(err, mailbox.ErrEmpty) {
				// A real runner waits for the inbox's events.
				time.Sleep(time.Millisecond)
				err = c.Scan(time.Now())
			}
			if err != nil {
				worked <- step{did: "failed to claim: " + err.Error()}
				return
			}
			if cl == nil {
				continue
			}
			if len(mailbox.Deaths(cl.Message)) == 0 {
				err = c.Deadletter(cl, "it dies once", time.Now())
				worked <- step{cl.Message.ID, "dead"}
			} else {
				err = c.Complete(cl, mailbox.Receipt{}, time.Now())
				worked <- step{cl.Message.ID, "done"}
			}
			if err != nil {
				worked <- step{cl.Message.ID, "failed: " + err.Error()}
				return
			}
		}
	})
	expect := func(id, did string) {
		t.Helper()
		if got := <-worked; got != (step{id, did}) {
			t.Fatalf("the runner %s %s; want %s %s", got.did, got.id, did, id)
		}
	}
	for round := range 20 {
		id := fmt.Sprintf("dl-%d", round)
		if err := mb.Deliver(mailbox.Message{ID: id, From: "human", To: "Agent-1", Body: "work", Priority: mailbox.Normal, CreatedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		expect(id, "dead")
		var errs [2]error
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = rt.Retry(context.Background(), id, "", "Agent-1") })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: the retries gave %v and %v; want exactly one to succeed", round, errs[0], errs[1])
		}
		expect(id, "done")
	}
	// A second copy of the last message would still come.
	if err := mb.Deliver(mailbox.Message{ID: "last", From: "human", To: "Agent-1", Body: "work", Priority: mailbox.Normal, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	expect("last", "dead")
	stop()
	runner.Wait()
}
