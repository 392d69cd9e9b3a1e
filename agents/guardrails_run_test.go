package agents

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/audit"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// approvals lists the approval requests waiting in human's inbox, as read
// back from disk.
func approvals(t *testing.T, root string) []mailbox.Message {
	return humanPending(t, root, func(m mailbox.Message) bool { return m.Type == TypeApproval })
}

// humanPending lists the messages waiting in human's inbox that keep
// accepts, as read back from disk.
func humanPending(t *testing.T, root string, keep func(mailbox.Message) bool) []mailbox.Message {
	t.Helper()
	mb, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	pending, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	var out []mailbox.Message
	for _, e := range pending {
		if keep(e.Message) {
			out = append(out, e.Message)
		}
	}
	return out
}

func auditOf(t *testing.T, root string) []string {
	t.Helper()
	// Every day's log, so a test run across midnight reads it all.
	days, _ := filepath.Glob(filepath.Join(audit.Dir(root), "*.jsonl"))
	var recs []audit.Record
	for _, d := range days {
		day, err := time.Parse("2006-01-02.jsonl", filepath.Base(d))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := audit.Read(root, day)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rs...)
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s %s %s %s", r.MessageID, r.Kind, r.Verdict, strings.ReplaceAll(r.What+" | "+r.Reason, "\n", "; ")))
	}
	return out
}

func hasLine(lines []string, parts ...string) bool {
	return slices.ContainsFunc(lines, func(l string) bool {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				return false
			}
		}
		return true
	})
}

