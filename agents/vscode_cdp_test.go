//go:build linux

package agents

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/codeserver"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// vscodeCase is one message of the VS Code test and what must come of it.
type vscodeCase struct {
	msg mailbox.Message
	// outcome is the receipt's; "" means the message must be dead-lettered
	// with a reason holding deadBecause.
	outcome     string
	deadBecause string
	// devlog is the block's devlog line, {{id}} standing for the message id.
	devlog string
	// review: the block sends Human one review message.
	review bool
}

// TestVSCodeChatWholeLoop runs Agent-1's real runner against VS Code's chat
// view (code-server, a scripted participant) through a cdp seat with the
// vscode profile: messages of every built-in template and every reply
// shape. Every prompt must reach the chat exactly as rendered, every reply
// must come back exactly as the chat gave it, and every block's effects
// must happen once; replies the app ends in an error or a cancel must
// never count as done.
func TestVSCodeChatWholeLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts code-server and Chromium")
	}
	codeserver.Need(t)
	runVSCodeWholeLoop(t, startVSCodeSeat(t, vscodeReplies(t)),
		vscodeEnd{"error", "The model is overloaded; try again later."}, vscodeEnd{"cancelled", "cancel"})
}

// vscodeEnd is a scripted reply VS Code ends in an error or a cancel, and
// what the reason of its dead letter must say.
type vscodeEnd struct{ reply, deadBecause string }

// runVSCodeWholeLoop delivers the messages to Agent-1 on seat, runs its
// runner until every one has settled, and checks each against what the
// chat recorded. ends are replies VS Code ends in an error or a cancel,
// which the seat must tell from finished ones.
func runVSCodeWholeLoop(t *testing.T, seat *vscodeSeat, ends ...vscodeEnd) {
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	s := seat.settings(clock)
	if os.Getenv("AGENTS_TEST_LOG") == "" {
		s.Log = logOnFailure(t).With().Str("agent", "Agent-1").Logger()
	}

	const split = "Split the parser for {{id}}; sent for review."
	const answered = "Answered {{id}} from the scripted model."
	plain := func(name, outcome, devlog string, review bool) vscodeCase {
		return vscodeCase{msg: mailbox.Message{ID: "vs-" + name, From: "human", To: "Agent-1", Type: "message",
			Subject: "the " + name + " reply", Body: "Please answer.\nvscodechat:" + name + "\nThanks."},
			outcome: outcome, devlog: devlog, review: review}
	}
	cases := []vscodeCase{
		plain("default", "done", answered, false),
		plain("markdown", "done", split, true),
		plain("noblock", outcomeNoBlock, "", false),
		plain("progress", "done", answered, false),
		plain("bursty", "done", split, true),
		plain("slow", "done", split, true),
	}
	for _, e := range ends {
		cases = append(cases, vscodeCase{msg: plain(e.reply, "", "", false).msg, deadBecause: e.deadBecause})
	}
	cases = append(cases,
		plain("long", "done", "Reviewed the whole parser for {{id}}.", false),
		vscodeCase{msg: mailbox.Message{ID: "vs-task", From: "human", To: "Agent-1", Type: "task", Priority: mailbox.High,
			Subject: "VS-1: split the parser", TaskID: "VS-1", Body: "Split it in two.\nvscodechat:task"},
			outcome: "done", devlog: "Split the parser for {{id}}; VS-1 in review."},
		vscodeCase{msg: mailbox.Message{ID: "vs-board-task", From: "Agent-1", To: "Agent-1", Type: typeBoardTask,
			Subject: "VS-2: Document the parser", TaskID: "VS-2",
			Body: "Your runner took VS-2 from the board parser.yaml for you (it was todo, yours, and everything it depends on is done)."},
			outcome: "done", devlog: "Documented the parser for {{id}}."})
	boardBefore := map[string]projectboard.Task{"VS-1": task(t, seat.root, "VS-1"), "VS-2": task(t, seat.root, "VS-2")}
	for i, c := range cases {
		c.msg.CreatedAt = clock.Now().Add(time.Duration(i) * time.Second) // claimed in this order
		if c.msg.Priority == "" {
			c.msg.Priority = mailbox.Normal
		}
		cases[i] = c
		deliverTo(t, seat.root, c.msg)
	}
	startRunner(t, s)
	waitSettled(t, seat.root, clock, len(cases))

	exchanges, err := seat.server.Exchanges()
	if err != nil {
		t.Fatal(err)
	}
	if len(exchanges) != len(cases) {
		t.Errorf("the chat received %d prompts for %d messages:\n%s", len(exchanges), len(cases), describeExchanges(exchanges))
	}
	settled := settledEntries(t, seat.root)
	for _, c := range cases {
		t.Run(c.msg.ID, func(t *testing.T) {
			e, ok := settled[c.msg.ID]
			if !ok {
				t.Fatalf("not settled")
			}
			x := exchangeOf(t, exchanges, c.msg.ID)
			checkPromptRendered(t, s, e.Message, boardBefore, x)
			checkSettled(t, seat.root, c, e, x)
		})
	}
	checkBoardAfter(t, seat.root)
}

