package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// A context made by WithTimeout ends when its clock, not the wall clock,
// passes the timeout.
func TestWithTimeoutEndsOnItsClock(t *testing.T) {
	c := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	ctx, cancel := clock.WithTimeout(context.Background(), c, time.Minute)
	defer cancel()
	c.BlockUntil(1)
	c.Advance(59 * time.Second)
	select {
	case <-ctx.Done():
		t.Fatalf("ended a second early: %v", context.Cause(ctx))
	default:
	}
	c.Advance(time.Second)
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
}

func TestWithTimeoutCancelled(t *testing.T) {
	c := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	ctx, cancel := clock.WithTimeout(context.Background(), c, time.Minute)
	cancel()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
}
