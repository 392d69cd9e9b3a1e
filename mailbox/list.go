package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/sizecap"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// States a message can be in, named after what a person would ask for.
const (
	StatePending    = "pending"
	StateProcessing = "processing"
	StateDone       = "done"
	StateDead       = "dead"
)

// States lists the states in the order of a message's life.
var States = []string{StatePending, StateProcessing, StateDone, StateDead}

// Entry is one message as a listing shows it. Message is what could be
// decoded; for a file that cannot be (a dead letter, a file still being
// written) Problem says why.
type Entry struct {
	State   string
	File    string // relative to the mailbox folder
	Message Message
	Problem string
	Reason  string // why it is in deadletter/
	Receipt *Receipt
}

// List reads the messages in the given state without changing anything:
// pending includes what still waits inside inbox.json. Pending messages
// come in processing order; the others newest first.
func (m *Mailbox) List(state string) ([]Entry, error) {
	switch state {
	case StatePending:
		return m.listPending()
	case StateProcessing:
		return m.listDir(StateProcessing, ProcessingDir)
	case StateDone:
		return m.listDone()
	case StateDead:
		return m.listDir(StateDead, DeadletterDir)
	}
	return nil, fmt.Errorf("unknown state %q: want %s", state, strings.Join(States, ", "))
}

// isMessageFile tells message files from their sidecars and from files that
// are not ours to read.
func isMessageFile(name string) bool {
	return !Ignored(name) && !strings.HasSuffix(name, ProgressSuffix) && !strings.HasSuffix(name, ReceiptSuffix)
}

func (m *Mailbox) listDir(state, dir string) ([]Entry, error) {
	entries, err := os.ReadDir(m.path(dir))
	if err != nil {
		return nil, fmt.Errorf("cannot list %s of %s: %w", dir, m.Agent, err)
	}
	var out []Entry
	for _, e := range entries {
		if !isMessageFile(e.Name()) {
			continue
		}
		ent := m.readEntry(state, dir, e.Name())
		if state == StateDead {
			if reason, err := os.ReadFile(m.path(dir, e.Name()+ReasonSuffix)); err == nil {
				ent.Reason = reasonLine(string(reason))
				// An id derived from where the bytes were found changed
				// with the file's name: the one it was known by is kept.
				if id := recordedID(string(reason)); id != "" && ent.Problem == "" && dreamos.IsDerivedID(ent.Message.ID) {
					ent.Message.ID = id
				}
			}
		}
		out = append(out, ent)
	}
	sortEntries(out, state == StatePending)
	return out, nil
}

// recordedID is the id a reason file says its dead letter had.
func recordedID(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			return strings.TrimSpace(id)
		}
	}
	return ""
}

func reasonLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if r, ok := strings.CutPrefix(line, "reason: "); ok {
			return r
		}
	}
	return strings.TrimSpace(text)
}

func (m *Mailbox) readEntry(state, dir, name string) Entry {
	ent := Entry{State: state, File: dir + "/" + name}
	path := m.path(dir, name)
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err == nil {
		ent.Message, err = Decode(data, Source{Name: name, ModTime: fi.ModTime(), Owner: m.Agent})
	}
	if err != nil {
		ent.Problem = err.Error()
		ent.Message.CreatedAt = modTime(fi)
	}
	return ent
}

func modTime(fi fs.FileInfo) time.Time {
	if fi == nil {
		return time.Time{}
	}
	return fi.ModTime().UTC()
}

func (m *Mailbox) listPending() ([]Entry, error) {
	out, err := m.listDir(StatePending, InboxDir)
	if err != nil {
		return nil, err
	}
	waiting, err := m.readInboxJSON()
	if err != nil {
		return nil, err
	}
	out = append(out, waiting...)
	sortEntries(out, true)
	return out, nil
}

