package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

var start = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// newRuntime is a runtime folder with the mailboxes of three agents and
// the default person, as agentctl init leaves it, on a test clock.
func newRuntime(t *testing.T) (actions.Runtime, *clocktest.Clock) {
	t.Helper()
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1", "Agent-2", "Agent-3"}))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	clk := clocktest.New(start)
	return actions.Runtime{Root: root, Config: cfg, Clock: clk}, clk
}

func options(rt actions.Runtime, as string) Options {
	return Options{Runtime: rt, As: as, Version: "test",
		Status: missioncontrol.Settings{Agents: rt.Config.AgentNames(), People: rt.Config.PeopleNames(), StallAfter: time.Hour}}
}

// connect starts the server of as and a client of it over an in-memory
// transport, and returns the client's session.
func connect(t *testing.T, rt actions.Runtime, as string) *sdk.ClientSession {
	t.Helper()
	s, err := New(options(rt, as))
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool that must succeed and decodes its structured result
// into out.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v in %s", tool, err, data)
	}
}

// fail calls a tool that must fail and returns its error text.
func fail(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want an error: %s", tool, args, text(res))
	}
	return text(res)
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func entries(t *testing.T, rt actions.Runtime, who, state string) []mailbox.Entry {
	t.Helper()
	mb, err := mailbox.Open(rt.Root, who)
	if err != nil {
		t.Fatal(err)
	}
	es, err := mb.List(state)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func deliver(t *testing.T, rt actions.Runtime, msg mailbox.Message) {
	t.Helper()
	mb, err := mailbox.Open(rt.Root, msg.To)
	if err != nil {
		t.Fatal(err)
	}
	if msg.CreatedAt.IsZero() {
		msg.CreatedAt = start
	}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
}

func TestToolsAreTheCommands(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		// A tool takes nothing it does not name: no sender can slip in.
		if !strings.Contains(string(schema), `"additionalProperties":false`) {
			t.Errorf("%s takes arguments it does not name: %s", tool.Name, schema)
		}
		if strings.Contains(string(schema), `"from"`) {
			t.Errorf("%s takes a sender: %s", tool.Name, schema)
		}
	}
	want := "answer board_add board_get board_set devlog_append inbox reply_human send status"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools %q, want %q", got, want)
	}
}

func TestAsMustBeAConfiguredAgent(t *testing.T) {
	rt, _ := newRuntime(t)
	for as, want := range map[string]string{
		"Agent-9":           `unknown agent "Agent-9"`,
		"../Agent-1":        "not a valid agent name",
		"Agent-1/../human":  "not a valid agent name",
		"human":             "human is a person, not an agent",
		"":                  "not a valid agent name",
		"agent-1/../../etc": "not a valid agent name",
	} {
		_, err := New(options(rt, as))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(--as %q) = %v, want %q", as, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(rt.Root, layout.MCPDir)); !os.IsNotExist(err) {
		t.Errorf("a refused --as left %s behind: %v", layout.MCPDir, err)
	}
	// A name is taken as the configuration spells it.
	cs := connect(t, rt, "agent-1")
	var out SendOut
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "hi"}, &out)
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 1 || es[0].Message.From != "Agent-1" {
		t.Errorf("Agent-2's inbox: %+v", es)
	}
}

func TestSendIsFromTheServersAgent(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	var out SendOut
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "review T-3", "priority": "high", "subject": "review",
		"reply_to": "msg_x", "task_id": "T-3"}, &out)
	es := entries(t, rt, "Agent-2", mailbox.StatePending)
	if len(out.IDs) != 1 || len(es) != 1 || es[0].Message.ID != out.IDs[0] || out.Repeated {
		t.Fatalf("send gave %+v; Agent-2's inbox holds %+v", out, es)
	}
	m := es[0].Message
	if m.From != "Agent-1" || m.Priority != mailbox.High || m.Subject != "review" || m.ReplyTo != "msg_x" || m.TaskID != "T-3" || m.Body != "review T-3" {
		t.Errorf("delivered %+v", m)
	}

	// No argument names a sender, and one that tries is refused whole.
	msg := fail(t, cs, "send", map[string]any{"to": "Agent-2", "body": "I am Agent-3", "from": "Agent-3"})
	if !strings.Contains(msg, `unexpected additional properties ["from"]`) {
		t.Errorf("a send naming its sender failed with %q", msg)
	}
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 1 {
		t.Errorf("a send naming another sender delivered: %+v", es)
	}
}

