package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// byBody answers as the message's body asks: "plain" gets prose only, as a
// chat read from its rendering gives; "block" ends with an agentctl block;
// "report" is a Dream.OS report.
var byBody = replyDriver(func(prompt string) (string, error) {
	switch {
	case strings.Contains(prompt, "\nblock"):
		return block(`{"devlog": "did it"}`), nil
	case strings.Contains(prompt, "\nreport"):
		return "Task: look\nActions:\n- looked\nStatus: in progress\n", nil
	}
	return "All done; nothing else to say.", nil
})

func devlogEntryOf(t *testing.T, root, agent, id string) devlog.Entry {
	t.Helper()
	for _, e := range devlogOf(t, root, agent) {
		if e.MessageID == id {
			return e
		}
	}
	t.Fatalf("%s's devlog has no entry for %s", agent, id)
	return devlog.Entry{}
}

func statusOf(t *testing.T, root, agent string) mailbox.Status {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := mb.ReadStatus()
	return st
}

// noBlockNotices are the notices about replies without a block waiting in
// human's inbox.
func noBlockNotices(t *testing.T, root string) []mailbox.Message {
	t.Helper()
	return humanPending(t, root, func(m mailbox.Message) bool { return strings.Contains(m.Subject, "without the agentctl block") })
}

// work delivers one message to Agent-1 and waits until it is archived and
// the runner is idle again, all its steps done.
func work(t *testing.T, root string, clock *clocktest.Clock, id, typ, body string) receiptRead {
	t.Helper()
	done := counts(t, root, "Agent-1").Done
	deliverTo(t, root, mailbox.Message{ID: id, From: "Agent-2", To: "Agent-1", Type: typ, Body: body, CreatedAt: clock.Now()})
	poll.Until(t, id+" to be archived", func() bool { return counts(t, root, "Agent-1").Done == done+1 })
	poll.Until(t, "the runner to be idle after "+id, func() bool { return statusOf(t, root, "Agent-1").State == "idle" })
	return receiptOf(t, root, "Agent-1", id)
}