// waitSettled waits until n messages are archived or dead-lettered and
// nothing waits or runs. A message put back in the inbox for a retry
// waits for its backoff on the fake clock, which the test then moves past
// it; each such retry is logged, as it means a turn failed.
func waitSettled(t *testing.T, root string, clock *clocktest.Clock, n int) {
	t.Helper()
	retried := map[string]int{}
	poll.Until(t, fmt.Sprintf("%d messages settled in Agent-1's mailbox", n), func() bool {
		c := counts(t, root, "Agent-1")
		if c.Done+c.Dead == n && c.Pending == 0 && c.Processing == 0 {
			return true
		}
		mb, err := mailbox.Open(root, "Agent-1")
		if err != nil {
			t.Fatal(err)
		}
		pending, _ := mb.List(mailbox.StatePending)
		for _, p := range pending {
			if p.Message.Attempts > retried[p.Message.ID] && c.Processing == 0 {
				retried[p.Message.ID] = p.Message.Attempts
				t.Logf("%s is back in the inbox for a retry after %d attempts", p.Message.ID, p.Message.Attempts)
				clock.Advance(time.Minute) // past any backoff of testSettings
			}
		}
		return false
	})
}

func settledEntries(t *testing.T, root string) map[string]mailbox.Entry {
	t.Helper()
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mailbox.Entry{}
	for _, state := range []string{mailbox.StateDone, mailbox.StateDead} {
		es, err := mb.List(state)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			out[e.Message.ID] = e
		}
	}
	return out
}