func TestSendErrorsAreTheCommandsSentences(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"to": "Agent-7", "body": "x"}, "unknown agent \"Agent-7\"\nhint: the agents of this runtime are [Agent-1 Agent-2 Agent-3] and its people [human]"},
		{map[string]any{"to": "../human", "body": "x"}, "not a valid agent name"},
		{map[string]any{"to": "Agent-2", "body": " "}, "send: no message text"},
		{map[string]any{"to": "Agent-2", "body": "x", "priority": "asap"}, `unknown priority "asap"`},
	} {
		if got := fail(t, cs, "send", c.args); !strings.Contains(got, c.want) {
			t.Errorf("send(%v) failed with %q, want %q", c.args, got, c.want)
		}
	}
}

func TestSendWithAKeyDeliversOnce(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	args := map[string]any{"to": "Agent-2", "body": "deploy", "idempotency_key": "deploy-1"}
	var first, again SendOut
	call(t, cs, "send", args, &first)
	call(t, cs, "send", args, &again)
	if first.Repeated || !again.Repeated || len(first.IDs) != 1 || strings.Join(again.IDs, ",") != first.IDs[0] {
		t.Fatalf("first %+v, again %+v; want the first's id, repeated", first, again)
	}
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 1 || es[0].Message.ID != first.IDs[0] {
		t.Fatalf("Agent-2's inbox holds %+v, want the one message", es)
	}
	// The key is kept under the path layout names, and a new server (a
	// restarted client) finds it.
	keys, _ := filepath.Glob(filepath.Join(layout.MustFor(rt.Root, "Agent-1").SendKeys(), "*.json"))
	if len(keys) != 1 {
		t.Fatalf("key records %v, want one", keys)
	}
	call(t, connect(t, rt, "Agent-1"), "send", args, &again)
	if !again.Repeated || again.IDs[0] != first.IDs[0] {
		t.Errorf("after a restart: %+v, want %v repeated", again, first.IDs)
	}
	// Keys are the sender's own: another agent's same key is its own send.
	var other SendOut
	call(t, connect(t, rt, "Agent-3"), "send", args, &other)
	if other.Repeated || other.IDs[0] == first.IDs[0] {
		t.Errorf("Agent-3's send with Agent-1's key gave %+v", other)
	}
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 2 {
		t.Errorf("Agent-2's inbox holds %d messages, want 2", len(es))
	}
}

func TestConcurrentSendsWithOneKeyDeliverOnce(t *testing.T) {
	rt, _ := newRuntime(t)
	// The sends wait for one another at the keys lock: on the wall clock,
	// which moves while they wait, as a test's clock would not.
	rt.Clock = nil
	// Separate servers share the runtime as separate processes would.
	const n = 8
	sessions := make([]*sdk.ClientSession, n)
	for i := range sessions {
		sessions[i] = connect(t, rt, "Agent-1")
	}
	outs := make([]SendOut, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sessions[i].CallTool(context.Background(), &sdk.CallToolParams{Name: "send",
				Arguments: map[string]any{"to": "all", "body": "standup", "idempotency_key": "standup-26"}})
			if err != nil || res.IsError {
				errs[i] = "call failed"
				return
			}
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &outs[i])
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != "" || len(outs[i].IDs) != 2 || strings.Join(outs[i].IDs, ",") != strings.Join(outs[0].IDs, ",") {
			t.Errorf("call %d: %+v %s; call 0: %+v", i, outs[i], errs[i], outs[0])
		}
	}
	for _, who := range []string{"Agent-2", "Agent-3"} {
		if es := entries(t, rt, who, mailbox.StatePending); len(es) != 1 {
			t.Errorf("%s's inbox holds %d messages, want 1", who, len(es))
		}
	}
	if es := entries(t, rt, "Agent-1", mailbox.StatePending); len(es) != 0 {
		t.Errorf("the sender got its own message: %+v", es)
	}
}