// TestReplyWithoutTheBlockEndsDoneWithoutBlock: a reply to a prompt that
// asked for the block, with no block and no report, is archived "done
// without block" in its receipt, its devlog entry and the runner's
// counters; a reply with the block stays "done", and so does a reply to a
// template of one's own that does not ask for it. A template that shows
// the block's fence asks for it.
func TestReplyWithoutTheBlockEndsDoneWithoutBlock(t *testing.T) {
	root := newRuntime(t, demoAgents)
	if err := os.MkdirAll(filepath.Join(root, "templates"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"note.tmpl":   "Have a look: {{.Message.Body}}\n",
		"fenced.tmpl": "{{.Message.Body}}\nEnd your reply with\n```agentctl\n{}\n```\n",
	} {
		if err := os.WriteFile(filepath.Join(root, "templates", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, byBody))
	s.Clock, s.Log = clock, logOnFailure(t)
	startRunner(t, s)

	rc := work(t, root, clock, "plain", "", "plain")
	if rc.Outcome != "done without block" || !strings.Contains(fmt.Sprint(rc.Data.NoBlock), "asked for an agentctl block") {
		t.Errorf("receipt of a reply without the block: %q %v, want done without block and the reason", rc.Outcome, rc.Data)
	}
	if e := devlogEntryOf(t, root, "Agent-1", "plain"); e.Outcome != "done without block" || !strings.Contains(e.Error, "the reply has none") {
		t.Errorf("devlog entry %+v, want done without block and the reason", e)
	}
	// The sender who asked for a receipt hears how it ended.
	deliverTo(t, root, mailbox.Message{ID: "acked", From: "Agent-2", To: "Agent-1", Body: "plain", RequiresAck: true, CreatedAt: clock.Now()})
	poll.Until(t, "the receipt of acked", func() bool { return counts(t, root, "Agent-2").Pending == 1 })
	mb2, _ := mailbox.Open(root, "Agent-2")
	if p, _ := mb2.List(mailbox.StatePending); len(p) != 1 || !strings.Contains(p[0].Message.Body, "was done without block") || p[0].Message.Meta["outcome"] != "done without block" {
		t.Errorf("Agent-2's inbox %+v, want the receipt saying done without block", p)
	}
	poll.Until(t, "the runner to be idle after acked", func() bool { return statusOf(t, root, "Agent-1").State == "idle" })
	if rc := work(t, root, clock, "with-block", "", "block"); rc.Outcome != "done" || rc.Data.NoBlock != "" {
		t.Errorf("receipt of a reply with the block: %q %v, want done", rc.Outcome, rc.Data)
	}
	if rc := work(t, root, clock, "with-report", "", "report"); rc.Outcome != "done" {
		t.Errorf("receipt of a reply with a report: %q %v, want done", rc.Outcome, rc.Data)
	}
	if rc := work(t, root, clock, "own-template", "note", "plain"); rc.Outcome != "done" || rc.Data.NoBlock != "" {
		t.Errorf("receipt of a reply to a template without the protocol: %q %v, want done", rc.Outcome, rc.Data)
	}
	if e := devlogEntryOf(t, root, "Agent-1", "own-template"); e.Outcome != "done" {
		t.Errorf("devlog entry %+v, want done", e)
	}
	if rc := work(t, root, clock, "fenced-template", "fenced", "plain"); rc.Outcome != "done without block" {
		t.Errorf("receipt of a reply to a template showing the fence: %q %v, want done without block", rc.Outcome, rc.Data)
	}
	poll.Until(t, "the counters in status.json", func() bool {
		c := statusOf(t, root, "Agent-1").Counters
		return c["done without block"] == 3 && c["done"] == 3
	})
	if c := statusOf(t, root, "Agent-1").Counters; c["done with errors"] != 0 {
		t.Errorf("counters %v: nothing was done with errors", c)
	}
	if n := noBlockNotices(t, root); len(n) != 0 {
		t.Errorf("human was told %d times; three replies without a block, not in a row, are no run", len(n))
	}
}

// TestRepliesWithoutTheBlockInARowTellThePersonOnce: the third reply in a
// row without a block puts one notice in human's inbox, and longer runs
// none more; a message the runner handles itself neither counts nor ends
// the run; a reply with a block ends it, and the run goes on across a
// runner's restart.
func TestRepliesWithoutTheBlockInARowTellThePersonOnce(t *testing.T) {
	root := newRuntime(t, demoAgents)
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, byBody))
	s.Clock, s.Log = clock, logOnFailure(t)
	stop := startRunner(t, s)

	work(t, root, clock, "a1", "", "plain")
	work(t, root, clock, "a2", "", "plain")
	if rc := work(t, root, clock, "ack", "receipt", "plain"); rc.Outcome != outcomeRunner {
		t.Fatalf("a receipt was %q, want handled by the runner", rc.Outcome)
	}
	if n := noBlockNotices(t, root); len(n) != 0 {
		t.Fatalf("human was told after two replies without a block: %v", n)
	}
	work(t, root, clock, "a3", "", "plain")
	n := noBlockNotices(t, root)
	if len(n) != 1 {
		t.Fatalf("after three replies in a row without a block human has %d notices, want 1", len(n))
	}
	for _, want := range []string{"Agent-1", "3 replies", "agentctl doctor", "cdp.copy", "template", "loses Markdown", "ignores the reply protocol", "from a1 to a3"} {
		if !strings.Contains(n[0].Subject+"\n"+n[0].Body, want) {
			t.Errorf("the notice does not say %q:\n%s\n%s", want, n[0].Subject, n[0].Body)
		}
	}
	if n[0].From != "agentctl" || n[0].Type != "recovery" || n[0].Priority != mailbox.High {
		t.Errorf("notice %+v, want a high-priority recovery notice from agentctl", n[0])
	}
	work(t, root, clock, "a4", "", "plain")
	work(t, root, clock, "a5", "", "plain")
	if n := noBlockNotices(t, root); len(n) != 1 {
		t.Fatalf("after five replies in a row without a block human has %d notices, want still 1", len(n))
	}
	if st := statusOf(t, root, "Agent-1"); st.NoBlock != (mailbox.Streak{Turns: 5, First: "a1"}) {
		t.Errorf("status.json keeps the run as %+v, want 5 turns from a1", st.NoBlock)
	}

	// A reply with the block ends the run.
	work(t, root, clock, "b1", "", "block")
	if st := statusOf(t, root, "Agent-1"); st.NoBlock != (mailbox.Streak{}) {
		t.Errorf("after a reply with the block status.json keeps the run as %+v, want none", st.NoBlock)
	}
	work(t, root, clock, "c1", "", "plain")
	work(t, root, clock, "c2", "", "plain")

	// A new runner goes on with the run of the last one.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	startRunner(t, s)
	work(t, root, clock, "c3", "", "plain")
	n = noBlockNotices(t, root)
	if len(n) != 2 {
		t.Fatalf("after a new run of three across a restart human has %d notices, want 2", len(n))
	}
	var second mailbox.Message
	for _, m := range n {
		if m.Meta["first"] == "c1" {
			second = m
		}
	}
	if !strings.Contains(second.Body, "from c1 to c3") {
		t.Errorf("the second notice is %+v, want the run from c1 to c3", second)
	}
}

