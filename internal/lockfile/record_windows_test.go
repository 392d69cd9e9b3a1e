package lockfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/wintest"
)

// On Windows the holder's record lies past the byte its lock covers, which
// no other handle may read or write: written there through a second
// handle while the lock is held, it is read back by another. (Wine, where
// this runs here, does not refuse access to a locked byte as Windows does;
// the layout is what is checked.)
func TestWindowsRecordLiesPastTheLockedByte(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "consumer.lock")
	lock := New(path)
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	t.Cleanup(func() { lock.Unlock() })
	self := Self("runner")
	if err := Write(path, self); err != nil {
		t.Fatal(err)
	}
	got, ok := Read(path)
	if !ok || got.PID != self.PID || got.Role != "runner" {
		t.Fatalf("Read = %+v, %v; want this process's record", got, ok)
	}
	// The whole file only once let go: Windows refuses a read of the
	// locked byte.
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1+len(self.String()) || !bytes.Equal(data[1:], []byte(self.String())) {
		t.Errorf("the lock file holds %q; want its first byte left alone and the record after it", data)
	}
}

// A record this process left in a lock it let go (records stay after an
// unlock) is not believed by this process, where the kernel names no
// holders: a runner back from a fault took its own old record for another
// runner's, and refused to start.
func TestWindowsOwnRecordLeftBehindIsNotBelieved(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "consumer.lock")
	lock := New(path)
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := Write(path, Self("runner")); err != nil {
		t.Fatal(err)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if r, ok := HeldBy(path); ok {
		t.Errorf("HeldBy = %+v; want this process's own old record not believed", r)
	}
}