func TestAKeyNamesOneSend(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	var out SendOut
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "one", "idempotency_key": "k"}, &out)
	msg := fail(t, cs, "send", map[string]any{"to": "Agent-2", "body": "two", "idempotency_key": "k"})
	if !strings.Contains(msg, `idempotency key "k" was used for another message`) {
		t.Errorf("a key reused for another message failed with %q", msg)
	}
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 1 {
		t.Errorf("Agent-2's inbox holds %d messages, want 1", len(es))
	}
}

func TestKeysAreKeptForTheirLifetime(t *testing.T) {
	rt, clk := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	args := map[string]any{"to": "Agent-2", "body": "weekly", "idempotency_key": "weekly"}
	var first, later, expired SendOut
	call(t, cs, "send", args, &first)
	clk.Advance(KeyLifetime - time.Minute)
	call(t, cs, "send", args, &later)
	if !later.Repeated || later.IDs[0] != first.IDs[0] {
		t.Errorf("within the lifetime: %+v, want %v repeated", later, first.IDs)
	}
	clk.Advance(2 * time.Minute)
	call(t, cs, "send", args, &expired)
	if expired.Repeated || expired.IDs[0] == first.IDs[0] {
		t.Errorf("after the lifetime: %+v, want a new send", expired)
	}
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 2 {
		t.Errorf("Agent-2's inbox holds %d messages, want 2", len(es))
	}
	// Expired records of other keys are pruned.
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "other", "idempotency_key": "other"}, &later)
	clk.Advance(KeyLifetime + time.Hour)
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "third", "idempotency_key": "third"}, &later)
	keys, _ := filepath.Glob(filepath.Join(layout.MustFor(rt.Root, "Agent-1").SendKeys(), "*.json"))
	if len(keys) != 1 {
		t.Errorf("key records %v, want only the new one", keys)
	}
}

// A call that stopped after keeping its key but before delivering (a
// crash) leaves a record without ids: the retry delivers its messages,
// once.
func TestRetryAfterACrashDelivers(t *testing.T) {
	rt, _ := newRuntime(t)
	s := &keyStore{dir: layout.MustFor(rt.Root, "Agent-1").SendKeys(), lock: layout.MustFor(rt.Root, "Agent-1").SendKeysLock(),
		lifetime: KeyLifetime, Clock: rt.Clock}
	in := SendIn{To: "Agent-2", Body: "after crash", IdempotencyKey: "c"}
	rec, err := s.claim(context.Background(), in.IdempotencyKey, fingerprint(in))
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, rt, "Agent-1")
	var out SendOut
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "after crash", "idempotency_key": "c"}, &out)
	if len(out.IDs) != 1 || out.IDs[0] != rec.idFor("Agent-2") {
		t.Errorf("retry gave %+v, want the id the record names, %s", out, rec.idFor("Agent-2"))
	}
	call(t, cs, "send", map[string]any{"to": "Agent-2", "body": "after crash", "idempotency_key": "c"}, &out)
	if es := entries(t, rt, "Agent-2", mailbox.StatePending); len(es) != 1 {
		t.Errorf("Agent-2's inbox holds %d messages, want 1", len(es))
	}
}

