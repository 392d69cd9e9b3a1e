package agents

import (
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// A turn's heartbeat and skip watch tick on the runner's clock: never before
// the interval has passed on it, once each time it has.
func TestDuringTicksOnItsClock(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	ticks := make(chan time.Time, 10)
	stop := during(clk, time.Minute, func() bool { ticks <- clk.Now(); return false })
	defer stop()
	<-clk.Sleeping()
	clk.Advance(59 * time.Second)
	select {
	case at := <-ticks:
		t.Fatalf("ticked at %v, before its interval", at)
	default:
	}
	clk.Advance(time.Second)
	first := <-ticks
	<-clk.Sleeping()
	clk.Advance(time.Hour) // one tick for a long jump, not sixty
	second := <-ticks
	if got := second.Sub(first); got != time.Hour {
		t.Errorf("the second tick came %s after the first, want 1h", got)
	}
	<-clk.Sleeping()
	if n := len(ticks); n != 0 {
		t.Errorf("%d more ticks after the jump", n)
	}
}