// exchangeOf is the one exchange whose prompt is about message id.
func exchangeOf(t *testing.T, all []codeserver.Exchange, id string) codeserver.Exchange {
	t.Helper()
	var found []codeserver.Exchange
	for _, x := range all {
		if strings.Contains(x.Prompt, "\nMessage-ID: "+id+"\n") {
			found = append(found, x)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the chat received %d prompts for %s, want 1:\n%s", len(found), id, describeExchanges(found))
	}
	return found[0]
}

// checkPromptRendered: the chat received the prompt the runner renders
// for the message, byte for byte. The prompts hold no carriage return, so
// the composer has no line ends to change. A board task's prompt shows
// the task as the runner's take left it.
func checkPromptRendered(t *testing.T, s Settings, msg mailbox.Message, before map[string]projectboard.Task, x codeserver.Exchange) {
	t.Helper()
	d := PromptData{Agent: s.Agent, Message: msg, Others: []string{"Agent-2"}}
	if tk, ok := before[msg.TaskID]; ok {
		if strings.EqualFold(msg.Type, typeBoardTask) {
			tk.Status = projectboard.InProgress
		}
		d.Task = &tk
	}
	want, err := Templates{Dir: s.TemplatesDir}.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	if x.Prompt != want {
		t.Errorf("the chat received a prompt other than the one rendered:\n%s", firstDifference(x.Prompt, want))
	}
}

// checkSettled: a message settles as its reply says, its reply in the
// receipt exactly as the chat gave it, and the effects of its block once.
func checkSettled(t *testing.T, root string, c vscodeCase, e mailbox.Entry, x codeserver.Exchange) {
	t.Helper()
	id := c.msg.ID
	if c.outcome == "" {
		if e.State != mailbox.StateDead || !strings.Contains(strings.ToLower(e.Reason), strings.ToLower(c.deadBecause)) {
			t.Errorf("the chat ended it with %q (%s); want it dead-lettered for %q, got %s with reason %q, receipt %+v",
				x.End, x.Reply, c.deadBecause, e.State, e.Reason, e.Receipt)
		}
	} else {
		if e.State != mailbox.StateDone || e.Receipt == nil {
			t.Fatalf("%s (reason %q), want archived %q", e.State, e.Reason, c.outcome)
		}
		if e.Receipt.Outcome != c.outcome {
			t.Errorf("outcome %q, want %q (receipt data %s)", e.Receipt.Outcome, c.outcome, e.Receipt.Data)
		}
		if x.End != "done" {
			t.Errorf("the chat ended the reply with %q", x.End)
		}
		if e.Receipt.Reply != x.Reply {
			t.Errorf("the receipt's reply (%d bytes) is not the chat's (%d bytes):\n%s\nreceipt data: %s",
				len(e.Receipt.Reply), len(x.Reply), firstDifference(e.Receipt.Reply, x.Reply), e.Receipt.Data)
		}
	}
	var notes, done int
	for _, d := range devlogOf(t, root, "Agent-1") {
		if d.MessageID != id {
			continue
		}
		if c.devlog != "" && d.Note == strings.ReplaceAll(c.devlog, "{{id}}", id) {
			notes++
		}
		if strings.HasPrefix(d.Outcome, "done") {
			done++
		}
	}
	wantNotes, wantDone := 0, 0
	if c.outcome != "" {
		wantDone = 1
		if c.devlog != "" {
			wantNotes = 1
		}
	}
	if notes != wantNotes || done != wantDone {
		t.Errorf("the devlog has %d entries with the block's line and %d done entries, want %d and %d", notes, done, wantNotes, wantDone)
	}
	reviews := 0
	human, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	pending, err := human.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pending {
		if m.Message.Subject != "review "+id {
			continue
		}
		reviews++
		if m.Message.From != "Agent-1" || m.Message.Body != "Parser split done; ```fences``` and *stars* kept." {
			t.Errorf("Human got %+v", m.Message)
		}
	}
	if want := map[bool]int{true: 1, false: 0}[c.review && c.outcome != ""]; reviews != want {
		t.Errorf("Human got %d review messages, want %d", reviews, want)
	}
}

// checkBoardAfter: the task's reply put VS-1 in review with its notes, the
// board task's reply finished VS-2, which the runner took for Agent-1.
func checkBoardAfter(t *testing.T, root string) {
	t.Helper()
	vs1, vs2 := task(t, root, "VS-1"), task(t, root, "VS-2")
	if vs1.Status != projectboard.Review || vs1.Notes != "split for vs-task" || vs1.Owner != "Agent-1" {
		t.Errorf("VS-1 is %s, owner %s, notes %q; want review, Agent-1, the reply's notes", vs1.Status, vs1.Owner, vs1.Notes)
	}
	if vs2.Status != projectboard.Done || vs2.Owner != "Agent-1" {
		t.Errorf("VS-2 is %s, owner %s; want done, Agent-1", vs2.Status, vs2.Owner)
	}
}

func describeExchanges(xs []codeserver.Exchange) string {
	var b strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&b, "- scenario %s, ended %s, prompt %d bytes, reply %d bytes\n", x.Scenario, x.End, len(x.Prompt), len(x.Reply))
	}
	return b.String()
}

// firstDifference shows where got and want part, with some context.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d of %d (want %d):\n got: %q\nwant: %q", i, len(got), len(want),
		got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}