func TestInboxListsAndReadsTheCallersMessages(t *testing.T) {
	rt, _ := newRuntime(t)
	deliver(t, rt, mailbox.Message{ID: "m-1", From: "Agent-2", To: "Agent-1", Subject: "first", Body: "one", Priority: mailbox.Normal})
	deliver(t, rt, mailbox.Message{ID: "m-2", From: "human", To: "Agent-1", Subject: "urgent", Body: "two", Priority: mailbox.Urgent})
	deliver(t, rt, mailbox.Message{ID: "m-3", From: "Agent-1", To: "Agent-2", Body: "not yours", Priority: mailbox.Normal})
	cs := connect(t, rt, "Agent-1")
	var out InboxOut
	call(t, cs, "inbox", map[string]any{}, &out)
	if out.Agent != "Agent-1" || len(out.Messages) != 2 || out.Messages[0].ID != "m-2" || out.Messages[1].ID != "m-1" {
		t.Fatalf("inbox %+v, want m-2 then m-1", out)
	}
	call(t, cs, "inbox", map[string]any{"id": "m-1"}, &out)
	if len(out.Messages) != 1 || out.Messages[0].Body != "one" || out.Messages[0].State != mailbox.StatePending {
		t.Errorf("inbox m-1: %+v", out)
	}
	// A message an old writer appended to inbox.json is read as well.
	appended := `[{"message_id": "dream-7", "sender": "Agent-3", "recipient": "Agent-1", "content": "from Dream.OS"}]`
	if err := os.WriteFile(layout.MustFor(rt.Root, "Agent-1").InMailbox(layout.InboxJSON), []byte(appended), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "inbox", map[string]any{"id": "dream-7"}, &out)
	if len(out.Messages) != 1 || out.Messages[0].Body != "from Dream.OS" || out.Messages[0].From != "Agent-3" {
		t.Errorf("inbox dream-7: %+v", out)
	}
	// Another agent's message is not the caller's to read.
	if msg := fail(t, cs, "inbox", map[string]any{"id": "m-3"}); msg != "no message m-3 in Agent-1's mailbox" {
		t.Errorf("reading another's message failed with %q", msg)
	}
	if msg := fail(t, cs, "inbox", map[string]any{"agent": "Agent-2"}); !strings.Contains(msg, "additional properties") {
		t.Errorf("naming another inbox failed with %q", msg)
	}
}

func TestAnswerAPendingMessage(t *testing.T) {
	rt, _ := newRuntime(t)
	deliver(t, rt, mailbox.Message{ID: "q-1", From: "Agent-2", To: "Agent-1", Type: "question", Subject: "which branch",
		Body: "Which branch?", ThreadID: "th-9", TaskID: "T-3", Priority: mailbox.High})
	cs := connect(t, rt, "Agent-1")
	var out AnswerOut
	call(t, cs, "answer", map[string]any{"id": "q-1", "body": "main"}, &out)
	if out.To != "Agent-2" || !out.Archived || out.ID == "" {
		t.Errorf("answer gave %+v", out)
	}
	es := entries(t, rt, "Agent-2", mailbox.StatePending)
	if len(es) != 1 {
		t.Fatalf("Agent-2's inbox holds %+v", es)
	}
	a := es[0].Message
	if a.ID != out.ID || a.From != "Agent-1" || a.Type != "answer" || a.ReplyTo != "q-1" || a.ThreadID != "th-9" || a.TaskID != "T-3" || a.Subject != "Re: which branch" || a.Body != "main" {
		t.Errorf("the answer is %+v", a)
	}
	done := entries(t, rt, "Agent-1", mailbox.StateDone)
	if len(done) != 1 || done[0].Receipt == nil || done[0].Receipt.Outcome != "answered" {
		t.Errorf("the question was not archived as answered: %+v", done)
	}
	msg := fail(t, cs, "answer", map[string]any{"id": "q-1", "body": "release"})
	want := "q-1 was answered already (answer " + out.ID + "); a second answer would be a duplicate\nhint: to add something, write to its sender: agentctl send --to Agent-2 --reply-to q-1 TEXT"
	if msg != want {
		t.Errorf("a second answer failed with\n%q, want\n%q", msg, want)
	}
}

