package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/supervise"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// upHere makes the test process the runtime's supervisor, as 'agentctl up'
// would be, until the returned release.
func upHere(t *testing.T) (*cli.Env, func()) {
	t.Helper()
	env := &cli.Env{Root: t.TempDir(), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	release, err := supervise.Lock(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return env, release
}

// down gives up on an up that is still stopping once --timeout has passed
// on its clock.
func TestDownGivesUpAfterTheTimeoutOfItsClock(t *testing.T) {
	env, _ := upHere(t)
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	done := make(chan error, 1)
	go func() { done <- waitDown(context.Background(), env, clk, os.Getpid(), time.Minute) }()
	clk.BlockUntil(1)
	clk.Advance(time.Minute - time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("down returned before the timeout: %v", err)
	default:
	}
	clk.Advance(time.Millisecond)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "still stopping after 1m0s") {
		t.Fatalf("down = %v, want it still stopping after 1m0s", err)
	}
}

// down returns as soon as up lets go of the runtime, the clock unmoved.
func TestDownSeesUpStop(t *testing.T) {
	env, release := upHere(t)
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	done := make(chan error, 1)
	go func() { done <- waitDown(context.Background(), env, clk, os.Getpid(), time.Minute) }()
	clk.BlockUntil(1)
	release()
	if err := <-done; err != nil {
		t.Fatalf("down = %v, want up seen stopped", err)
	}
	if out := env.Stdout.(*bytes.Buffer).String(); !strings.Contains(out, "stopped") {
		t.Errorf("down printed %q", out)
	}
}
