package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

func testRecovery(root string, agents []string) *Recovery {
	return &Recovery{
		S: RecoverySettings{Lease: 10 * time.Minute, StaleAfter: 2 * time.Minute, StallAfter: 20 * time.Minute,
			Supervisor: "Agent-3", Nudge: "RESUME: carry on with your task."},
		Root: root, Agents: agents, Consumer: mailbox.Options{Known: agents}, Log: testLog(),
	}
}

// claimAndAbandon claims msg for agent and closes the consumer without
// settling it, as a runner killed mid-turn leaves it; submitted also
// records that the prompt was submitted.
func claimAndAbandon(t *testing.T, root, agent string, m mailbox.Message, at time.Time, submitted bool) {
	t.Helper()
	deliverTo(t, root, m)
	mb, _ := mailbox.Open(root, agent)
	c, err := mb.Consume(mailbox.Options{Known: demoAgents}, at)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(at)
	if err != nil {
		t.Fatal(err)
	}
	if submitted {
		if err := c.Record(cl, stageSubmit, at); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
}

// TestRequeueAfterLease: a claim whose runner is gone goes back to the
// inbox once its lease has passed, not before; a submitted one is left for
// a runner to resume. Time is stepped, never slept through.
func TestRequeueAfterLease(t *testing.T) {
	root := newRuntime(t, demoAgents)
	t0 := time.Now()
	claimAndAbandon(t, root, "Agent-1", mailbox.Message{ID: "m-lost", From: "Agent-2", To: "Agent-1", Body: "x"}, t0, false)
	claimAndAbandon(t, root, "Agent-2", mailbox.Message{ID: "m-sent", From: "Agent-1", To: "Agent-2", Body: "y"}, t0, true)
	rc := testRecovery(root, demoAgents)

	found, err := rc.Requeue(t0.Add(9 * time.Minute))
	if err != nil || len(found) != 0 {
		t.Fatalf("before the lease: %v, %v; want nothing done", found, err)
	}
	if c := counts(t, root, "Agent-1"); c.Processing != 1 {
		t.Fatalf("Agent-1 before the lease: %+v", c)
	}

	found, err = rc.Requeue(t0.Add(11 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range found {
		kinds[f.ID] = f.Kind
	}
	if kinds["m-lost"] != "requeued" || kinds["m-sent"] != "waiting-for-resume" {
		t.Fatalf("after the lease: %v", found)
	}
	if c := counts(t, root, "Agent-1"); c.Processing != 0 || c.Pending != 1 {
		t.Errorf("Agent-1 after requeue: %+v, want the message back in the inbox", c)
	}
	if c := counts(t, root, "Agent-2"); c.Processing != 1 {
		t.Errorf("Agent-2: %+v, want the submitted claim left for a runner", c)
	}

	// A live runner owns its claim: nothing is taken from it.
	mb, _ := mailbox.Open(root, "Agent-2")
	c, err := mb.Consume(mailbox.Options{Known: demoAgents}, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if found, err := rc.Requeue(t0.Add(time.Hour)); err != nil || len(found) != 0 {
		t.Errorf("with a live consumer: %v, %v; want nothing done", found, err)
	}
}

func writeStatus(t *testing.T, root, agent string, st mailbox.Status) {
	t.Helper()
	mb, _ := mailbox.Open(root, agent)
	if err := mb.WriteStatus(st); err != nil {
		t.Fatal(err)
	}
	// WriteStatus stamps nothing itself; the test sets UpdatedAt.
	data, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.StatusJSON))
	var back mailbox.Status
	if json.Unmarshal(data, &back) != nil || !back.UpdatedAt.Equal(st.UpdatedAt) {
		t.Fatalf("status.json did not keep updated_at")
	}
}

// TestStallDetection: a stale heartbeat and a turn past stall_after while
// work waits are each told once to the supervisor and the devlog, and
// nudged; a fresh heartbeat and a stopped runner are not stalls.
func TestStallDetection(t *testing.T) {
	root := newRuntime(t, demoAgents)
	t0 := time.Now().UTC()
	// Agent-1: its runner's heartbeat stopped at t0.
	writeStatus(t, root, "Agent-1", mailbox.Status{PID: 999999, State: "idle", UpdatedAt: t0})
	// Agent-2: a fresh heartbeat, but its turn started at t0 and work waits.
	claimAndAbandon(t, root, "Agent-2", mailbox.Message{ID: "m-long", From: "Agent-1", To: "Agent-2", Body: "long"}, t0, true)
	deliverTo(t, root, mailbox.Message{ID: "m-waiting", From: "Agent-1", To: "Agent-2", Body: "waits"})
	// Agent-3 stopped cleanly long ago.
	writeStatus(t, root, "Agent-3", mailbox.Status{PID: 999998, State: "stopped", UpdatedAt: t0.Add(-time.Hour)})
	rc := testRecovery(root, demoAgents)

	at := t0.Add(time.Minute)
	writeStatus(t, root, "Agent-2", mailbox.Status{PID: os.Getpid(), State: "working", Current: "m-long", UpdatedAt: at})
	if found, err := rc.Stalls(at); err != nil || len(found) != 0 {
		t.Fatalf("one minute in: %v, %v; want no stall", found, err)
	}

	at = t0.Add(21 * time.Minute)
	writeStatus(t, root, "Agent-2", mailbox.Status{PID: os.Getpid(), State: "working", Current: "m-long", UpdatedAt: at})
	for range 3 { // the cron runs again and again: one notice per stall
		found, err := rc.Stalls(at)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 2 || found[0].Kind != "stale-heartbeat" || found[1].Kind != "stalled-turn" || found[1].ID != "m-long" {
			t.Fatalf("21 minutes in: %v", found)
		}
		at = at.Add(30 * time.Second)
	}
	sup, _ := mailbox.Open(root, "Agent-3")
	notices, _ := sup.List(mailbox.StatePending)
	if len(notices) != 2 {
		t.Fatalf("supervisor got %d notices, want 2: %v", len(notices), notices)
	}
	for _, n := range notices {
		if n.Message.Type != "recovery" || !strings.Contains(n.Message.Subject, "looks stalled") {
			t.Errorf("notice %+v", n.Message)
		}
	}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		es := devlogOf(t, root, a)
		if len(es) != 1 || es[0].Outcome != "stalled" {
			t.Errorf("%s devlog: %+v, want one stalled entry", a, es)
		}
		mb, _ := mailbox.Open(root, a)
		pending, _ := mb.List(mailbox.StatePending)
		nudged := 0
		for _, p := range pending {
			if p.Message.Type == "resume" && p.Message.Priority == mailbox.Urgent {
				nudged++
			}
		}
		if nudged != 1 {
			t.Errorf("%s got %d nudges, want 1", a, nudged)
		}
	}
}

// TestScheduleSteppedClock: cron specs fire at their times as the clock
// is stepped, once each however late the runner looks.
func TestScheduleSteppedClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := NewSchedule(t0)
	var ran []string
	for _, j := range []struct{ name, spec string }{{"stall", "*/30 * * * * *"}, {"requeue", "@every 1m"}} {
		name := j.name
		if err := s.Add(name, j.spec, func(now time.Time) error { ran = append(ran, name+"@"+now.Format("04:05")); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add("bad", "every minute", nil); err == nil {
		t.Error("a bad spec was accepted")
	}
	if next, _ := s.Next(); !next.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("next = %v", next)
	}
	for _, d := range []time.Duration{10 * time.Second, 30 * time.Second, 60 * time.Second, 5 * time.Minute} {
		s.RunDue(t0.Add(d))
	}
	want := "stall@00:30 stall@01:00 requeue@01:00 stall@05:00 requeue@05:00"
	if got := strings.Join(ran, " "); got != want {
		t.Errorf("ran %s, want %s", got, want)
	}
}

// TestExpireTakesInInboxJSONOfIdleMailboxes: a check that opens a mailbox
// whose runner is not up takes in what waits in its inbox.json, as the
// runner's start would, and dead-letters what expired there; what it took
// in is among its findings, so a reconcile that did it says so.
func TestExpireTakesInInboxJSONOfIdleMailboxes(t *testing.T) {
	root := newRuntime(t, demoAgents)
	mb, _ := mailbox.Open(root, "Agent-2")
	now := time.Now()
	past := now.Add(-time.Hour).UTC().Format(time.RFC3339)
	inboxJSON := `[{"id": "waiting", "from": "Agent-1", "to": "Agent-2", "body": "x"},
		{"id": "too-late", "from": "Agent-1", "to": "Agent-2", "body": "y", "expires_at": "` + past + `"}]`
	if err := os.WriteFile(filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(inboxJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := testRecovery(root, demoAgents).Expire(now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.Kind+" "+f.ID)
	}
	if want := []string{"ingested waiting", "ingested too-late", "expired too-late"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("found %q; want %q", got, want)
	}
	if c := counts(t, root, "Agent-2"); c.Pending != 1 || c.Dead != 1 {
		t.Errorf("Agent-2 holds %+v; want waiting pending in inbox/ and too-late dead", c)
	}
	pending, err := mb.List(mailbox.StatePending)
	if err != nil || len(pending) != 1 || pending[0].File != mailbox.InboxDir+"/waiting.json" {
		t.Errorf("pending %+v, %v; want waiting taken out of inbox.json into inbox/", pending, err)
	}
}
