package intake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// A spool file in .ingest/ is one taking of inbox.json. Only the intake
// (one per mailbox, under its consumer's lock) acts on it, listings only read it,
// and it never changes. It is removed only once each of its entries is
// delivered or dead-lettered, and until then it can be gone through again
// from the start any number of times with the same outcome: entries without
// an id get one derived from the spool's name, their index and their bytes,
// so a second delivery is a duplicate, and dead letters get names derived
// the same way and are written once.

// finishSpools finishes the spool files an earlier consumer (or an earlier
// look that failed) left in .ingest/, oldest first.
func (in *Intake) finishSpools(now time.Time) error {
	entries, err := os.ReadDir(in.path(mailbox.IngestDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot list %s: %w", in.path(mailbox.IngestDir), err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !atomicfile.IsTemp(e.Name()) && strings.HasSuffix(e.Name(), layout.RecordSuffix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if in.stopped() {
			return nil
		}
		if err := in.finishSpool(name, now); err != nil {
			return err
		}
	}
	return nil
}

// finishSpool delivers or dead-letters every entry of one spool file, then
// removes it. The whole file is checked before anything is delivered, so a
// file that is not an array of messages goes to deadletter/ whole.
func (in *Intake) finishSpool(name string, now time.Time) error {
	path := in.path(mailbox.IngestDir, name)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return in.deadletterSpool(name, "inbox.json was not a regular file (a symbolic link?); agentctl reads only regular files", now)
	case fi.Size() > in.opts.MaxInboxJSONBytes:
		return in.deadletterSpool(name, fmt.Sprintf("inbox.json was %d bytes, over the %d-byte limit (mailbox.max_inbox_json_bytes); it was set aside unread", fi.Size(), in.opts.MaxInboxJSONBytes), now)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	n, tail, err := dreamos.WalkInboxJSON(f, nil)
	var bad *dreamos.NotInboxJSONError
	if errors.As(err, &bad) {
		f.Close()
		return in.deadletterSpool(name, bad.Error(), now)
	}
	if err == nil && tail > 0 {
		err = in.deadletterTail(f, name, tail, n, now)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		src := mailbox.Source{ModTime: fi.ModTime()} // the writers' last write: the same on every pass
		_, _, err = dreamos.WalkInboxJSON(f, func(i int, raw json.RawMessage) error {
			if in.stopped() {
				return errStopped
			}
			src.Name = mailbox.SpoolEntryName(name, i)
			return in.ingestEntry(raw, i, name, src, now)
		})
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, errStopped) {
		return nil // the spool stays; the next look goes through it again
	}
	if err != nil {
		return fmt.Errorf("cannot ingest %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("cannot remove %s: %w", path, err)
	}
	// Should the removal be lost in a power cut, the spool would be gone
	// through again, and only the .seen markers (not fsynced) would stand
	// between its messages and a second delivery.
	return atomicfile.SyncDir(in.path(mailbox.IngestDir))
}

// ingestEntry delivers entry i of a spool file, or dead-letters it.
func (in *Intake) ingestEntry(raw json.RawMessage, i int, spool string, src mailbox.Source, now time.Time) error {
	name := fmt.Sprintf("%s[%d]", mailbox.InboxJSON, i)
	src.Owner = in.mb.Agent
	var msg mailbox.Message
	var err error
	if int64(len(raw)) > in.store.MaxMessageBytes {
		err = fmt.Errorf("it is %d bytes, over the %d-byte limit for one message", len(raw), in.store.MaxMessageBytes)
	} else if msg, err = mailbox.Decode(raw, src); err == nil {
		err = in.unclear(msg, in.c.CheckRecipient(&msg))
	}
	if err == nil && isWatchedSpool(spool) {
		err = handledError(msg)
	}
	if err != nil {
		dst := fmt.Sprintf("%s-%s-%d%s", strings.TrimSuffix(spool, layout.RecordSuffix), mailbox.InboxJSON, i, mailbox.MessageSuffix)
		// Named after the spool and the entry: found there already, it was
		// dead-lettered before a crash.
		return in.refuse(mailbox.Letter{Name: dst, Data: raw, Origin: name, ID: msg.ID}, err, now)
	}
	return in.c.DeliverFound(msg, name)
}

// deadletterSpool moves a whole spool file to deadletter/, unread.
func (in *Intake) deadletterSpool(spool, reason string, now time.Time) error {
	dst := strings.TrimSuffix(spool, layout.RecordSuffix) + "-" + mailbox.InboxJSON
	return in.deadletter(mailbox.Letter{Name: dst, From: in.path(mailbox.IngestDir, spool), Origin: mailbox.InboxJSON, Reason: reason}, now)
}

// deadletterTail keeps what followed the array in a spool file: the stale
// end of a longer inbox.json that a writer rewrote in place and did not
// truncate. It is at most the size limit of inbox.json.
func (in *Intake) deadletterTail(f *os.File, spool string, tail int64, entries int, now time.Time) error {
	data, err := io.ReadAll(io.NewSectionReader(f, tail, 1<<62))
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("data after the end of the JSON array at byte %d, left by an interrupted rewrite; the %d entries before it are delivered or dead-lettered one by one", tail, entries)
	return in.deadletter(mailbox.Letter{Name: strings.TrimSuffix(spool, layout.RecordSuffix) + "-" + mailbox.InboxJSON + "-tail", Data: data, Origin: mailbox.InboxJSON, Reason: reason}, now)
}