// readInboxJSON lists what waits in inbox.json, reading it under the
// writers' lock so a rewrite in progress is never seen half done, and what
// was taken out of it and waits in .ingest/.
func (m *Mailbox) readInboxJSON() ([]Entry, error) {
	spooled := m.spooledEntries()
	if IsEmptyInboxJSON(m.path(InboxJSON)) {
		return spooled, nil
	}
	lock, err := m.lockInboxJSON(defaultLockWait)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	data, err := sizecap.ReadFile(m.path(InboxJSON))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return spooled, nil
		}
		return nil, err
	}
	fi, _ := os.Stat(m.path(InboxJSON))
	raws, _, err := dreamos.InboxJSONEntries(data)
	if err != nil {
		return append(spooled, Entry{State: StatePending, File: InboxJSON, Problem: err.Error(), Message: Message{CreatedAt: modTime(fi)}}), nil
	}
	out := spooled
	for i, raw := range raws {
		name := fmt.Sprintf("%s[%d]", InboxJSON, i)
		ent := Entry{State: StatePending, File: name}
		// Named as in the spool it will be taken into, so that an entry
		// without an id is listed under the id it gets delivered with.
		src := Source{Name: name, ModTime: modTime(fi), Owner: m.Agent}
		if fi != nil {
			src.Name = SpoolEntryName(SpoolName(fi), i)
		}
		ent.Message, err = Decode(raw, src)
		if err != nil {
			ent.Problem = err.Error()
		}
		out = append(out, ent)
	}
	return out, nil
}

func (m *Mailbox) listDone() ([]Entry, error) {
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return nil, fmt.Errorf("cannot list the archive of %s: %w", m.Agent, err)
	}
	var out []Entry
	for _, d := range days {
		if !d.IsDir() {
			continue
		}
		dir := ArchiveDir + "/" + d.Name()
		entries, err := m.listDir(StateDone, dir)
		if err != nil {
			return nil, err
		}
		for i := range entries {
			stem := strings.TrimSuffix(entries[i].File, MessageSuffix)
			if r, err := readReceipt(m.path(stem + ReceiptSuffix)); err == nil {
				entries[i].Receipt = &r
			}
		}
		out = append(out, entries...)
	}
	sortEntries(out, false)
	return out, nil
}

func sortEntries(es []Entry, processingOrder bool) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i].Message, es[j].Message
		if processingOrder {
			if a.Priority.Rank() != b.Priority.Rank() {
				return a.Priority.Rank() < b.Priority.Rank()
			}
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
}

// Counts is how many messages a mailbox holds in each state.
type Counts struct {
	Pending, Processing, Done, Dead int
}

// Count counts messages by state from folder listings alone, without
// reading messages, so it stays quick on a large archive. Entries still
// inside inbox.json count as pending.
func (m *Mailbox) Count() (Counts, error) {
	var c Counts
	count := func(dir string, keep func(string) bool) (int, error) {
		entries, err := os.ReadDir(m.path(dir))
		if err != nil {
			return 0, fmt.Errorf("cannot count %s of %s: %w", dir, m.Agent, err)
		}
		n := 0
		for _, e := range entries {
			if keep(e.Name()) {
				n++
			}
		}
		return n, nil
	}
	var err error
	if c.Pending, err = count(InboxDir, isMessageFile); err != nil {
		return c, err
	}
	if waiting, err := m.readInboxJSON(); err == nil {
		c.Pending += len(waiting)
	}
	if c.Processing, err = count(ProcessingDir, isMessageFile); err != nil {
		return c, err
	}
	if c.Dead, err = count(DeadletterDir, isMessageFile); err != nil {
		return c, err
	}
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return c, fmt.Errorf("cannot count the archive of %s: %w", m.Agent, err)
	}
	for _, d := range days {
		if !d.IsDir() {
			continue // not a day of the archive; a person's stray file
		}
		n, err := count(ArchiveDir+"/"+d.Name(), func(n string) bool { return strings.HasSuffix(n, ReceiptSuffix) })
		if err != nil {
			return c, err
		}
		c.Done += n
	}
	return c, nil
}
