package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// block wraps an agentctl block in a reply.
func block(json string) string { return "Done.\n\n```agentctl\n" + json + "\n```\n" }

// receiptRead is a message's receipt with its data read back as every
// reader of receipts reads it.
type receiptRead struct {
	*mailbox.Receipt
	Data receipt.Data
}

func receiptOf(t *testing.T, root, agent, id string) receiptRead {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	done, err := mb.List(mailbox.StateDone)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range done {
		if e.Message.ID == id {
			d, err := receipt.Read(e.Receipt)
			if err != nil {
				t.Fatal(err)
			}
			return receiptRead{e.Receipt, d}
		}
	}
	t.Fatalf("%s has no archived %s", agent, id)
	return receiptRead{}
}

func entriesFor(es []devlog.Entry, id string) []devlog.Entry {
	var out []devlog.Entry
	for _, e := range es {
		if e.MessageID == id {
			out = append(out, e)
		}
	}
	return out
}

// TestBoardChangeOnAnInvalidBoardIsKept: a reply's board change made while
// a person left the board invalid is reported as not made, gives the
// message the outcome "done with errors", and is made exactly once when the
// board is valid again.
func TestBoardChangeOnAnInvalidBoardIsKept(t *testing.T) {
	root := newRuntime(t, demoAgents)
	board := filepath.Join(projectboard.Dir(root), "demo.yaml")
	good, err := os.ReadFile(board)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(board, append(append([]byte(nil), good...), "  - id: [unclosed\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(prompt string) (string, error) {
		if strings.Contains(prompt, "nothing to change") {
			return block(`{"devlog": "nothing to change"}`), nil
		}
		return block(`{"board": [{"id": "DEMO-1", "status": "review"}], "send": [{"to": "Agent-2", "body": "review it"}]}`), nil
	}))
	clk := clocktest.New(time.Now())
	s.Clock, s.Heartbeat = clk, time.Minute // how soon an idle runner looks at kept changes
	// No rescans: the watcher's wake-up would pass for the loop's on Sleeping.
	s.Watch.RescanInterval = 1000 * time.Hour
	s.Log = logOnFailure(t)
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-3", To: "Agent-1", Body: "do DEMO-1", TaskID: "DEMO-1"})
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })

	rc := receiptOf(t, root, "Agent-1", "m1")
	if rc.Outcome != "done with errors" || fmt.Sprint(rc.Data.Deferred) != "[DEMO-1]" || rc.Data.Board != nil {
		t.Errorf("receipt: outcome %q, data %v; want done with errors, DEMO-1 deferred, no board change", rc.Outcome, rc.Data)
	}
	e := entriesFor(devlogOf(t, root, "Agent-1"), "m1")
	if len(e) != 1 || e[0].Outcome != "done with errors" || strings.Contains(strings.Join(e[0].Actions, "\n"), "updated task") ||
		!strings.Contains(e[0].Error, "board DEMO-1: not changed yet, kept until the boards can take it: ") || !strings.Contains(e[0].Error, "demo.yaml") {
		t.Errorf("devlog entry %+v: want done with errors, no 'updated task', the reason", e)
	}
	if c := counts(t, root, "Agent-2"); c.Pending != 1 {
		t.Errorf("the send beside the kept change was not delivered: %+v", c)
	}
	if data, _ := os.ReadFile(board); !strings.Contains(string(data), "status: todo") || strings.Contains(string(data), "review") {
		t.Fatalf("the invalid board was written:\n%s", data)
	}

	// A person fixes the board: the idle runner makes the kept change, once.
	if err := os.WriteFile(board, good, 0o600); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the kept change to be made", func() bool {
		clk.Advance(s.Heartbeat)
		return task(t, root, "DEMO-1").Status == "review"
	})
	poll.Until(t, "the devlog to tell it", func() bool {
		for _, e := range devlogOf(t, root, "Agent-1") {
			if strings.Contains(strings.Join(e.Actions, " "), "updated task DEMO-1") {
				return true
			}
		}
		return false
	})
	// Set it back by hand: a kept change made twice would undo this.
	store := projectboard.Store{Root: root}
	if _, err := store.Update(t.Context(), "DEMO-1", func(tk *projectboard.Task) error { tk.Status = "blocked"; return nil }); err != nil {
		t.Fatal(err)
	}
	deliverTo(t, root, mailbox.Message{ID: "m2", From: "Agent-3", To: "Agent-1", Body: "nothing to change"})
	poll.Until(t, "m2", func() bool { return counts(t, root, "Agent-1").Done == 2 })
	for range 3 { // idle wake-ups, each of which looks for kept changes
		<-clk.Sleeping()
		clk.Advance(s.Heartbeat)
	}
	<-clk.Sleeping() // the last one is over
	if tk := task(t, root, "DEMO-1"); tk.Status != "blocked" {
		t.Errorf("DEMO-1 = %s, want the person's blocked: the kept change was made again", tk.Status)
	}
	if rc := receiptOf(t, root, "Agent-1", "m2"); rc.Outcome != "done" {
		t.Errorf("m2 receipt: %q %v, want done", rc.Outcome, rc.Data)
	}
	applied := 0
	for _, e := range devlogOf(t, root, "Agent-1") {
		if e.From == "agentctl" && strings.Contains(strings.Join(e.Actions, " "), "updated task DEMO-1") {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("the kept change was told %d times, want once", applied)
	}
}

