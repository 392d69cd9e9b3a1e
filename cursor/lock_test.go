package cursor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestInputLockRecordsItsLiveHolder(t *testing.T) {
	dir := t.TempDir()
	l := NewInputLock(dir, time.Second)
	l.Agent = "Agent-2"
	if got := Holders(dir); len(got) != 0 {
		t.Fatalf("holders of a free lock: %+v", got)
	}
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := Holders(dir)
	if len(got) != 1 || got[0].PID != os.Getpid() || got[0].Agent != "Agent-2" || got[0].Lock != filepath.Base(l.Path()) {
		t.Fatalf("holders while held: %+v", got)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := Holders(dir); len(got) != 0 {
		t.Fatalf("holders after release: %+v", got)
	}
	// A holder killed with the lock leaves its record; its pid is gone.
	stale := `{"lock": "desktop-x11_9.lock", "pid": 999999999, "agent": "Agent-1", "since": "2026-11-22T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, "desktop-x11_9.lock"+holderSuffix), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Holders(dir); len(got) != 0 {
		t.Fatalf("a dead process is reported as holder: %+v", got)
	}
}
