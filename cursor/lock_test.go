package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor/lockholder"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

func TestInputLockRecordsItsLiveHolder(t *testing.T) {
	dir := t.TempDir()
	l := NewInputLock(dir, time.Second)
	l.Agent = "Agent-2"
	if got := lockholder.List(dir); len(got) != 0 {
		t.Fatalf("holders of a free lock: %+v", got)
	}
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := lockholder.List(dir)
	if len(got) != 1 || got[0].PID != os.Getpid() || got[0].Agent != "Agent-2" || got[0].Lock != filepath.Base(l.Path()) {
		t.Fatalf("holders while held: %+v", got)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := lockholder.List(dir); len(got) != 0 {
		t.Fatalf("holders after release: %+v", got)
	}
	// A holder killed with the lock leaves its record; its pid is gone.
	stale := `{"lock": "desktop-x11_9.lock", "pid": 999999999, "agent": "Agent-1", "since": "2026-11-22T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, "desktop-x11_9.lock"+lockholder.Suffix), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := lockholder.List(dir); len(got) != 0 {
		t.Fatalf("a dead process is reported as holder: %+v", got)
	}
}

// A turn waits for a desktop lock another holds for as long as its wait,
// as its clock tells it, then fails naming the holder and the lock.
func TestInputLockWaitsOnItsClock(t *testing.T) {
	dir := t.TempDir()
	held := NewInputLock(dir, time.Second)
	if err := held.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	l := NewInputLock(dir, time.Minute)
	l.Clock = clk
	done := make(chan error, 1)
	go func() { done <- l.Acquire(context.Background()) }()
	<-clk.Sleeping()
	clk.Advance(30 * time.Second)
	<-clk.Sleeping()
	select {
	case err := <-done:
		t.Fatalf("gave up half way through its wait: %v", err)
	default:
	}
	clk.Advance(30 * time.Second)
	err := <-done
	if !errors.Is(err, ErrInputLockTimeout) || !strings.Contains(err.Error(), "after 1m0s") || !strings.Contains(err.Error(), held.Path()) {
		t.Fatalf("err = %v, want ErrInputLockTimeout after 1m naming %s", err, held.Path())
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); runtime.GOOS == "linux" && !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want the holder, %s", err, want)
	}
}
