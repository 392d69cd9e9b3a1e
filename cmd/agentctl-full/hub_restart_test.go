package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/mailbox"
)

// lockedLog is a log destination the test reads while the loop writes.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The hub starts a remote agent's runner again after a second of its
// clock, then two, four... up to a minute, and says why it stopped; a
// runner that ends without error (the hub stopping) is not started again.
func TestHubRestartsARemoteRunnerOnItsClock(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	var logs lockedLog
	runs, results := make(chan time.Time), make(chan error)
	done := make(chan struct{})
	go func() {
		defer close(done)
		restartRemote(context.Background(), clk, "Agent-5", "desk-2", zerolog.New(&logs), func(context.Context) error {
			runs <- clk.Now()
			return <-results
		})
	}()
	start := <-runs
	want := start
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		results <- &mailbox.LockedError{Agent: "Agent-5", PID: 4242}
		clk.BlockUntil(1)
		clk.Advance(wait - time.Millisecond)
		select {
		case at := <-runs:
			t.Fatalf("started again at %v, before %v had passed", at.Sub(start), want.Add(wait).Sub(start))
		default:
		}
		clk.Advance(time.Millisecond)
		want = want.Add(wait)
		if at := <-runs; !at.Equal(want) {
			t.Fatalf("started again at %v, want %v", at.Sub(start), want.Sub(start))
		}
	}
	results <- nil
	<-done
	if !strings.Contains(logs.String(), "stop the local runner of Agent-5 (pid 4242)") {
		t.Errorf("log does not say which runner holds the mailbox:\n%s", logs.String())
	}
}
