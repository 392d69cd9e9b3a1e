package missioncontrol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/cost"
	"github.com/agentctl/agentctl/agents/missioncontrol/verdict"
	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

func TestJudgeTellsRunningStalledGoneAndElsewhere(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	alive := func(pid int, start uint64) bool { return pid == 100 && (start == 0 || start == 7) }
	st := func(pid int, host, state string, since time.Duration) mailbox.Status {
		return mailbox.Status{PID: pid, Host: host, State: state, Since: now.Add(-since), UpdatedAt: now, Current: "m1", Subject: "s"}
	}
	reused := st(100, "h", "working", time.Minute)
	reused.PIDStart = 8
	beatLong := func(s mailbox.Status) mailbox.Status { s.UpdatedAt = now.Add(-3 * time.Minute); return s }
	for _, c := range []struct {
		name       string
		st         mailbox.Status
		err        error
		runner     string
		state      string
		stalled    bool
		hasCurrent bool
	}{
		{"no heartbeat", mailbox.Status{}, fs.ErrNotExist, "stopped", "-", false, false},
		{"idle", st(100, "h", "idle", time.Minute), nil, "running", "idle", false, true},
		{"a short turn", st(100, "h", "working", time.Minute), nil, "running", "working", false, true},
		{"a turn past stall_after", st(100, "h", "working", time.Hour), nil, "running", "working", true, true},
		{"rate-limited", st(100, "h", "rate-limited", time.Hour), nil, "running", "rate-limited", false, true},
		{"a dead pid", st(200, "h", "working", time.Hour), nil, "gone", "working (pid gone)", false, false},
		{"stopped cleanly", st(200, "h", "stopped", 0), nil, "stopped", "stopped", false, false},
		{"another host", st(200, "other", "working", time.Hour), nil, "elsewhere", "working", false, false},
		{"a pid another process took", reused, nil, "gone", "working (pid gone)", false, false},
	} {
		r := verdict.Judge(c.st, c.err, "h", now, 20*time.Minute, 2*time.Minute, alive)
		if r.Runner != c.runner || r.State != c.state || r.Stalled != c.stalled || (r.Current != "") != c.hasCurrent || r.Silent != "" {
			t.Errorf("%s: got %+v", c.name, r)
		}
	}
	// A runner that seems up, here or elsewhere, but has not beaten for
	// longer than stale_after is silent; one stopped cleanly is not.
	for _, s := range []mailbox.Status{beatLong(st(100, "h", "idle", time.Minute)), beatLong(st(200, "other", "working", time.Hour))} {
		if r := verdict.Judge(s, nil, "h", now, 20*time.Minute, 2*time.Minute, alive); r.Silent != "no heartbeat for 3m0s" {
			t.Errorf("a heartbeat 3m old on %s: silent %q", s.Host, r.Silent)
		}
	}
	if r := verdict.Judge(beatLong(st(200, "h", "stopped", 0)), nil, "h", now, 20*time.Minute, 2*time.Minute, alive); r.Silent != "" {
		t.Errorf("a stopped runner is silent: %+v", r)
	}
	if r := verdict.Judge(mailbox.Status{}, errors.New("cannot read status.json: bad"), "h", now, time.Minute, time.Minute, alive); r.StatusProblem == "" {
		t.Errorf("an unreadable heartbeat: %+v", r)
	}
}

// TestJudgeCountsWhatDidNotEndPlainlyDone: the running runner's counters
// of messages done with errors and without block are its own; the run of
// replies without the block outlives it.
func TestJudgeCountsWhatDidNotEndPlainlyDone(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	st := mailbox.Status{PID: 100, Host: "h", State: "idle", UpdatedAt: now,
		Counters: map[string]int{"done": 7, "done with errors": 2, "done without block": 4}, NoBlock: mailbox.Streak{Turns: 3, First: "m1"}}
	r := verdict.Judge(st, nil, "h", now, time.Minute, time.Minute, func(int, uint64) bool { return true })
	if r.DoneWithErrors != 2 || r.DoneWithoutBlock != 4 || r.NoBlockRun != 3 {
		t.Errorf("a running runner: %+v, want 2 with errors, 4 without block, a run of 3", r)
	}
	st.State = "stopped"
	r = verdict.Judge(st, nil, "h", now, time.Minute, time.Minute, func(int, uint64) bool { return false })
	if r.DoneWithErrors != 0 || r.DoneWithoutBlock != 0 || r.NoBlockRun != 3 {
		t.Errorf("a stopped runner: %+v, want no counters, the run of 3", r)
	}
}

