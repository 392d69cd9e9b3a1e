package agents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// replyDriver answers every turn with reply(prompt); a non-nil error fails
// the turn after submission was recorded.
type replyDriver func(prompt string) (string, error)

func (d replyDriver) Run(ctx context.Context, t cursor.Turn) (string, error) {
	if t.OnStage != nil {
		if err := t.OnStage(cursor.StageSubmitted); err != nil {
			return "", err
		}
	}
	return d(t.Prompt)
}

// TestRunnerRetriesOnItsClock: a failed turn comes back only when the
// runner's clock reaches its backoff, with no sleeping in the test.
func TestRunnerRetriesOnItsClock(t *testing.T) {
	root := newRuntime(t, demoAgents)
	clock := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	var turns atomic.Int32
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		if turns.Add(1) == 1 {
			return "", errors.New("the chat did not answer")
		}
		return "done", nil
	}))
	s.Clock, s.Resend = clock, true
	// Longer than the test binary's -timeout: a backoff timed by the
	// wall clock would never come, and the test would fail.
	s.Consumer.Backoff = time.Hour
	// A beat comes due within the advance below: the loop wakes then,
	// looks, and goes to sleep again with the retry not yet due.
	s.Heartbeat = 10 * time.Second
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "work", CreatedAt: clock.Now()})
	poll.Until(t, "the failed message back in the inbox", func() bool {
		return turns.Load() == 1 && counts(t, root, "Agent-1").Pending == 1
	})
	select { // a sleep from before the advance says nothing
	case <-clock.Sleeping():
	default:
	}
	clock.Advance(time.Hour - time.Second)
	<-clock.Sleeping()
	if c := counts(t, root, "Agent-1"); turns.Load() != 1 || c.Done != 0 {
		t.Fatalf("before its backoff: %d turns, counts %+v", turns.Load(), c)
	}
	clock.Advance(time.Second)
	poll.Until(t, "the retry to complete", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if turns.Load() != 2 {
		t.Errorf("%d turns, want 2", turns.Load())
	}
}