// pingPong answers every message with a send to the other agent.
func pingPong(other string) replyDriver {
	return func(string) (string, error) {
		return block(fmt.Sprintf(`{"send": [{"to": %q, "body": "your turn"}]}`, other)), nil
	}
}

// withHuman gives the runtime a person's mailbox and the runner settings
// that know it.
func withHuman(t *testing.T, root string, s Settings) Settings {
	t.Helper()
	if err := mailbox.Create(root, "human"); err != nil {
		t.Fatal(err)
	}
	s.People, s.Human = []string{"human"}, "human"
	return s
}

// TestHopBudgetEndsAgentsAnsweringEachOther: two agents that always answer
// each other stop when the thread has used its hops; the next message goes
// to the person instead, once.
func TestHopBudgetEndsAgentsAnsweringEachOther(t *testing.T) {
	root := newRuntime(t, demoAgents)
	for _, pair := range [][2]string{{"Agent-1", "Agent-2"}, {"Agent-2", "Agent-1"}} {
		s := withHuman(t, root, testSettings(root, pair[0], demoAgents, pingPong(pair[1])))
		s.MaxHops = 3
		startRunner(t, s)
	}
	deliverTo(t, root, mailbox.Message{ID: "start", From: "human", To: "Agent-1", Body: "talk to Agent-2"})
	poll.Until(t, "the person to be asked", func() bool { return counts(t, root, "human").Pending == 1 })
	poll.Until(t, "the agents to go quiet", func() bool {
		return counts(t, root, "Agent-1").Pending+counts(t, root, "Agent-2").Pending == 0 &&
			counts(t, root, "Agent-1").Processing+counts(t, root, "Agent-2").Processing == 0
	})
	if a, b := counts(t, root, "Agent-1").Done, counts(t, root, "Agent-2").Done; a != 2 || b != 2 {
		t.Errorf("archived %d and %d messages, want 2 each (hops 0 to 3)", a, b)
	}
	mb, _ := mailbox.Open(root, "human")
	asked, err := mb.List(mailbox.StatePending)
	if err != nil || len(asked) != 1 {
		t.Fatalf("human's inbox: %v %v", asked, err)
	}
	q := asked[0].Message
	if q.ThreadID != "start" || q.Meta["held_to"] != "Agent-1" || !strings.Contains(q.Body, "your turn") || !strings.Contains(q.Body, "run.max_hops is 3") {
		t.Errorf("the person got %+v", q)
	}
}

// TestSendsPerReplyAreCapped: a reply that asks for more sends than the cap
// gets the cap's worth, and each refused send is recorded.
func TestSendsPerReplyAreCapped(t *testing.T) {
	root := newRuntime(t, demoAgents)
	var sends []string
	for i := range 1000 {
		sends = append(sends, fmt.Sprintf(`{"to": "Agent-2", "body": "number %d"}`, i))
	}
	reply := block(`{"send": [` + strings.Join(sends, ",") + `]}`)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return reply, nil }))
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "flood", From: "human", To: "Agent-1", Body: "send a lot"})
	poll.Until(t, "the flood to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if c := counts(t, root, "Agent-2"); c.Pending != DefaultMaxSendsPerReply {
		t.Errorf("Agent-2 got %d messages, want %d", c.Pending, DefaultMaxSendsPerReply)
	}
	rc := receiptOf(t, root, "Agent-1", "flood")
	errs := rc.Data.Errors
	if rc.Outcome != "done with errors" || len(errs) != 1000-DefaultMaxSendsPerReply || !strings.Contains(fmt.Sprint(errs[0]), "run.max_sends_per_reply") {
		t.Errorf("receipt %q with %d errors (first %v)", rc.Outcome, len(errs), errs[:min(1, len(errs))])
	}
	refused, sent := 0, 0
	for _, l := range auditOf(t, root) {
		refused += strings.Count(l, "flood item refused send[")
		sent += strings.Count(l, "flood send applied")
	}
	if refused != 1000-DefaultMaxSendsPerReply || sent != DefaultMaxSendsPerReply {
		t.Errorf("the audit log has %d refused sends and %d sent, want %d and %d", refused, sent, 1000-DefaultMaxSendsPerReply, DefaultMaxSendsPerReply)
	}
}