// runtime makes a runtime with mailboxes for agents and a person, the
// configuration that names them, and a board with one task.
func testRuntime(t *testing.T, agents ...string) (string, Settings) {
	t.Helper()
	root := t.TempDir()
	cfg := Settings{Agents: agents, People: []string{"human"}, StallAfter: 20 * time.Minute, ConfigFile: "agentctl.yaml"}
	for _, name := range cfg.mailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(projectboard.Dir(root), 0o755)
	board := "tasks:\n  - id: T-1\n    title: First task\n    status: todo\n    owner: Agent-1\n"
	if err := os.WriteFile(filepath.Join(projectboard.Dir(root), "board.yaml"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, cfg
}

func startFeed(t *testing.T, root string, cfg Settings) *Feed {
	t.Helper()
	return startFeedWith(t, root, cfg, FeedOptions{})
}

// startFeedWith runs a feed with opts until the test ends.
func startFeedWith(t *testing.T, root string, cfg Settings, opts FeedOptions) *Feed {
	t.Helper()
	f, err := NewFeed(root, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// await waits for a snapshot for which cond holds, looking again only when
// the feed says it changed: a feed that changes its snapshot unsaid, or
// never gets there, hangs the test until -timeout. Meanwhile it says now
// and then what it waits for, and the snapshot it has, as poll.Until does.
func await(t *testing.T, f *Feed, what string, cond func(Snapshot) bool) Snapshot {
	t.Helper()
	for {
		s, _, _, changed := f.Current()
		if cond(s) {
			return s
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			msg := fmt.Sprintf("%s: still waiting for %s; snapshot: %+v", t.Name(), what, s)
			t.Log(msg)
			fmt.Fprintln(os.Stderr, msg)
		}
	}
}

func TestFeedFollowsATurnFromItsFileEvents(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1", "Agent-2")
	f := startFeed(t, root, cfg)
	s, _, seq, _ := f.Current()
	if len(s.Agents) != 2 || len(s.People) != 1 || s.Columns[0].Tasks[0].ID != "T-1" {
		t.Fatalf("first snapshot: %+v", s)
	}

	mb, _ := mailbox.Open(root, "Agent-1")
	now := time.Now().UTC()
	msg := mailbox.Message{ID: mailbox.NewID(now), From: "human", To: "Agent-1", Type: "task", Priority: mailbox.Urgent, Subject: "build it", Body: "b", CreatedAt: now, TaskID: "T-1"}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	await(t, f, "the urgent message queued", func(s Snapshot) bool { return s.Agents[0].Queue["urgent"] == 1 })

	// A runner's claim and heartbeat, written as a runner writes them.
	c, err := mb.Consume(mailbox.Options{Known: cfg.mailboxNames()}, now)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Scan(now); err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(now)
	if err != nil {
		t.Fatal(err)
	}
	hb := mailbox.Status{PID: os.Getpid(), State: "working", Current: msg.ID, Subject: msg.Subject, Since: now, StartedAt: now, UpdatedAt: now}
	hb.Host, _ = os.Hostname()
	if err := mb.WriteStatus(hb); err != nil {
		t.Fatal(err)
	}
	s = await(t, f, "Agent-1 working", func(s Snapshot) bool {
		a := s.Agents[0]
		return a.State == "working" && a.Subject == "build it" && a.Processing == 1 && a.Pending == 0
	})
	if a := s.Agents[0]; a.Runner.Runner != "running" || a.Since == nil || a.Stalled {
		t.Errorf("a fresh turn: %+v", a)
	}

	// The turn ends: archived, devlog entry, board change, a message on.
	if err := c.Complete(cl, mailbox.Receipt{Outcome: "done"}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	hb.State, hb.Current, hb.Subject, hb.Since = "idle", "", "", now.Add(time.Second)
	if err := mb.WriteStatus(hb); err != nil {
		t.Fatal(err)
	}
	if err := devlog.Append(root, devlog.Entry{Time: now, Agent: "Agent-1", MessageID: msg.ID, Subject: "build it", Outcome: "done"}); err != nil {
		t.Fatal(err)
	}
	store := &projectboard.Store{Root: root}
	if _, err := store.Update(context.Background(), "T-1", func(t *projectboard.Task) error { t.Status = "review"; return nil }); err != nil {
		t.Fatal(err)
	}
	mb2, _ := mailbox.Open(root, "Agent-2")
	next := mailbox.Message{ID: mailbox.NewID(now), From: "Agent-1", To: "Agent-2", Subject: "review it", Body: "b", CreatedAt: now.Add(time.Second), ThreadID: msg.ID, ReplyTo: msg.ID, TaskID: "T-1"}
	if err := mb2.Deliver(next); err != nil {
		t.Fatal(err)
	}
	s = await(t, f, "the turn's end everywhere", func(s Snapshot) bool {
		a := s.Agents[0]
		return a.State == "idle" && a.Done == 1 && a.LastLog == "done: build it" && s.Agents[1].Pending == 1 &&
			len(s.Columns[2].Tasks) == 1 && len(s.Threads) == 1
	})
	th := s.Threads[0]
	if th.ID != msg.ID || len(th.Hops) != 2 || th.Hops[0].Outcome != "done" || th.Hops[0].CompletedAt == nil || th.Hops[1].To != "Agent-2" {
		t.Errorf("thread: %+v", th)
	}
	if task := s.Columns[2].Tasks[0]; task.ID != "T-1" || len(task.Messages) != 2 {
		t.Errorf("T-1 in review with its messages: %+v", task)
	}
	_, _, last, _ := f.Current()
	if last <= seq {
		t.Errorf("sequence did not advance: %d then %d", seq, last)
	}
}

// TestALetterShowsItsOutcomeAndTheDriversNotes: a message archived "done
// without block" shows so on the board's task, with the driver's notes
// from its receipt.
func TestALetterShowsItsOutcomeAndTheDriversNotes(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1")
	mb, _ := mailbox.Open(root, "Agent-1")
	now := time.Now().UTC()
	msg := mailbox.Message{ID: mailbox.NewID(now), From: "human", To: "Agent-1", Subject: "do T-1", Body: "b", CreatedAt: now, TaskID: "T-1"}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	pending, err := mb.List(mailbox.StatePending)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %v %v", pending, err)
	}
	note := "the reply was read from the page's rendering: the app's copy of it could not be had"
	data, err := receipt.Encode(receipt.Data{DriverNotes: []string{note}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mb.Settle(pending[0], mailbox.Receipt{Outcome: "done without block", Data: data}, now); err != nil {
		t.Fatal(err)
	}
	s := NewReader(root, cfg).Read(Changed{All: true}, now)
	msgs := s.Columns[0].Tasks[0].Messages
	if len(msgs) != 1 || msgs[0].Outcome != "done without block" || len(msgs[0].Notes) != 1 || msgs[0].Notes[0] != note {
		t.Errorf("T-1's messages %+v, want the one done without block, with the driver's note", msgs)
	}
}

func TestAHeartbeatAloneChangesNothingShown(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1")
	mb, _ := mailbox.Open(root, "Agent-1")
	hb := mailbox.Status{PID: os.Getpid(), State: "idle", Since: time.Now(), StartedAt: time.Now(), UpdatedAt: time.Now()}
	hb.Host, _ = os.Hostname()
	if err := mb.WriteStatus(hb); err != nil {
		t.Fatal(err)
	}
	r := NewReader(root, cfg)
	before, _ := json.Marshal(r.Read(Changed{All: true}, time.Now()))
	hb.UpdatedAt = hb.UpdatedAt.Add(5 * time.Second) // an idle runner's heartbeat: only updated_at changes
	if err := mb.WriteStatus(hb); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(r.Read(Changed{Status: one("Agent-1")}, time.Now()))
	if string(before) != string(after) {
		t.Errorf("a heartbeat changed the snapshot, so every viewer would get it again:\n%s\n%s", before, after)
	}
}

func TestFeedWatchesAFolderRemovedAndMadeAgain(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1")
	f := startFeed(t, root, cfg)
	mb, _ := mailbox.Open(root, "Agent-1")
	inbox := filepath.Join(mb.Dir, mailbox.InboxDir)
	if err := os.RemoveAll(inbox); err != nil {
		t.Fatal(err)
	}
	await(t, f, "the broken mailbox", func(s Snapshot) bool { return s.Agents[0].Problem != "" })
	if _, err := mb.Repair(); err != nil { // as a runner does
		t.Fatal(err)
	}
	await(t, f, "the mended mailbox", func(s Snapshot) bool { return s.Agents[0].Problem == "" })
	msg := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "human", To: "Agent-1", Body: "b", CreatedAt: time.Now()}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	await(t, f, "the message in the new inbox", func(s Snapshot) bool { return s.Agents[0].Pending == 1 })
}

// A turn's cost written to the ledger, the folder made by the first one,
// shows on its agent's tile and in the swarm's day.
func TestFeedShowsWhatTurnsCost(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1", "Agent-2")
	f := startFeed(t, root, cfg)
	if s, _, _, _ := f.Current(); s.Spent.Turns != 0 || s.Agents[0].TodayBrief != "-" {
		t.Fatalf("before any turn: %+v, %q", s.Spent, s.Agents[0].TodayBrief)
	}
	now := time.Now()
	if err := cost.Append(root, cost.Turn{Time: now, Agent: "Agent-1", Model: "m", Usage: cost.Usage{InputTokens: 900}, CostUSD: 0.25, PricedBy: cost.PricedByAgent}); err != nil {
		t.Fatal(err)
	}
	await(t, f, "the first turn's cost", func(s Snapshot) bool { return s.Agents[0].TodayBrief == "$0.25" })
	if err := cost.Append(root, cost.Turn{Time: now, Agent: "Agent-2", Model: "m", Usage: cost.Usage{OutputTokens: 1200}}); err != nil {
		t.Fatal(err)
	}
	s := await(t, f, "the second, unpriced", func(s Snapshot) bool { return s.Agents[1].TodayBrief == "1.2k tok" })
	if s.Spent.Turns != 2 || s.Spent.Unpriced != 1 || s.Spent.CostUSD != 0.25 {
		t.Errorf("the swarm's day: %+v", s.Spent)
	}
	top := (&Terminal{snap: s, Clock: clock.System}).View()
	if !strings.Contains(top, "today (UTC): 2 turns, 2.1k tokens, $0.25+1 unpriced") {
		t.Errorf("top shows no day's spending:\n%s", top)
	}
}