// TestRunnerStartsOnEveryBadState starts a runner on a runtime where every
// kind of bad file is already waiting: it must start, dead-letter what
// cannot be used with a reason, and work what can.
func TestRunnerStartsOnEveryBadState(t *testing.T) {
	root := newRuntime(t, demoAgents)
	mb := filepath.Join(root, "agent_mailboxes", "Agent-2")
	write := func(rel, data string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inbox := "agent_mailboxes/Agent-2/inbox/"
	bad := map[string]string{
		"truncated.json": `{"from":"Agent-1","body":"trunc`,
		"null.json":      `null`,
		"number.json":    `42`,
		"string.json":    `"hello"`,
		"array.json":     `[{"from":"Agent-1","body":"a"}]`,
		"empty.json":     ``,
		"binary.json":    "\x00\x01\xff\xfe{",
		"nobody.json":    `{"from":"Agent-1","to":"Agent-9","body":"for nobody"}`,
		"other.json":     `{"from":"Agent-1","to":"Agent-3","body":"for Agent-3"}`,
		"notes.log":      "not a message", // *.txt and *.md with any text are messages
		"nobody.md":      "---\n\n",
		"broken.json":    `{"id":"tpl","from":"Agent-1","to":"Agent-2","type":"broken","body":"uses a broken template"}`,
	}
	for name, data := range bad {
		write(inbox+name, data)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(mb, "inbox", "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mb, "inbox", "folder.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(inbox+"good.json", `{"id":"good","from":"Agent-1","to":"Agent-2","body":"the one good message"}`)
	write("agent_mailboxes/Agent-2/inbox.json", `not json at all`)
	write("agent_mailboxes/Agent-2/processing/orphan.json", `{"id":"orphan","from":"Agent-1","to":"Agent-2","body":"left in flight"}`)
	write("agent_mailboxes/Agent-2/processing/gone.progress.jsonl", `{"id":"gone","stage":"claimed"}`+"\n{\"id\":\"go")
	write("agent_mailboxes/Agent-2/processing/torn.json", `{"id":"torn","from":"Agent-1","to":"Agent-2","body":"torn log"}`)
	write("agent_mailboxes/Agent-2/processing/torn.progress.jsonl", "{\"id\":\"torn\",\"stage\":\"claimed\",\"attempt\":1}\n{\"id\":\"to")
	write("agent_mailboxes/Agent-2/processing/garbage.json", "\x00garbage")
	write("agent_mailboxes/Agent-2/processing/junk", "junk")
	write("agent_mailboxes/Agent-2/archive/not-a-day/x.json", "junk")
	write("agent_mailboxes/Agent-2/archive/junk.txt", "junk")
	write("agent_mailboxes/Agent-2/deadletter/stray.json", "no reason beside it")
	write("agent_mailboxes/Agent-2/status.json", "{{{")
	write("agent_mailboxes/Agent-2/.seen/good/x", "a folder where a marker goes")
	write("locks/Agent-2.consumer.lock", "not a pid")
	write("project_board/broken.yaml", "tasks: [\n  - id: X\n    status: {")
	write("devlogs/Agent-2.md", "\x00\xff not a devlog\n")
	write("templates/broken.tmpl", "{{ .Nope ")

	s := testSettings(root, "Agent-2", demoAgents, replyDriver(func(string) (string, error) { return "ok", nil }))
	s.Consumer.Settle = time.Millisecond
	s.Log = logOnFailure(t)
	stop := startRunner(t, s)
	poll.Until(t, "the inbox to be worked through", func() bool {
		entries, _ := os.ReadDir(filepath.Join(mb, "inbox"))
		pending := 0
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				pending++
			}
		}
		c := counts(t, root, "Agent-2")
		// The inbox and processing/ are read one after the other: a retry
		// moving between them is in neither. The broken template's
		// message, retried to its end, is dead-lettered last of all.
		tplDead, _ := filepath.Glob(filepath.Join(mb, "deadletter", "*tpl.json"+mailbox.ReasonSuffix))
		if pending != 0 || c.Processing != 0 {
			proc, _ := os.ReadDir(filepath.Join(mb, "processing"))
			t.Logf("inbox %v, processing %v, counts %+v", entries, proc, c)
		}
		return pending == 0 && c.Processing == 0 && len(tplDead) == 1
	})
	if err := stop(); err != nil {
		t.Fatalf("runner: %v", err)
	}
	for _, id := range []string{"good", "orphan", "torn"} {
		if _, err := os.Stat(archived(t, mb, id)); err != nil {
			t.Errorf("%s was not archived: %v", id, err)
		}
	}
	dead, err := os.ReadDir(filepath.Join(mb, "deadletter"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, e := range dead {
		if r, ok := strings.CutSuffix(e.Name(), mailbox.ReasonSuffix); ok {
			reasons[r] = true
		}
	}
	for name := range bad {
		if !hasSuffixIn(reasons, name) && name != "broken.json" {
			t.Errorf("%s is not in deadletter/ with a reason (dead letters: %v)", name, reasons)
		}
	}
	for _, name := range []string{"link.json", "folder.json", "inbox.json", "tpl.json", "garbage.json", "junk"} {
		if !hasSuffixIn(reasons, name) {
			t.Errorf("%s is not in deadletter/ with a reason (dead letters: %v)", name, reasons)
		}
	}
}

// archived finds where id's message is archived, on whatever day.
func archived(t *testing.T, mb, id string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(mb, "archive", "*", mailbox.Stem(id)+".json"))
	if len(matches) != 1 {
		return filepath.Join(mb, "archive", "?", id)
	}
	return matches[0]
}

func hasSuffixIn(set map[string]bool, suffix string) bool {
	for k := range set {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// TestRunnerRecreatesRemovedFolders: folders removed under an idle runner
// are recreated and the next message is worked, instead of a silent stall.
func TestRunnerRecreatesRemovedFolders(t *testing.T) {
	for _, dir := range []string{mailbox.ProcessingDir, mailbox.InboxDir, mailbox.ArchiveDir, mailbox.DeadletterDir, mailbox.SeenDir} {
		t.Run(dir, func(t *testing.T) {
			root := newRuntime(t, demoAgents)
			mb := filepath.Join(root, "agent_mailboxes", "Agent-1")
			startRunner(t, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "ok", nil })))
			deliverTo(t, root, mailbox.Message{ID: "first", From: "Agent-2", To: "Agent-1", Body: "one"})
			poll.Until(t, "the first message", func() bool { return counts(t, root, "Agent-1").Done == 1 })
			if err := os.RemoveAll(filepath.Join(mb, dir)); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, dir+"/ to be recreated", func() bool {
				_, err := os.Stat(filepath.Join(mb, dir))
				return err == nil
			})
			deliverTo(t, root, mailbox.Message{ID: "second", From: "Agent-2", To: "Agent-1", Body: "two"})
			poll.Until(t, "the second message", func() bool {
				_, err := os.Stat(archived(t, mb, "second"))
				return err == nil
			})
		})
	}
}

// TestRunnerStopsWhenItsMailboxIsRemoved: with the whole mailbox gone
// there is nothing to repair; the runner stops and says why.
func TestRunnerStopsWhenItsMailboxIsRemoved(t *testing.T) {
	root := newRuntime(t, demoAgents)
	r, err := New(testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	poll.Until(t, "the runner to start", func() bool {
		st, err := r.mb.ReadStatus()
		return err == nil && st.State == "idle"
	})
	// The runner may be writing its heartbeat meanwhile.
	poll.Until(t, "the mailbox to be removed", func() bool {
		return os.RemoveAll(filepath.Join(root, "agent_mailboxes", "Agent-1")) == nil
	})
	// A runner that goes on without its mailbox hangs here until -timeout.
	if err := <-done; err == nil || !strings.Contains(err.Error(), "was removed") {
		t.Errorf("runner stopped with %v, want it to say the mailbox was removed", err)
	}
}
