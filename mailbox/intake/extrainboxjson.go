package intake

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// ingestWatchedInboxJSON takes the messages an old writer left running
// appends to an inbox.json of its own, one of this agent's watched places:
// under the writers' lock (flock on inbox.json.lock beside it) it copies
// the file into .ingest/ and gives the writer back the empty shape it uses,
// then delivers from the spool as from our own inbox.json. The place may be
// on another file system, so it is copied, not renamed.
func (in *Intake) ingestWatchedInboxJSON(path string, now time.Time) error {
	if mailbox.IsEmptyInboxJSON(path) {
		return nil
	}
	lock, _, err := in.tryLockPath(path + ".lock")
	if err != nil || lock == nil {
		return err // held: the next event or rescan looks again
	}
	spool, err := in.copyWatchedInboxJSON(path, now)
	if uerr := lock.Unlock(); err == nil && uerr != nil {
		err = fmt.Errorf("cannot unlock %s.lock: %w", path, uerr)
	}
	if err != nil || spool == "" {
		return err
	}
	return in.finishSpool(spool, now)
}

func (in *Intake) copyWatchedInboxJSON(path string, now time.Time) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (!fi.Mode().IsRegular() || in.tooLarge(path, fi)) {
		return "", nil // gone, a link, or too large to take whole: left alone
	}
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	data, err := mailbox.ReadRegular(path, fi)
	if err != nil {
		return "", nil // changed meanwhile: its own event follows
	}
	// A writer that takes no lock may be half-way: only whole JSON, or a
	// file long unchanged, is taken.
	if dreamos.HoldsNothing(data) || !dreamos.IsCompleteJSON(data) && !in.settling.Settled(path, fi, now) {
		return "", nil
	}
	in.settling.Forget(path)
	// Named after the bytes and their writer's last write: a taking
	// repeated after a crash, the file unchanged, reuses the spool and
	// derives the same ids, while the same bytes written again later are
	// messages of their own.
	h := sha256.New()
	h.Write(data)
	fmt.Fprintf(h, "\x00%d", fi.ModTime().UnixNano())
	spool := "x" + hex.EncodeToString(h.Sum(nil))[:24] + layout.RecordSuffix
	if err := atomicfile.MkdirAll(in.path(mailbox.IngestDir)); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	if err := atomicfile.Create(in.path(mailbox.IngestDir, spool), data); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, dreamos.EmptyShape(data)); err != nil {
		return "", fmt.Errorf("cannot take %s: %w", path, err)
	}
	return spool, nil
}