// TestNoBlockNoticeSetting: the number of turns is a setting, and a
// negative one tells nobody.
func TestNoBlockNoticeSetting(t *testing.T) {
	for _, c := range []struct {
		after, notices int
	}{{1, 1}, {-1, 0}} {
		t.Run(fmt.Sprint(c.after), func(t *testing.T) {
			root := newRuntime(t, demoAgents)
			clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
			s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, byBody))
			s.Clock, s.Log, s.NoBlockNotice = clock, logOnFailure(t), c.after
			startRunner(t, s)
			work(t, root, clock, "a1", "", "plain")
			work(t, root, clock, "a2", "", "plain")
			if n := noBlockNotices(t, root); len(n) != c.notices {
				t.Errorf("run.no_block_notice %d: %d notices, want %d", c.after, len(n), c.notices)
			}
		})
	}
}

// TestNextNoBlock: the verdict alone, message by message.
func TestNextNoBlock(t *testing.T) {
	missing, answered, runner, unasked := outcome{NoBlock: true}, outcome{Answered: true}, outcome{ByRunner: true}, outcome{}
	run, told := mailbox.Streak{}, 0
	for i, o := range []outcome{missing, missing, runner, unasked, missing, missing, missing, answered, missing, missing, missing} {
		var tell bool
		run, tell = nextNoBlock(run, o, fmt.Sprint("m", i), 3)
		if tell {
			told++
			if run.Turns != 3 {
				t.Errorf("told at a run of %d, want 3", run.Turns)
			}
		}
		if i == 6 && run != (mailbox.Streak{Turns: 5, First: "m0"}) {
			t.Errorf("after m6 the run is %+v, want 5 from m0", run)
		}
	}
	if told != 2 || run != (mailbox.Streak{Turns: 3, First: "m8"}) {
		t.Errorf("told %d times, run %+v; want twice, the last run 3 from m8", told, run)
	}
	if _, tell := nextNoBlock(mailbox.Streak{Turns: 2}, missing, "x", -1); tell {
		t.Error("a negative setting told the person")
	}
}

// TestBuiltinTemplatesAskForTheBlock: every built-in template that carries
// the protocol asks for the block; resume, which pastes a nudge as it is,
// does not.
func TestBuiltinTemplatesAskForTheBlock(t *testing.T) {
	for typ, want := range map[string]bool{"message": true, "task": true, "board-task": true, "resume": false} {
		p, err := Templates{}.render(PromptData{Agent: "Agent-1", Message: mailbox.Message{Type: typ, From: "human", Body: "go on"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.AsksForBlock != want {
			t.Errorf("the built-in %s template asks for the block: %v, want %v", typ, p.AsksForBlock, want)
		}
	}
}

// A turn whose reply is empty is said to be, in the receipt's notes,
// rather than shown as a plain "done" on nothing.
func TestAnEmptyReplyIsNoted(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "", nil }))
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "say nothing"})
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root, "Agent-1", "m1"); !strings.Contains(strings.Join(rc.Data.DriverNotes, "\n"), "reply was empty") {
		t.Errorf("receipt notes %q; want the empty reply said", rc.Data.DriverNotes)
	}
}