// TestRepliesReachThePerson: a reply may ask the person a question, and a
// dead letter from a sender without a mailbox is told to the person.
func TestRepliesReachThePerson(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, replyDriver(func(p string) (string, error) {
		return block(`{"send": [{"to": "human", "subject": "which db?", "body": "Postgres or SQLite?"}]}`), nil
	})))
	s.MaxPromptBytes = 3000
	s.Log = logOnFailure(t)
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "q", From: "Agent-2", To: "Agent-1", Body: "pick a database"})
	deliverTo(t, root, mailbox.Message{ID: "big", From: "dreamos-script", To: "Agent-1", Body: strings.Repeat("x", 4000)})
	poll.Until(t, "both to be settled", func() bool {
		c := counts(t, root, "Agent-1")
		return c.Done == 1 && c.Dead == 1
	})
	mb, _ := mailbox.Open(root, "human")
	got, err := mb.List(mailbox.StatePending)
	if err != nil || len(got) != 2 {
		t.Fatalf("human's inbox: %+v %v", got, err)
	}
	subjects := got[0].Message.Subject + " | " + got[1].Message.Subject
	if !strings.Contains(subjects, "which db?") || !strings.Contains(subjects, "notice: big") {
		t.Errorf("human got %q, want the question and the notice about the dead letter", subjects)
	}
}

// TestEffectsShareOneSyncedRecord: the effects of a reply are recorded
// together with the receipt, after the last of them, except a board
// change, which is recorded before the messages sent after it go out.
func TestEffectsShareOneSyncedRecord(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(prompt string) (string, error) {
		if strings.Contains(prompt, "DEMO-1") {
			return block(`{"board": [{"id": "DEMO-1", "status": "review"}], "send": [{"to": "Agent-2", "body": "review it"}, {"to": "Agent-3", "body": "FYI"}]}`), nil
		}
		return block(`{"send": [{"to": "Agent-2", "body": "one"}, {"to": "Agent-3", "body": "two"}], "devlog": "told both"}`), nil
	}))
	s.Log = logOnFailure(t)
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "board-and-sends", From: "Agent-3", To: "Agent-1", Body: "do DEMO-1", TaskID: "DEMO-1"})
	deliverTo(t, root, mailbox.Message{ID: "sends", From: "Agent-3", To: "Agent-1", Body: "tell them"})
	poll.Until(t, "both to be archived", func() bool { return counts(t, root, "Agent-1").Done == 2 })

	for id, want := range map[string][]string{
		"board-and-sends": {"effects: board/0", "done: board/0 devlog/done send/ send/"},
		"sends":           {"done: devlog/done send/ send/"},
	} {
		// An archived message's progress log is its receipt.
		logs, err := filepath.Glob(filepath.Join(mailbox.Dir(root, "Agent-1"), mailbox.ArchiveDir, "*", id+mailbox.ReceiptSuffix))
		if err != nil || len(logs) != 1 {
			t.Fatalf("the archived log of %s: %v %v", id, logs, err)
		}
		var got []string
		for _, line := range logLines(t, logs[0]) {
			var p mailbox.Progress
			if err := json.Unmarshal(line, &p); err != nil {
				t.Fatal(err)
			}
			if p.Stage != "effects" && p.Stage != mailbox.StageDone {
				continue
			}
			var turn struct{ Effects []string }
			if err := json.Unmarshal(p.Data, &turn); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range turn.Effects {
				if strings.HasPrefix(k, "send/") {
					k = "send/" // the ids are derived, not chosen here
				}
				keys = append(keys, k)
			}
			slices.Sort(keys)
			got = append(got, p.Stage+": "+strings.Join(keys, " "))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's effects records hold %q, want %q", id, got, want)
		}
	}
	if c := counts(t, root, "Agent-2"); c.Pending != 2 {
		t.Errorf("Agent-2 got %d messages, want 2", c.Pending)
	}
	if lines := auditOf(t, root); len(lines) == 0 {
		t.Error("nothing was audited")
	}
}

// The outcome lists what the effects did in the order they were applied,
// so that a receipt names a reply's sends as the reply ordered them.
func TestOutcomeListsEffectsInTheOrderApplied(t *testing.T) {
	cl := &claim{}
	results := map[string]result{}
	var want []string
	for i := range 20 {
		id := fmt.Sprintf("m-%02d", 19-i)
		key := "send/" + id
		cl.turn.Effects = append(cl.turn.Effects, key)
		results[key] = result{Kind: "sent", ID: id}
		want = append(want, id)
	}
	if got := outcomeOf(cl, Parsed{}, plan{}, results).Sent; !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
}
