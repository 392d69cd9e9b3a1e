package mailbox

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
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// A spool file in .ingest/ is one taking of inbox.json. Only the consumer
// (one process per mailbox, by its lock) acts on it, listings only read it,
// and it never changes. It is removed only once each of its entries is
// delivered or dead-lettered, and until then it can be gone through again
// from the start any number of times with the same outcome: entries without
// an id get one derived from the spool's name, their index and their bytes,
// so a second delivery is a duplicate, and dead letters get names derived
// the same way and are written once.

// finishSpools finishes the spool files an earlier consumer (or an earlier
// look that failed) left in .ingest/, oldest first.
func (c *Consumer) finishSpools(now time.Time) error {
	entries, err := os.ReadDir(c.mb.path(IngestDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot list %s: %w", c.mb.path(IngestDir), err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !atomicfile.IsTemp(e.Name()) && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if err := c.finishSpool(name, now); err != nil {
			return err
		}
	}
	return nil
}

// finishSpool delivers or dead-letters every entry of one spool file, then
// removes it. The whole file is checked before anything is delivered, so a
// file that is not an array of messages goes to deadletter/ whole.
func (c *Consumer) finishSpool(name string, now time.Time) error {
	path := c.mb.path(IngestDir, name)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return c.deadletterSpool(name, "inbox.json was not a regular file (a symbolic link?); agentctl reads only regular files", now)
	case fi.Size() > c.opts.MaxInboxJSONBytes:
		return c.deadletterSpool(name, fmt.Sprintf("inbox.json was %d bytes, over the %d-byte limit (mailbox.max_inbox_json_bytes); it was set aside unread", fi.Size(), c.opts.MaxInboxJSONBytes), now)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	n, tail, err := dreamos.WalkInboxJSON(f, nil)
	var bad *dreamos.NotInboxJSONError
	if errors.As(err, &bad) {
		f.Close()
		return c.deadletterSpool(name, bad.Error(), now)
	}
	if err == nil && tail > 0 {
		err = c.deadletterTail(f, name, tail, n, now)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		src := Source{ModTime: fi.ModTime()} // the writers' last write: the same on every pass
		_, _, err = dreamos.WalkInboxJSON(f, func(i int, raw json.RawMessage) error {
			src.Name = spoolEntryName(name, i)
			return c.ingestEntry(raw, i, name, src, now)
		})
	}
	if cerr := f.Close(); err == nil {
		err = cerr
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
	return atomicfile.SyncDir(c.mb.path(IngestDir))
}

// spoolEntryName names entry i of a spool file wherever it is decoded, so
// that an entry without an id gets the same derived id every time.
func spoolEntryName(spool string, i int) string {
	return fmt.Sprintf("%s/%s[%d]", IngestDir, spool, i)
}

// spooledEntries lists the entries of spool files not delivered yet: taken
// out of inbox.json by a consumer that is still at them or died before it
// finished. Spool files never change, so no lock is needed to read them.
func (m *Mailbox) spooledEntries() []Entry {
	dirents, err := os.ReadDir(m.path(IngestDir))
	if err != nil {
		return nil
	}
	var out []Entry
	for _, d := range dirents {
		if name := d.Name(); !atomicfile.IsTemp(name) && strings.HasSuffix(name, ".json") {
			out = append(out, m.spooledEntriesOf(name)...)
		}
	}
	return out
}

func (m *Mailbox) spooledEntriesOf(spool string) []Entry {
	path := m.path(IngestDir, spool)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // gone meanwhile, or to be dead-lettered unread
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	problem := func(p string) []Entry {
		return []Entry{{State: StatePending, File: IngestDir + "/" + spool, Problem: p, Message: Message{CreatedAt: modTime(fi)}}}
	}
	if _, _, err := dreamos.WalkInboxJSON(f, nil); err != nil {
		return problem(err.Error())
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return problem(err.Error())
	}
	var out []Entry
	dreamos.WalkInboxJSON(f, func(i int, raw json.RawMessage) error {
		ent := Entry{State: StatePending, File: spoolEntryName(spool, i)}
		ent.Message, err = Decode(raw, Source{Name: spoolEntryName(spool, i), ModTime: fi.ModTime(), Owner: m.Agent})
		if err != nil {
			ent.Problem = err.Error()
			ent.Message.CreatedAt = modTime(fi)
		} else if m.seen(Stem(ent.Message.ID)) {
			return nil // delivered already: listed where it is now
		}
		out = append(out, ent)
		return nil
	})
	return out
}

// ingestEntry delivers entry i of a spool file, or dead-letters it.
func (c *Consumer) ingestEntry(raw json.RawMessage, i int, spool string, src Source, now time.Time) error {
	name := fmt.Sprintf("%s[%d]", InboxJSON, i)
	src.Owner = c.mb.Agent
	var msg Message
	var err error
	if int64(len(raw)) > c.opts.MaxMessageBytes {
		err = fmt.Errorf("it is %d bytes, over the %d-byte limit for one message", len(raw), c.opts.MaxMessageBytes)
	} else if msg, err = Decode(raw, src); err == nil {
		err = c.checkRecipient(&msg)
	}
	if err == nil && isWatchedSpool(spool) {
		err = handledError(msg)
	}
	if err != nil {
		dst := fmt.Sprintf("%s-%s-%d.json", strings.TrimSuffix(spool, ".json"), InboxJSON, i)
		return c.deadletterOnce(dst, raw, name, err.Error(), now)
	}
	return c.deliverFound(msg, name)
}

// deadletterSpool moves a whole spool file to deadletter/, unread.
func (c *Consumer) deadletterSpool(spool, reason string, now time.Time) error {
	dst := strings.TrimSuffix(spool, ".json") + "-" + InboxJSON
	if _, err := c.mb.WriteDeadLetter(Letter{Name: dst, From: c.mb.path(IngestDir, spool), Origin: InboxJSON, Reason: reason}, now); err != nil {
		return err
	}
	c.emit("deadlettered", "", InboxJSON, reason)
	return nil
}

// deadletterTail keeps what followed the array in a spool file: the stale
// end of a longer inbox.json that a writer rewrote in place and did not
// truncate. It is at most the size limit of inbox.json.
func (c *Consumer) deadletterTail(f *os.File, spool string, tail int64, entries int, now time.Time) error {
	data, err := io.ReadAll(io.NewSectionReader(f, tail, 1<<62))
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("data after the end of the JSON array at byte %d, left by an interrupted rewrite; the %d entries before it are delivered or dead-lettered one by one", tail, entries)
	return c.deadletterOnce(strings.TrimSuffix(spool, ".json")+"-"+InboxJSON+"-tail", data, InboxJSON, reason, now)
}

// deadletterOnce writes bytes that never were a file of their own (an entry
// of inbox.json, a stale tail) into deadletter/ under a name derived from
// where they came from. Found there already, they were dead-lettered before
// a crash, and nothing is done or reported again.
func (c *Consumer) deadletterOnce(dst string, data []byte, origin, reason string, now time.Time) error {
	written, err := c.mb.WriteDeadLetter(Letter{Name: dst, Data: data, Origin: origin, Reason: reason}, now)
	if written {
		c.emit("deadlettered", "", origin, reason)
	}
	return err
}
