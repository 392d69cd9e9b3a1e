package mailbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// What waits in inbox.json, or was taken out of it into .ingest/ and is not
// delivered yet, is pending too: listings read it here, without changing
// it. Taking it in is package intake's job.

// lockInboxJSON takes the flock Dream.OS writers take (py-filelock is
// flock on inbox.json.lock), for readers that cannot do without it: a
// lock still held after wait is an error. The lock file is never removed:
// removing it while someone waits on it would let two holders in.
func (m *Mailbox) lockInboxJSON(wait time.Duration) (*flock.Flock, error) {
	path := m.path(InboxJSONLock)
	lock, _, err := lockfile.Acquire(context.Background(), path, lockfile.Wait{For: wait, Clock: m.Clock})
	var busy *lockfile.BusyError
	if errors.As(err, &busy) {
		holder := busy.Holder.String()
		if holder == "" {
			holder = "another process"
		}
		return nil, fmt.Errorf("cannot lock %s: still held by %s after %s", path, holder, wait)
	}
	return lock, err
}

// IsEmptyInboxJSON is the lock-free check that keeps an idle mailbox from
// contending with the Dream.OS writers for their lock: true when the file
// at path is missing or holds no message.
func IsEmptyInboxJSON(path string) bool {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || fi.Size() > 64<<10 {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && len(bytes.TrimSpace(data)) > 0 && dreamos.HoldsNothing(data)
}

// SpoolName names the spool file a taking of inbox.json makes of the file
// fi describes: its last write's time, for order and for people, and a
// digest of that time to the nanosecond and the file's size. A listing of
// inbox.json in place names its entries by the spool they will be taken
// into, so that an entry without an id is listed under the id it is
// delivered with. Two takings of the same bytes written at the same
// instant would share it, and their entries their ids: the second would
// be the duplicate it most likely is.
func SpoolName(fi fs.FileInfo) string {
	t := fi.ModTime().UTC()
	sum := sha256.Sum256(fmt.Appendf(nil, "%d %d", t.UnixNano(), fi.Size()))
	return t.Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:6]) + layout.RecordSuffix
}

// SpoolEntryName names entry i of a spool file in .ingest/ wherever it is
// decoded, so that an entry without an id gets the same derived id every
// time: when it is listed and when it is delivered.
func SpoolEntryName(spool string, i int) string {
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
		if name := d.Name(); !atomicfile.IsTemp(name) && strings.HasSuffix(name, layout.RecordSuffix) {
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
		ent := Entry{State: StatePending, File: SpoolEntryName(spool, i)}
		ent.Message, err = Decode(raw, Source{Name: SpoolEntryName(spool, i), ModTime: fi.ModTime(), Owner: m.Agent})
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
