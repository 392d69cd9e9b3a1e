package missioncontrol

import (
	"os"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/mailbox"
)

// A turn that runs too long changes no file: the feed judges it stalled at
// a liveness check, on its clock. The fake clock moves twenty minutes in a
// test that takes milliseconds.
func TestFeedJudgesAStallAtItsLivenessCheck(t *testing.T) {
	root, cfg := testRuntime(t, "Agent-1", "Agent-2")
	start := time.Now().UTC()
	clk := clocktest.New(start)
	mb, _ := mailbox.Open(root, "Agent-1")
	hb := mailbox.Status{PID: os.Getpid(), State: "working", Current: "m1", Subject: "build it", Since: start, StartedAt: start, UpdatedAt: start}
	hb.Host, _ = os.Hostname()
	if err := mb.WriteStatus(hb); err != nil {
		t.Fatal(err)
	}
	f := startFeedWith(t, root, cfg, FeedOptions{Clock: clk, Liveness: time.Minute, Rescan: time.Hour})

	stalled := func() bool { s, _, _, _ := f.Current(); return s.Agents[0].Stalled }
	<-clk.Sleeping()
	clk.Advance(time.Minute) // a liveness check one minute into the turn
	<-clk.Sleeping()         // ...done, and the loop asleep again
	if s, _, _, _ := f.Current(); s.Agents[0].Runner.Runner != "running" || stalled() {
		t.Fatalf("one minute in: %+v", s.Agents[0])
	}
	clk.Advance(cfg.StallAfter)
	await(t, f, "Agent-1 stalled", func(s Snapshot) bool { return s.Agents[0].Stalled })
}
