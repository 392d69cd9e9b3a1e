package lockfile

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestMain lets tests run this binary as another process holding a lock:
// with LOCKFILE_TEST_HOLD set it locks that file (shared if
// LOCKFILE_TEST_SHARED is set), records itself in it if LOCKFILE_TEST_ROLE
// is set, says "held" and keeps the lock until its stdin closes.
func TestMain(m *testing.M) {
	if path := os.Getenv("LOCKFILE_TEST_HOLD"); path != "" {
		l := New(path)
		lock := l.Lock
		if os.Getenv("LOCKFILE_TEST_SHARED") != "" {
			lock = l.RLock
		}
		if err := lock(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if role := os.Getenv("LOCKFILE_TEST_ROLE"); role != "" {
			if err := Write(path, Self(role)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRecordIsBelievedOnlyForTheSameProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l := New(path)
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	self := Self("runner")
	if err := Write(path, self); err != nil {
		t.Fatal(err)
	}
	got, ok := Read(path)
	if !ok || got != self || !got.Live() {
		t.Fatalf("read back %+v, %v (live %v); wrote %+v", got, ok, got.Live(), self)
	}
	if runtime.GOOS != "linux" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Record{
		"a finished process":                  {PID: cmd.Process.Pid, Start: self.Start, Role: "runner"},
		"this pid with another start time":    {PID: self.PID, Start: self.Start + 1, Role: "runner"},
		"a bare pid, as older versions wrote": {PID: self.PID},
	} {
		if err := Write(path, r); err != nil {
			t.Fatal(err)
		}
		if r, ok := Read(path); !ok || r.Live() {
			t.Errorf("%s: read %+v, %v, and believed it", name, r, ok)
		}
	}
	for _, junk := range []string{"", "\n", "abc", "-1 2 runner", "0"} {
		os.WriteFile(path, []byte(junk), 0o600)
		if r, ok := Read(path); ok {
			t.Errorf("read %+v from %q", r, junk)
		}
	}
}
