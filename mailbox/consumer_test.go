package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

var t0 = time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)

func TestDeliverStoresAnIDOnce(t *testing.T) {
	root := newRuntime(t, "Agent-3")
	mb := openMailbox(t, root, "Agent-3")
	msg := testMessage("msg_1", "Agent-3", Normal)
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	if err := mb.Deliver(msg); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second delivery: %v, want ErrDuplicate", err)
	}
	c := consume(t, mb, Options{}, t0)
	cl, err := c.Claim(t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Complete(cl, Receipt{Reply: "done"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := mb.Deliver(msg); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("delivery after archiving: %v, want ErrDuplicate", err)
	}
	if got := names(t, mb.path(InboxDir)); len(got) != 0 {
		t.Errorf("inbox holds %v after the duplicates", got)
	}
	if got := archivedIDs(t, mb); got["msg_1"] != 1 || len(got) != 1 {
		t.Errorf("archive = %v, want msg_1 once", got)
	}
}

func TestStemIsSafeAndOneToOne(t *testing.T) {
	ids := []string{"msg_1", "a/b", "../../etc/passwd", "x.progress", "{{uuid}}", strings.Repeat("z", 300), "ünï", "a_b", "a-b", ""}
	seen := map[string]string{}
	for _, id := range ids {
		s := Stem(id)
		if s == "" || strings.ContainsAny(s, `/\.`) || len(s) > 100 {
			t.Errorf("Stem(%q) = %q is not a safe file name", id, s)
		}
		if other, ok := seen[s]; ok {
			t.Errorf("Stem(%q) = Stem(%q) = %q", id, other, s)
		}
		seen[s] = id
	}
}

func TestClaimOrderPriorityThenAge(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	deliver := func(id string, p Priority, age time.Duration) {
		m := testMessage(id, "Agent-1", p)
		m.CreatedAt = t0.Add(-age)
		if err := mb.Deliver(m); err != nil {
			t.Fatal(err)
		}
	}
	deliver("low-old", Low, time.Hour)
	deliver("normal-new", Normal, time.Minute)
	deliver("normal-old", Normal, time.Hour)
	deliver("urgent-new", Urgent, 0)
	deliver("high", High, time.Minute)
	c := consume(t, mb, Options{}, t0)
	var order []string
	for {
		cl, err := c.Claim(t0)
		if errors.Is(err, ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Claim(t0); !errors.Is(err, ErrInFlight) {
			t.Fatalf("second claim while one is in flight: %v", err)
		}
		order = append(order, cl.Message.ID)
		if err := c.Complete(cl, Receipt{}, t0); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"urgent-new", "high", "normal-old", "normal-new", "low-old"}
	if !slices.Equal(order, want) {
		t.Errorf("claimed %v, want %v", order, want)
	}
}

func TestRetryBacksOffThenDeadletters(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("flaky", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{MaxAttempts: 3, Backoff: time.Minute}, t0)
	now := t0
	for attempt := 1; attempt <= 3; attempt++ {
		cl, err := c.Claim(now)
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if cl.Progress.Attempt != attempt {
			t.Errorf("attempt = %d, want %d", cl.Progress.Attempt, attempt)
		}
		dead, err := c.Retry(cl, errors.New("window not found"), now)
		if err != nil {
			t.Fatal(err)
		}
		if dead != (attempt == 3) {
			t.Fatalf("attempt %d: dead = %v", attempt, dead)
		}
		if dead {
			break
		}
		wait := time.Minute << (attempt - 1)
		if _, err := c.Claim(now.Add(wait - time.Second)); !errors.Is(err, ErrEmpty) {
			t.Fatalf("claimed %v before its backoff of %s ended", err, wait)
		}
		if due, ok := c.NextWake(); !ok || !due.Equal(now.Add(wait)) {
			t.Errorf("NextWake = %v %v, want %v", due, ok, now.Add(wait))
		}
		now = now.Add(wait)
	}
	dl := names(t, mb.path(DeadletterDir))
	if !slices.Equal(dl, []string{"flaky.json", "flaky.json.reason.txt"}) {
		t.Fatalf("deadletter = %v", dl)
	}
	reason, _ := os.ReadFile(mb.path(DeadletterDir, "flaky.json.reason.txt"))
	if !strings.Contains(string(reason), "failed 3 times; last error: window not found") {
		t.Errorf("reason = %s", reason)
	}
	if got := names(t, mb.path(ProcessingDir)); len(got) != 0 {
		t.Errorf("processing = %v", got)
	}
}

// TestPostponeCountsNoAttempt: a postponed message waits until its time
// with its meta as changed, and is never dead-lettered for waiting.
func TestPostponeCountsNoAttempt(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("note", "Agent-1", Low)); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{MaxAttempts: 1, Backoff: time.Minute}, t0)
	now := t0
	for i := 0; i < 3; i++ {
		cl, err := c.Claim(now)
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if cl.Progress.Attempt != 1 || cl.Message.LastError != "" {
			t.Errorf("claim %d: attempt %d, last error %q; want a first attempt", i, cl.Progress.Attempt, cl.Message.LastError)
		}
		if i > 0 && fmt.Sprint(cl.Message.Meta["waited"]) != fmt.Sprint(i) {
			t.Errorf("claim %d: meta %v, want the caller's change kept", i, cl.Message.Meta)
		}
		cl.Message.Meta = map[string]any{"waited": i + 1}
		if err := c.Postpone(cl, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Claim(now.Add(time.Hour - time.Second)); !errors.Is(err, ErrEmpty) {
			t.Fatalf("claimed %v before its time", err)
		}
		now = now.Add(time.Hour)
	}
	if got := names(t, mb.path(DeadletterDir)); len(got) != 0 {
		t.Errorf("deadletter = %v", got)
	}
}

func TestExpiredMessageIsDeadlettered(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	m := testMessage("stale", "Agent-1", Normal)
	exp := t0.Add(time.Minute)
	m.ExpiresAt = &exp
	if err := mb.Deliver(m); err != nil {
		t.Fatal(err)
	}
	c := consume(t, mb, Options{}, t0)
	if _, err := c.Claim(t0.Add(2 * time.Minute)); !errors.Is(err, ErrEmpty) {
		t.Fatalf("claimed an expired message: %v", err)
	}
	reason, err := os.ReadFile(mb.path(DeadletterDir, "stale.json.reason.txt"))
	if err != nil || !strings.Contains(string(reason), "expired") {
		t.Errorf("reason = %q, %v", reason, err)
	}
}

func TestSecondConsumerIsRefused(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	consume(t, mb, Options{}, t0)
	_, err := mb.Consume(Options{}, t0)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second consumer: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
}

// Each case leaves processing/ the way a consumer killed at that point
// would, and checks what the next consumer makes of it.
func TestRecoveryAfterCrash(t *testing.T) {
	steps := []struct {
		name      string
		crash     func(t *testing.T, c *Consumer, cl *Claim)
		archived  bool
		resumed   bool
		wantStage string
	}{
		{"after claim", func(t *testing.T, c *Consumer, cl *Claim) {}, false, true, StageClaimed},
		{"after a recorded step", func(t *testing.T, c *Consumer, cl *Claim) {
			cl.Progress.Data, cl.Progress.Version = json.RawMessage(`{"sent":true,"n":[1.5,{"k":"v"}]}`), 7
			if err := c.Record(cl, "submitted", t0); err != nil {
				t.Fatal(err)
			}
		}, false, true, "submitted"},
		{"before the progress record", func(t *testing.T, c *Consumer, cl *Claim) {
			os.Remove(c.processing(cl.stem, ProgressSuffix))
		}, false, true, StageClaimed},
		{"after the receipt", func(t *testing.T, c *Consumer, cl *Claim) {
			cl.Progress.Receipt = &Receipt{ID: cl.Message.ID, Reply: "r", CompletedAt: t0}
			if err := c.Record(cl, StageDone, t0); err != nil {
				t.Fatal(err)
			}
		}, true, false, ""},
		{"after archiving the message", func(t *testing.T, c *Consumer, cl *Claim) {
			cl.Progress.Receipt = &Receipt{ID: cl.Message.ID, Reply: "r", CompletedAt: t0}
			if err := c.Record(cl, StageDone, t0); err != nil {
				t.Fatal(err)
			}
			day := c.mb.path(ArchiveDir, t0.Format("2006-01-02"))
			os.MkdirAll(day, 0o755)
			if err := os.Rename(c.processing(cl.stem, ".json"), filepath.Join(day, cl.stem+".json")); err != nil {
				t.Fatal(err)
			}
		}, true, false, ""},
		{"after the archive rename", func(t *testing.T, c *Consumer, cl *Claim) {
			if err := c.Complete(cl, Receipt{Reply: "r"}, t0); err != nil {
				t.Fatal(err)
			}
			// put the record back as if the process died before removing it
			if err := c.appendProgress(cl, true); err != nil {
				t.Fatal(err)
			}
		}, true, false, ""},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			root := newRuntime(t, "Agent-1")
			mb := openMailbox(t, root, "Agent-1")
			if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
				t.Fatal(err)
			}
			c, err := mb.Consume(Options{Known: []string{"Agent-1"}}, t0)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := c.Claim(t0)
			if err != nil {
				t.Fatal(err)
			}
			step.crash(t, c, cl)
			c.Close() // the lock dies with the process

			c2 := consume(t, mb, Options{Known: []string{"Agent-1"}}, t0.Add(time.Minute))
			got, err := c2.Claim(t0.Add(time.Minute))
			if step.archived {
				if !errors.Is(err, ErrEmpty) {
					t.Fatalf("claim after recovery: %v, %v", got, err)
				}
				if a := archivedIDs(t, mb); a["m1"] != 1 {
					t.Fatalf("archive = %v", a)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !got.Resumed || got.Progress.Stage != step.wantStage || got.Progress.Attempt != 2 {
					t.Errorf("resumed claim: resumed=%v stage=%q attempt=%d", got.Resumed, got.Progress.Stage, got.Progress.Attempt)
				}
				if step.wantStage == "submitted" && (string(got.Progress.Data) != `{"sent":true,"n":[1.5,{"k":"v"}]}` || got.Progress.Version != 7) {
					t.Errorf("caller data lost: %s, version %d", got.Progress.Data, got.Progress.Version)
				}
				if err := c2.Complete(got, Receipt{}, t0); err != nil {
					t.Fatal(err)
				}
			}
			if p := names(t, mb.path(ProcessingDir)); len(p) != 0 {
				t.Errorf("processing/ still holds %v", p)
			}
		})
	}
}