// The message the agent's runner is working on is answered too, and left
// where it is for the runner to settle.
func TestAnswerTheMessageInFlight(t *testing.T) {
	rt, _ := newRuntime(t)
	deliver(t, rt, mailbox.Message{ID: "q-2", From: "human", To: "Agent-1", Subject: "status?", Body: "How far?", Priority: mailbox.Normal})
	mb, err := mailbox.Open(rt.Root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := mb.Consume(actions.ConsumerOptions(rt.Config), start)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if cl, err := c.Claim(start); err != nil || cl == nil {
		t.Fatalf("claim: %v", err)
	}
	cs := connect(t, rt, "Agent-1")
	var out AnswerOut
	call(t, cs, "answer", map[string]any{"id": "q-2", "body": "half way"}, &out)
	if out.To != "human" || out.Archived {
		t.Errorf("answer gave %+v", out)
	}
	if es := entries(t, rt, "human", mailbox.StatePending); len(es) != 1 || es[0].Message.ReplyTo != "q-2" {
		t.Errorf("human's inbox holds %+v", es)
	}
	if es := entries(t, rt, "Agent-1", mailbox.StateProcessing); len(es) != 1 || es[0].Message.ID != "q-2" {
		t.Errorf("the message in flight moved: %+v", es)
	}
	if msg := fail(t, cs, "answer", map[string]any{"id": "q-2", "body": "again"}); !strings.Contains(msg, "q-2 was answered already") {
		t.Errorf("a second answer failed with %q", msg)
	}
}

func TestAnswerOnlyTheCallersMessages(t *testing.T) {
	rt, _ := newRuntime(t)
	deliver(t, rt, mailbox.Message{ID: "q-3", From: "human", To: "Agent-2", Body: "for Agent-2", Priority: mailbox.Normal})
	cs := connect(t, rt, "Agent-1")
	msg := fail(t, cs, "answer", map[string]any{"id": "q-3", "body": "I am not Agent-2"})
	if msg != "no message q-3 in Agent-1's mailbox\nhint: list what waits with 'agentctl inbox Agent-1'" {
		t.Errorf("answering another's message failed with %q", msg)
	}
	if es := entries(t, rt, "human", mailbox.StatePending); len(es) != 0 {
		t.Errorf("an answer was delivered: %+v", es)
	}
}

func TestReplyHumanWritesToThePerson(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-3")
	var out ReplyHumanOut
	call(t, cs, "reply_human", map[string]any{"body": "Which branch?", "subject": "rebase", "question": true, "task_id": "T-1"}, &out)
	es := entries(t, rt, "human", mailbox.StatePending)
	if out.To != "human" || len(es) != 1 || es[0].Message.ID != out.ID {
		t.Fatalf("reply_human gave %+v; human's inbox holds %+v", out, es)
	}
	if m := es[0].Message; m.From != "Agent-3" || m.Type != "question" || m.Subject != "rebase" || m.TaskID != "T-1" {
		t.Errorf("delivered %+v", m)
	}
	if msg := fail(t, cs, "reply_human", map[string]any{"body": " "}); msg != "send: no message text\nhint: give the text as arguments, or \"-\" to read it from stdin" {
		t.Errorf("an empty message failed with %q", msg)
	}
}

func TestBoardTools(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-1")
	var added BoardAddOut
	call(t, cs, "board_add", map[string]any{"title": "Make ingest lossless", "owner": "agent-2", "priority": "high"}, &added)
	if added.Task.ID != "T-1" || added.Task.Owner != "Agent-2" || added.Task.Status != "todo" || added.Task.Board != "board.yaml" {
		t.Errorf("board_add gave %+v", added.Task)
	}
	call(t, cs, "board_add", map[string]any{"title": "Second", "status": "in_progress"}, &added)
	var got BoardGetOut
	call(t, cs, "board_get", map[string]any{"id": "T-1"}, &got)
	if len(got.Tasks) != 1 || got.Tasks[0].Title != "Make ingest lossless" {
		t.Errorf("board_get T-1: %+v", got)
	}
	call(t, cs, "board_get", map[string]any{"status": "in_progress"}, &got)
	if len(got.Tasks) != 1 || got.Tasks[0].ID != "T-2" {
		t.Errorf("board_get in_progress: %+v", got)
	}
	var set BoardSetOut
	call(t, cs, "board_set", map[string]any{"id": "T-1", "set": map[string]any{"status": "done", "owner": "Agent-3", "notes": "a=b, kept"}}, &set)
	if set.Task.Status != "done" || set.Task.Owner != "Agent-3" || set.Task.Notes != "a=b, kept" {
		t.Errorf("board_set gave %+v", set.Task)
	}
	data, err := os.ReadFile(filepath.Join(layout.Boards(rt.Root), "board.yaml"))
	if err != nil || !strings.Contains(string(data), "status: done") {
		t.Errorf("board.yaml: %s %v", data, err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"board_set", map[string]any{"id": "T-1", "set": map[string]any{"colour": "red"}}, "board set: \"colour\" cannot be set\nhint: settable keys: status, owner, title, priority, notes, depends_on"},
		{"board_set", map[string]any{"id": "T-1", "set": map[string]any{}}, "board set: nothing to change"},
		{"board_set", map[string]any{"id": "T-1", "set": map[string]any{"owner": "Agent-9"}}, "cannot assign the task: unknown agent \"Agent-9\"\nhint: known agents: Agent-1, Agent-2, Agent-3"},
		{"board_set", map[string]any{"id": "T-9", "set": map[string]any{"status": "done"}}, "hint: run 'agentctl board list' to see the task ids"},
		{"board_get", map[string]any{"status": "finished"}, `status "finished" is not one of todo, in_progress, review, blocked, done`},
		{"board_add", map[string]any{"title": " "}, "board add: the task needs a title"},
		{"board_add", map[string]any{"title": "x", "board": "../escape"}, "must be a file name ending in .yaml"},
	} {
		if got := fail(t, cs, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s(%v) failed with %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

func TestDevlogAppendWritesTheCallersDevlog(t *testing.T) {
	rt, _ := newRuntime(t)
	cs := connect(t, rt, "Agent-2")
	var out DevlogAppendOut
	call(t, cs, "devlog_append", map[string]any{"text": "Parser done; starting on T-4"}, &out)
	if want := layout.MustFor(rt.Root, "Agent-2").Devlog(); out.Path != want {
		t.Errorf("noted in %s, want %s", out.Path, want)
	}
	es, err := devlog.ReadAgent(rt.Root, "Agent-2")
	if err != nil || len(es) != 1 || es[0].Note != "Parser done; starting on T-4" || es[0].Author != "Agent-2" || !es[0].Time.Equal(start) {
		t.Errorf("Agent-2's devlog: %+v %v", es, err)
	}
	if msg := fail(t, cs, "devlog_append", map[string]any{"text": "x", "agent": "Agent-1"}); !strings.Contains(msg, "additional properties") {
		t.Errorf("writing another's devlog failed with %q", msg)
	}
	if _, err := os.Stat(layout.MustFor(rt.Root, "Agent-1").Devlog()); !os.IsNotExist(err) {
		t.Errorf("Agent-1's devlog was written: %v", err)
	}
}

func TestStatusShowsEveryAgent(t *testing.T) {
	rt, _ := newRuntime(t)
	deliver(t, rt, mailbox.Message{ID: "m-1", From: "human", To: "Agent-2", Body: "x", Priority: mailbox.Normal})
	deliver(t, rt, mailbox.Message{ID: "q-1", From: "Agent-2", To: "human", Body: "?", Priority: mailbox.Normal})
	cs := connect(t, rt, "Agent-1")
	var out StatusOut
	call(t, cs, "status", map[string]any{}, &out)
	if len(out.Agents) != 3 || out.Agents[1].Agent != "Agent-2" || out.Agents[1].Pending != 1 || out.Agents[1].Runner != "stopped" {
		t.Errorf("status agents %+v", out.Agents)
	}
	if len(out.People) != 1 || out.People[0].Person != "human" || out.People[0].Waiting != 1 {
		t.Errorf("status people %+v", out.People)
	}
}
