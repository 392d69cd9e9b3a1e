package mailbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file is settled once its size and time have stayed put for the
// period; a change restarts the wait, and a file long untouched when first
// seen is settled at once.
func TestSettlerWaitsForTheWriterToStop(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	write := func(data string, mtime time.Time) fs.FileInfo {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := NewSettler(time.Second)

	fi := write(`{"a":`, start)
	if s.Settled("m", fi, start) {
		t.Fatal("a file just written is settled at once")
	}
	if next, ok := s.Next(); !ok || !next.Equal(start.Add(time.Second)) {
		t.Fatalf("Next = %v, %v; want the end of the period", next, ok)
	}
	if due := s.Due(start.Add(999 * time.Millisecond)); len(due) != 0 {
		t.Fatalf("due before the period ended: %v", due)
	}
	fi = write(`{"a": 1`, start.Add(500*time.Millisecond))
	if s.Settled("m", fi, start.Add(1200*time.Millisecond)) {
		t.Fatal("a file that grew is settled without a fresh wait")
	}
	if due := s.Due(start.Add(2200 * time.Millisecond)); len(due) != 1 || due[0] != "m" {
		t.Fatalf("due = %v, want [m] once the fresh wait ran out", due)
	}
	if !s.Settled("m", fi, start.Add(2200*time.Millisecond)) {
		t.Fatal("an unchanged file is not settled after the period")
	}
	if _, ok := s.Next(); ok {
		t.Fatal("a settled file still waits")
	}

	old := write(`{"b": 2}`, start.Add(-time.Hour))
	if !s.Settled("old", old, start) {
		t.Error("a file long untouched when first seen is not settled at once")
	}
	s.Restart("m", fi, start)
	s.Keep(func(string) bool { return false })
	if _, ok := s.Next(); ok {
		t.Error("Keep kept a file it was told is gone")
	}
}
