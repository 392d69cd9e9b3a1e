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
	defer lock.Unlock()
	self := Self("runner")
	if err := Write(path, self); err != nil {
		t.Fatal(err)
	}
	got, ok := Read(path)
	if !ok || got.PID != self.PID || got.Role != "runner" {
		t.Fatalf("Read = %+v, %v; want this process's record", got, ok)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1+len(self.String()) || !bytes.Equal(data[1:], []byte(self.String())) {
		t.Errorf("the lock file holds %q; want its first byte left alone and the record after it", data)
	}
}
