//go:build linux

package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// takeAsync runs Take on the fake clock and returns its result.
func takeAsync(lock *flock.Flock, w Wait) <-chan acquired {
	done := make(chan acquired, 1)
	go func() {
		waited, err := Take(context.Background(), lock, w)
		done <- acquired{lock, waited, err}
	}()
	return done
}

// A shared lock is taken at once beside another reader's, and keeps a
// writer out until it is let go.
func TestSharedLockIsTakenBesideAnotherReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.json.lock")
	_, release := holdLock(t, path, "LOCKFILE_TEST_SHARED=1")
	lock := Open(path)
	defer lock.Close()
	if waited, err := Take(context.Background(), lock, Wait{Shared: true}); err != nil || waited != 0 {
		t.Fatalf("a shared lock beside another reader's: %v, %v; want it at once", waited, err)
	}
	release()
	writer := New(path)
	if ok, err := writer.TryLock(); ok || err != nil {
		t.Fatalf("a writer took the lock a reader holds: %v, %v", ok, err)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := writer.TryLock(); !ok || err != nil {
		t.Fatalf("a writer could not take the lock its reader let go: %v, %v", ok, err)
	}
	writer.Unlock()
}

// A reader waits for a writer as long as the Wait says, on its clock, and
// then names the writer.
func TestSharedLockWaitsForAWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.json.lock")
	holder, _ := holdLock(t, path, "LOCKFILE_TEST_ROLE=writer")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	lock := Open(path)
	defer lock.Close()
	r := stepUntilDone(clk, 10*time.Millisecond, takeAsync(lock, Wait{For: 100 * time.Millisecond, Poll: 10 * time.Millisecond, Clock: clk, Shared: true}))
	var busy *BusyError
	if !errors.As(r.err, &busy) || busy.Waited != 100*time.Millisecond {
		t.Fatalf("Take shared under a writer = %v, want a *BusyError after 100ms", r.err)
	}
	if want := fmt.Sprintf("pid %d (", holder.Process.Pid); !strings.HasPrefix(busy.Holder.String(), want) {
		t.Errorf("holder %q, want it to start %q", busy.Holder, want)
	}
}

// Open never creates a lock file, nor changes one: it is another
// program's.
func TestOpenLeavesAnotherProgramsFileAlone(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.lock")
	_, err := Take(context.Background(), Open(missing), Wait{Shared: true})
	if err == nil || errors.As(err, new(*BusyError)) {
		t.Fatalf("Take of a missing file: %v, want an error that is no *BusyError", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the missing lock file was created: %v", err)
	}
	theirs := filepath.Join(dir, "theirs.lock")
	if err := os.WriteFile(theirs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(theirs, 0o644) // whatever the umask
	lock := Open(theirs)
	if _, err := Take(context.Background(), lock, Wait{Shared: true}); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if fi, err := os.Stat(theirs); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("their lock file is now %v (%v), want it left 0644", fi.Mode().Perm(), err)
	}
}

// A handle that holds its lock in one mode is refused the other: flock
// would convert the lock, and a failed conversion lets go of it.
func TestTakeRefusesTheOtherMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	for _, shared := range []bool{false, true} {
		lock := New(path)
		if _, err := Take(context.Background(), lock, Wait{Shared: shared}); err != nil {
			t.Fatal(err)
		}
		if _, err := Take(context.Background(), lock, Wait{Shared: !shared}); err == nil || !strings.Contains(err.Error(), "other mode") {
			t.Errorf("held shared=%v, taken shared=%v: err = %v; want it refused", shared, !shared, err)
		}
		if lock.Locked() == shared || lock.RLocked() != shared {
			t.Errorf("held shared=%v: the refusal changed the lock (locked %v, rlocked %v)", shared, lock.Locked(), lock.RLocked())
		}
		lock.Unlock()
	}
}