func TestMessageThatKeepsCrashingIsDeadlettered(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("poison", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c, err := mb.Consume(Options{Known: []string{"Agent-1"}, MaxAttempts: 3}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Claim(t0); err != nil {
			t.Fatal(err)
		}
		c.Close() // "crash" with the message in flight
	}
	// The fourth consumer is handed it exhausted, to dead-letter telling
	// whom it tells, rather than work it again.
	c := consume(t, mb, Options{Known: []string{"Agent-1"}, MaxAttempts: 3}, t0)
	cl, err := c.Claim(t0)
	if err != nil || cl == nil || cl.Exhausted != "its consumer stopped 3 times while processing it" {
		t.Fatalf("claim: %+v, %v; want it exhausted", cl, err)
	}
	if err := c.Deadletter(cl, cl.Exhausted, t0); err != nil {
		t.Fatal(err)
	}
	reason, err := os.ReadFile(mb.path(DeadletterDir, "poison.json.reason.txt"))
	if err != nil || !strings.Contains(string(reason), "stopped 3 times") {
		t.Fatalf("reason = %q, %v", reason, err)
	}
}

// A consumer that lets go of its claim on purpose (a runner shutting
// down) costs the message no attempt, however often; one that dies
// without saying so costs one.
func TestLettingGoCostsNoAttempt(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	if err := mb.Deliver(testMessage("long", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	var attempts []int
	for i, letGo := range []bool{true, true, true, true, false, true} {
		c, err := mb.Consume(Options{Known: []string{"Agent-1"}, MaxAttempts: 3}, t0)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := c.Claim(t0)
		if err != nil || cl.Exhausted != "" {
			t.Fatalf("consumer %d: %+v, %v", i, cl, err)
		}
		attempts = append(attempts, cl.Progress.Attempt)
		if letGo {
			if err := c.LetGo(cl, t0); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	if want := []int{1, 1, 1, 1, 1, 2}; !slices.Equal(attempts, want) {
		t.Errorf("attempts %v, want %v", attempts, want)
	}
}

// Markers are links to a shared empty file; replacing that file (as when
// it runs out of links) must keep every earlier marker.
func TestSeenMarkersSurviveANewBase(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	if fresh, err := mb.markSeen("a"); !fresh || err != nil {
		t.Fatal(fresh, err)
	}
	if err := mb.newSeenBase(); err != nil {
		t.Fatal(err)
	}
	if fresh, err := mb.markSeen("b"); !fresh || err != nil {
		t.Fatal(fresh, err)
	}
	if fresh, err := mb.markSeen("b"); fresh || err != nil {
		t.Fatalf("marking twice: fresh=%v, %v", fresh, err)
	}
	if !mb.seen("a") || !mb.seen("b") || mb.seen("c") {
		t.Errorf("seen a=%v b=%v c=%v", mb.seen("a"), mb.seen("b"), mb.seen("c"))
	}
	if err := mb.Deliver(testMessage("a", "Agent-1", Normal)); !errors.Is(err, ErrDuplicate) {
		t.Errorf("delivering a marked id: %v", err)
	}
}

func TestBackoffDoublesUpToACap(t *testing.T) {
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{1, time.Minute}, {2, 2 * time.Minute}, {3, 4 * time.Minute}, {7, time.Hour}, {64, time.Hour}, {1000, time.Hour}} {
		if got := backoff(time.Minute, c.attempt); got != c.want {
			t.Errorf("backoff(1m, %d) = %s, want %s", c.attempt, got, c.want)
		}
	}
	if got := backoff(2*time.Hour, 5); got != 2*time.Hour {
		t.Errorf("a base above the cap is kept: got %s", got)
	}
}

func TestConsumerWaitOutlastsABriefHolder(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	first, err := mb.Consume(Options{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(t0)
	type result struct {
		c   *Consumer
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := mb.Consume(Options{ConsumerWait: 5 * time.Second, Clock: clk}, t0)
		got <- result{c, err}
	}()
	clk.BlockUntil(1) // the second waits on its clock for the lock
	clk.Advance(4 * time.Second)
	clk.BlockUntil(1)
	first.Close()
	clk.Advance(time.Second)
	second := <-got
	if second.err != nil {
		t.Fatalf("a consumer willing to wait was refused: %v", second.err)
	}
	defer second.c.Close()
	go func() {
		_, err := mb.Consume(Options{ConsumerWait: 50 * time.Millisecond, Clock: clk}, t0)
		got <- result{nil, err}
	}()
	clk.BlockUntil(1)
	clk.Advance(50 * time.Millisecond)
	var locked *LockedError
	if third := <-got; !errors.As(third.err, &locked) {
		t.Fatalf("a third consumer got %v, want a LockedError once its wait ran out", third.err)
	}
}

// A consumer that died between taking a message and marking its id let a
// second delivery of the id into inbox/; the next consumer works the
// message once and drops the copy.
func TestCopyDeliveredWhileUnmarkedIsDropped(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	msg := testMessage("twice", "Agent-1", Normal)
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	c, err := mb.Consume(Options{Known: []string{"Agent-1"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(t0); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// As if the claim had died before its marker: remove the marker and
	// deliver the id again.
	os.Remove(mb.path(SeenDir, "twice"))
	if err := mb.Deliver(msg); err != nil {
		t.Fatalf("the redelivery: %v", err)
	}
	c2 := consume(t, mb, Options{Known: []string{"Agent-1"}}, t0)
	if got := claimAll(t, c2, t0); !slices.Equal(got, []string{"twice"}) {
		t.Fatalf("claimed %v, want the message once", got)
	}
	if a := archivedIDs(t, mb); a["twice"] != 1 {
		t.Errorf("archive = %v", a)
	}
	if err := mb.Deliver(msg); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a third delivery: %v, want ErrDuplicate", err)
	}
}

// A consumer that stopped with a message in flight costs it an attempt,
// unless the next one is told the stop was the runtime's (Interrupted): a
// long fault then dead-letters nothing.
func TestInterruptedResumeCostsNoAttempt(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	interrupted := func(p Progress) bool { return p.ID == "m1" }
	attempts := []int{}
	for i, opts := range []Options{{MaxAttempts: 2}, {MaxAttempts: 2, Interrupted: interrupted}, {MaxAttempts: 2, Interrupted: interrupted}, {MaxAttempts: 2}} {
		c := consume(t, mb, opts, t0)
		cl, err := c.Claim(t0)
		if err != nil {
			t.Fatalf("consumer %d: %v", i, err)
		}
		attempts = append(attempts, cl.Progress.Attempt)
		c.Close() // stopped with m1 in flight
	}
	if want := []int{1, 1, 1, 2}; !slices.Equal(attempts, want) {
		t.Errorf("attempts %v, want %v", attempts, want)
	}
}