// TestGuardrailsThroughARunner: one reply meets every level. What is
// allowed applies, what is denied is refused and recorded, what needs a
// person waits in human's inbox as an approval request holding exactly the
// effect, which approving applies; the audit log has each of them.
func TestGuardrailsThroughARunner(t *testing.T) {
	root := newRuntime(t, demoAgents)
	reply := block(`{"send": [{"to": "Agent-2", "body": "a"}, {"to": "all", "subject": "b", "body": "b"}, {"to": "Agent-3", "body": "c"}],
	 "board": [{"id": "DEMO-1", "status": "review"}, {"id": "DEMO-2", "status": "done"}]}`)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return reply, nil })))
	s.Guardrails = Guardrails{Broadcast: GuardConfirm, CloseUnowned: GuardConfirm, ManySends: GuardDeny, ManySendsOver: 3}
	s.Log = logOnFailure(t)
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "go", TaskID: "DEMO-1"})
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })

	if c2, c3 := counts(t, root, "Agent-2").Pending, counts(t, root, "Agent-3").Pending; c2 != 1 || c3 != 0 {
		t.Errorf("Agent-2 got %d messages and Agent-3 %d; want only the allowed one, to Agent-2", c2, c3)
	}
	if st1, st2 := task(t, root, "DEMO-1").Status, task(t, root, "DEMO-2").Status; st1 != "review" || st2 != "todo" {
		t.Errorf("DEMO-1 %s, DEMO-2 %s; want review (its own) and todo (held)", st1, st2)
	}
	rc := receiptOf(t, root, "Agent-1", "m1")
	if rc.Outcome != "done with errors" || !strings.Contains(fmt.Sprint(rc.Data.Errors), "send[2]: refused: the reply's messages 4 to 4, past the first 3 (guardrails.many_sends: deny)") {
		t.Errorf("receipt %q, data %v", rc.Outcome, rc.Data)
	}
	reqs := approvals(t, root)
	if len(reqs) != 2 || fmt.Sprint(rc.Data.Parked) != fmt.Sprintf("[%s %s]", reqs[0].ID, reqs[1].ID) && fmt.Sprint(rc.Data.Parked) != fmt.Sprintf("[%s %s]", reqs[1].ID, reqs[0].ID) {
		t.Fatalf("approval requests %v; receipt parked %v", reqs, rc.Data.Parked)
	}
	lines := auditOf(t, root)
	for _, want := range [][]string{
		{"m1 send applied", "to Agent-2"},
		{"m1 board applied", "set task DEMO-1: status review"},
		{"m1 item refused", "guardrails.many_sends"},
		{"m1 send parked", "to Agent-2", "to Agent-3", "guardrails.broadcast: confirm"},
		{"m1 board parked", "set task DEMO-2: status done", "owned by human (guardrails.close_unowned: confirm)"},
		{"m1 devlog applied"},
	} {
		if !hasLine(lines, want...) {
			t.Errorf("no audit line with %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}

	// Approving the held close makes it, through the board store, once.
	for _, req := range reqs {
		p, err := ParkedOf(req)
		if err != nil {
			t.Fatal(err)
		}
		if p.Board == nil {
			continue
		}
		for range 2 {
			recs, err := ApplyApproved(context.Background(), root, "human", p, nil)
			if err != nil || len(recs) != 1 || recs[0].Verdict != audit.Approved {
				t.Fatalf("approve: %+v, %v", recs, err)
			}
		}
	}
	if st := task(t, root, "DEMO-2").Status; st != "done" {
		t.Errorf("DEMO-2 is %s after approval, want done", st)
	}
}

// TestAReplyWaitingForApprovalSaysSo: with nothing refused, a reply whose
// effect is held ends "waiting for approval", in the receipt and the devlog.
func TestAReplyWaitingForApprovalSaysSo(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		return block(`{"send": [{"to": "all", "body": "release at noon"}]}`), nil
	})))
	s.Guardrails = Guardrails{Broadcast: GuardConfirm}
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "announce it"})
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root, "Agent-1", "m1"); rc.Outcome != "waiting for approval" {
		t.Errorf("outcome %q, want waiting for approval", rc.Outcome)
	}
	e := entriesFor(devlogOf(t, root, "Agent-1"), "m1")
	if len(e) != 1 || e[0].Outcome != "waiting for approval" || !strings.Contains(strings.Join(e[0].Actions, "\n"), "asked for approval to send") {
		t.Errorf("devlog: %+v", e)
	}
	if n := len(approvals(t, root)); n != 1 || counts(t, root, "Agent-2").Pending != 0 {
		t.Errorf("%d approval requests, Agent-2 has %d messages; want 1 and 0", n, counts(t, root, "Agent-2").Pending)
	}
	// Nobody to ask: the held effect is refused instead, never applied.
	root2 := newRuntime(t, demoAgents)
	s.Root, s.People, s.Human, s.TemplatesDir = root2, nil, "", root2+"/templates"
	startRunner(t, s)
	deliverTo(t, root2, mailbox.Message{ID: "m2", From: "Agent-3", To: "Agent-1", Body: "announce it"})
	poll.Until(t, "m2 to be archived", func() bool { return counts(t, root2, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root2, "Agent-1", "m2"); rc.Outcome != "done with errors" || !strings.Contains(fmt.Sprint(rc.Data.Errors), "no person is configured") {
		t.Errorf("with no person: %q %v", rc.Outcome, rc.Data)
	}
}

// TestAResumedRunnerJudgesAsTheFirstDid: the owners a reply was judged
// against are recorded before any effect, so a runner resuming the claim
// after the board changed neither applies what the first one held nor
// holds what it applied.
func TestAResumedRunnerJudgesAsTheFirstDid(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		return block(`{"board": [{"id": "DEMO-2", "notes": "started"}]}`), nil
	}))
	// human has no mailbox yet: the approval request cannot be delivered,
	// and the first runner stops with the claim in processing/.
	s.People, s.Human = []string{"human"}, "human"
	s.Guardrails = Guardrails{OthersTask: GuardConfirm}
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-3", To: "Agent-1", Body: "take notes"})
	if err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot ask human for approval") {
		t.Fatalf("the first runner stopped with %v", err)
	}
	if _, err := (&projectboard.Store{Root: root}).Update(context.Background(), "DEMO-2", func(t *projectboard.Task) error {
		t.Owner = "Agent-1"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	s.Log = logOnFailure(t)
	startRunner(t, s)
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if n, notes := len(approvals(t, root)), task(t, root, "DEMO-2").Notes; n != 1 || notes != "" {
		t.Errorf("%d approval requests, DEMO-2 notes %q; want the change held as first judged", n, notes)
	}
}

// A change the guardrails refuse to one agent is not made for it by
// another agent's runner: a board-update's block is judged as its sender's
// reply, and its sends, which would go out as the receiving agent's, are
// refused.
func TestABoardUpdateIsJudgedAsItsSender(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		t.Error("a board-update took a turn")
		return "", nil
	})))
	s.Policy = map[string]string{"board-update": PolicyRunner}
	s.Guardrails = Guardrails{OthersTask: GuardDeny}
	s.Log = logOnFailure(t)
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "relay", From: "Agent-2", To: "Agent-1", Type: "board-update",
		Body: block(`{"board": [{"id": "DEMO-1", "status": "done"}], "send": [{"to": "Agent-3", "body": "from Agent-1, really"}], "devlog": "Agent-1 says: all done"}`)})
	poll.Until(t, "relay to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if st := task(t, root, "DEMO-1").Status; st == "done" {
		t.Error("Agent-2's change of Agent-1's task was made through Agent-1's runner")
	}
	if n := counts(t, root, "Agent-3").Pending; n != 0 {
		t.Errorf("Agent-3 got %d messages sent as Agent-1", n)
	}
	errs := fmt.Sprint(receiptOf(t, root, "Agent-1", "relay").Data.Errors)
	if !strings.Contains(errs, "guardrails.others_task") || !strings.Contains(errs, "send[0]: a board-update carries board changes only") ||
		!strings.Contains(errs, "devlog: a board-update carries board changes only") {
		t.Errorf("receipt errors %s", errs)
	}
	for _, e := range devlogOf(t, root, "Agent-1") {
		if strings.Contains(e.Note, "all done") {
			t.Errorf("Agent-2's words are in Agent-1's devlog as its note: %+v", e)
		}
	}
	// From a person, as before: judged as the runner's agent, the owner.
	deliverTo(t, root, mailbox.Message{ID: "by-hand", From: "human", To: "Agent-1", Type: "board-update",
		Body: block(`{"board": [{"id": "DEMO-1", "status": "review"}]}`)})
	poll.Until(t, "by-hand to be archived", func() bool { return counts(t, root, "Agent-1").Done == 2 })
	if st := task(t, root, "DEMO-1").Status; st != "review" {
		t.Errorf("a person's board-update left DEMO-1 %s, want review", st)
	}
}
