package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// RecentDone reads the n most recently archived messages with their
// receipts, newest first. It reads only the newest days of the archive and
// only the n files it returns, so its cost does not grow with the archive:
// views that refresh on every file event use it where List would read
// every message ever archived.
func (m *Mailbox) RecentDone(n int) ([]Entry, error) { return m.DonePage(0, n) }

// DonePage reads n archived messages with their receipts, newest first,
// after skipping the newest skip: a page of the archive. Whole days
// skipped cost one folder listing each; only the n files returned are
// read.
func (m *Mailbox) DonePage(skip, n int) ([]Entry, error) {
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return nil, fmt.Errorf("cannot list the archive of %s: %w", m.Agent, err)
	}
	type file struct {
		dir, name string
		mod       int64
	}
	var out []Entry
	for i := len(days) - 1; i >= 0 && len(out) < n; i-- { // day folders sort by name
		if !days[i].IsDir() {
			continue
		}
		dir := ArchiveDir + "/" + days[i].Name()
		entries, err := os.ReadDir(m.path(dir))
		if err != nil {
			return nil, fmt.Errorf("cannot list %s of %s: %w", dir, m.Agent, err)
		}
		receipts := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ReceiptSuffix) {
				receipts++
			}
		}
		if skip >= receipts {
			skip -= receipts
			continue
		}
		var files []file
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ReceiptSuffix) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // archived and moved on meanwhile
			}
			files = append(files, file{dir, strings.TrimSuffix(e.Name(), ReceiptSuffix) + MessageSuffix, fi.ModTime().UnixNano()})
		}
		sort.Slice(files, func(a, b int) bool {
			if files[a].mod != files[b].mod {
				return files[a].mod > files[b].mod
			}
			return files[a].name < files[b].name
		})
		if skip > len(files) {
			skip = len(files)
		}
		for _, f := range files[skip:] {
			if len(out) == n {
				break
			}
			out = append(out, m.doneEntry(f.dir, f.name))
		}
		skip = 0
	}
	return out, nil
}

func (m *Mailbox) doneEntry(dir, name string) Entry {
	ent := m.readEntry(StateDone, dir, name)
	if r, err := readReceipt(m.path(strings.TrimSuffix(ent.File, MessageSuffix) + ReceiptSuffix)); err == nil {
		ent.Receipt = &r
	}
	return ent
}

// ArchiveDays counts the archived messages of each day folder, by their
// receipts, from folder listings alone.
func (m *Mailbox) ArchiveDays() (map[string]int, error) {
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return nil, fmt.Errorf("cannot count the archive of %s: %w", m.Agent, err)
	}
	out := map[string]int{}
	for _, d := range days {
		if !d.IsDir() {
			continue // not a day of the archive; a person's stray file
		}
		n, err := m.CountDay(d.Name())
		if err != nil {
			return nil, err
		}
		out[d.Name()] = n
	}
	return out, nil
}

// CountDay counts the archived messages of one day folder by their
// receipts; a day folder that is not there, or is no folder, holds none.
func (m *Mailbox) CountDay(day string) (int, error) {
	f, err := os.Open(m.path(ArchiveDir, day))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cannot count %s/%s of %s: %w", ArchiveDir, day, m.Agent, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.IsDir() {
		return 0, nil // a person's stray file, no day of the archive
	}
	// Names alone, unsorted: a day of thousands is counted without a
	// sort or a stat.
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("cannot count %s/%s of %s: %w", ArchiveDir, day, m.Agent, err)
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ReceiptSuffix) {
			n++
		}
	}
	return n, nil
}

// ReadEntry reads the one message at file, a path relative to the mailbox
// folder as Entry.File gives it, in state: with its reason in deadletter/,
// its receipt in the archive. ok is false when no message file is there
// (it moved on, or the name is a sidecar or a temp file): a view updated
// name by name drops it then.
func (m *Mailbox) ReadEntry(state, file string) (ent Entry, ok bool) {
	dir, name := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" || !isMessageFile(name) {
		return Entry{}, false
	}
	if _, err := os.Lstat(m.path(file)); errors.Is(err, fs.ErrNotExist) {
		return Entry{}, false
	}
	switch state {
	case StateDone:
		return m.doneEntry(dir, name), true
	case StateDead:
		ent = m.readEntry(state, dir, name)
		if reason, err := os.ReadFile(m.path(file + ReasonSuffix)); err == nil {
			ent.Reason = reasonLine(string(reason))
		}
		return ent, true
	}
	return m.readEntry(state, dir, name), true
}

// Waiting lists what is pending outside inbox/: the messages still inside
// inbox.json, and those taken out of it that wait in .ingest/.
func (m *Mailbox) Waiting() ([]Entry, error) { return m.readInboxJSON() }
