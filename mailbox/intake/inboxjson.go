package intake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// inbox.json is how Dream.OS writers deliver: they take flock(inbox.json.lock),
// read the JSON array, append and rewrite it in place. The intake holds
// that lock only to take the file away whole, by renaming it into .ingest/
// and leaving "[]" in its place, and delivers from that private spool file
// afterwards (spool.go), so writers never wait for deliveries.

// tryLockPath takes the flock Dream.OS writers take (py-filelock is flock
// on inbox.json.lock), trying for up to wait. It returns a nil lock and no
// error when another process still holds it, and then who does. The lock
// file is never removed: removing it while someone waits on it would let
// two holders in.
func (in *Intake) tryLockPath(path string) (*flock.Flock, lockfile.Holder, error) {
	lock, _, err := lockfile.Acquire(context.Background(), path, lockfile.Wait{For: in.opts.LockWait, Clock: in.opts.Clock})
	if busy := (*lockfile.BusyError)(nil); errors.As(err, &busy) {
		return nil, busy.Holder, nil
	}
	return lock, lockfile.Holder{}, err
}

// ingestInboxJSON finishes what earlier takings left in .ingest/, then takes
// what inbox.json holds now and delivers it. When another process holds the
// writers' lock it gives up after Options.LockWait without an error and
// looks again on a later Tick (see Waiting).
func (in *Intake) ingestInboxJSON(now time.Time) error {
	if err := in.finishSpools(now); err != nil {
		return err
	}
	if mailbox.IsEmptyInboxJSON(in.path(mailbox.InboxJSON)) {
		in.noteLockFree(now, false)
		return nil // nothing to do, without taking the writers' lock
	}
	lock, holder, err := in.tryLockPath(in.path(mailbox.InboxJSONLock))
	if err != nil {
		return err
	}
	if lock == nil {
		in.noteLockBusy(now, holder)
		return nil
	}
	in.noteLockFree(now, true)
	spool, err := in.takeInboxJSON(now)
	if uerr := lock.Unlock(); err == nil && uerr != nil {
		err = fmt.Errorf("cannot unlock %s: %w", in.path(mailbox.InboxJSONLock), uerr)
	}
	if err != nil || spool == "" {
		return err
	}
	return in.finishSpool(spool, now)
}

// takeInboxJSON runs under the writers' lock: it renames inbox.json to a new
// spool file and leaves "[]" in its place. It reads nothing but a tiny file,
// so the lock is held for two renames however large inbox.json is. It
// returns the spool's name, or "" when inbox.json holds nothing.
//
// A crash after the rename leaves no inbox.json, which the writers read as
// an empty array, and a spool that the next consumer finishes.
func (in *Intake) takeInboxJSON(now time.Time) (string, error) {
	path := in.path(mailbox.InboxJSON)
	if mailbox.IsEmptyInboxJSON(path) || isBlank(path) {
		return "", nil
	}
	dir := in.path(mailbox.IngestDir)
	if err := atomicfile.MkdirAll(dir); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	spool := mailbox.SpoolName(fi)
	if _, err := os.Lstat(in.path(mailbox.IngestDir, spool)); err == nil {
		// An earlier taking of the same instant's bytes is not finished:
		// this one must not replace it.
		if spool, err = uniqueSpoolName(now); err != nil {
			return "", err
		}
	}
	if err := os.Rename(path, in.path(mailbox.IngestDir, spool)); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, in.emptyShapeOf(in.path(mailbox.IngestDir, spool))); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	return spool, nil
}

// emptyShapeOf reads what was just taken when it is an object, to give its
// writer back the empty shape it expects (see dreamos.EmptyShape). Only an object
// is read under the lock; an array, the usual case, costs one byte.
func (in *Intake) emptyShapeOf(spool string) []byte {
	f, err := os.Open(spool)
	if err != nil {
		return []byte("[]\n")
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	head = bytes.TrimLeft(bytes.TrimPrefix(head[:n], []byte{0xEF, 0xBB, 0xBF}), " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return []byte("[]\n")
	}
	data, err := os.ReadFile(spool)
	if err != nil || int64(len(data)) > in.opts.MaxInboxJSONBytes {
		return []byte("{}\n")
	}
	return dreamos.EmptyShape(data)
}

// uniqueSpoolName names a taking of inbox.json whose mailbox.SpoolName is
// taken: its time, for order and for people, and randomness, so that no
// two takings ever share a name. Ids derived for entries without one
// include it (see finishSpool).
func uniqueSpoolName(now time.Time) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot name a spool file: %w", err)
	}
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]) + layout.RecordSuffix, nil
}

// isBlank reports a small inbox.json of white space only, which holds
// nothing and is left as it is. (A larger one is taken and found empty.)
func isBlank(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 16 {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && len(bytes.TrimSpace(data)) == 0
}
