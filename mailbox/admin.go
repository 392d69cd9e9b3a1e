package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// This file holds what a person does to messages by hand (agentctl reply,
// retry, drop, skip): find a message wherever it is, settle one that no
// runner will, put a dead letter back. Each step keeps the rule that a
// message is in exactly one place, or says how a crash half-way is finished
// by running the same command again.

// Locate finds the message with this id, or the file with this name, in
// every folder of the mailbox: pending in inbox/, in flight, archived or
// dead. It changes nothing. Entries still inside inbox.json have no file of
// their own and are not found (package intake's Idle gives them one). Several entries
// come back only after a mishap, such as the same id dead-lettered twice.
func (m *Mailbox) Locate(ref string) ([]Entry, error) {
	var found []Entry
	stem := Stem(ref)
	for _, dir := range []struct{ state, dir string }{{StatePending, InboxDir}, {StateProcessing, ProcessingDir}} {
		if fi, err := os.Lstat(m.path(dir.dir, stem+MessageSuffix)); err == nil && fi.Mode().IsRegular() {
			found = append(found, m.readEntry(dir.state, dir.dir, stem+MessageSuffix))
		}
	}
	days, err := os.ReadDir(m.path(ArchiveDir))
	if err != nil {
		return nil, fmt.Errorf("cannot search the archive of %s: %w", m.Agent, err)
	}
	// A dead letter that never decoded is archived under its own name.
	names := []string{stem + MessageSuffix}
	if fileName(ref) && ref != names[0] {
		names = append(names, ref)
	}
	for _, d := range days {
		for _, name := range names {
			if _, err := os.Lstat(m.path(ArchiveDir, d.Name(), name)); err == nil {
				e := m.readEntry(StateDone, ArchiveDir+"/"+d.Name(), name)
				if r, err := readReceipt(m.path(ArchiveDir, d.Name(), strings.TrimSuffix(name, MessageSuffix)+ReceiptSuffix)); err == nil {
					e.Receipt = &r
				}
				found = append(found, e)
			}
		}
	}
	dead, err := m.listDir(StateDead, DeadletterDir)
	if err != nil {
		return nil, err
	}
	for _, e := range dead {
		if e.Message.ID == ref || path.Base(e.File) == ref {
			found = append(found, e)
		}
	}
	return found, nil
}

// fileName reports whether ref can be a file's own name in a folder: no
// separator, not a dot-file, not "." or "..".
func fileName(ref string) bool {
	return ref != "" && !strings.ContainsAny(ref, `/\`) && !strings.HasPrefix(ref, ".")
}

// ErrMoved is returned when a message moved on (claimed by a runner,
// settled by another command) while a person's command acted on it.
var ErrMoved = errors.New("it moved while this command acted on it")

// Settle archives a pending or dead message with a receipt of the given
// outcome ("dropped", "answered"), for messages a person settles instead of
// a runner. A message in flight is refused: only its runner may settle it.
//
// The message moves first and its receipt follows: the archive counts a
// message by its receipt. A crash in between leaves the message archived
// without one, in one place still.
func (m *Mailbox) Settle(e Entry, r Receipt, now time.Time) error {
	if e.State != StatePending && e.State != StateDead {
		return fmt.Errorf("cannot settle %s: it is %s, not pending or dead", e.File, e.State)
	}
	if _, err := os.Lstat(m.path(e.File)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot archive %s: %w", e.File, ErrMoved)
	}
	// A file that never decoded keeps its name, so it reads the same way.
	name := path.Base(e.File)
	if e.Message.ID != "" {
		name = Stem(e.Message.ID) + MessageSuffix
	}
	day := m.path(ArchiveDir, now.UTC().Format("2006-01-02"))
	if err := atomicfile.MkdirAll(day); err != nil {
		return err
	}
	dst := filepath.Join(day, name)
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("cannot archive %s: %s is taken", e.File, dst)
	}
	if err := os.Rename(m.path(e.File), dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot archive %s: %w", e.File, ErrMoved)
		}
		return fmt.Errorf("cannot archive %s: %w", e.File, err)
	}
	if e.State == StateDead {
		// Only once the dead letter has moved: it is never without a reason.
		if err := os.Remove(m.path(e.File + ReasonSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove the reason of %s: %w", e.File, err)
		}
	}
	r.ID, r.Agent, r.ClaimedAt, r.CompletedAt, r.Attempts = e.Message.ID, m.Agent, now, now, e.Message.Attempts
	log := Progress{ID: r.ID, Agent: m.Agent, PID: os.Getpid(), Host: hostname(), ClaimedAt: now, Attempt: r.Attempts,
		Stage: StageDone, Stages: map[string]time.Time{StageDone: now}, Receipt: &r}
	line, err := jsonLine(log)
	if err != nil {
		return err
	}
	if err := atomicfile.Create(filepath.Join(day, strings.TrimSuffix(name, MessageSuffix)+ReceiptSuffix), line); err != nil {
		return fmt.Errorf("cannot write the receipt of %s: %w", e.File, err)
	}
	return nil
}

// DeadLetter is a dead letter read back with the reason beside it.
type DeadLetter struct {
	Entry
	// DiedAt is when it was dead-lettered, from its reason file.
	DiedAt time.Time
}

// HistoryKey is the key in a message's Meta under which Requeue keeps the
// dead letters it came back from, oldest first, so that how the message
// went before stays with it to its receipt.
const HistoryKey = "deadletter_history"

// Death is how a message died once before a person brought it back:
// one entry of its HistoryKey list. Fields are in the order of their
// JSON names, so a history written before this type existed, as a map,
// reads and writes back byte for byte.
type Death struct {
	Agent          string `json:"agent"`
	Attempts       int    `json:"attempts"`
	DeadletteredAt string `json:"deadlettered_at,omitempty"` // RFC 3339, from the reason file
	File           string `json:"file"`
	LastError      string `json:"last_error,omitempty"`
	Reason         string `json:"reason"`
}

// Deaths returns the message's history of deaths, oldest first; nil when it
// has none or its history cannot be read as one.
func Deaths(msg Message) []Death {
	raw, ok := msg.Meta[HistoryKey]
	if !ok {
		return nil
	}
	if h, ok := raw.([]Death); ok {
		return h
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var h []Death
	if json.Unmarshal(data, &h) != nil {
		return nil
	}
	return h
}

// ReadDeadLetter reads a dead letter found by Locate, with the reason and
// time of its reason file.
func (m *Mailbox) ReadDeadLetter(e Entry) DeadLetter {
	dl := DeadLetter{Entry: e}
	if text, err := os.ReadFile(m.path(e.File + ReasonSuffix)); err == nil {
		for _, line := range strings.Split(string(text), "\n") {
			if t, ok := strings.CutPrefix(line, "time: "); ok {
				dl.DiedAt, _ = time.Parse(time.RFC3339, strings.TrimSpace(t))
			}
		}
	}
	return dl
}

// Requeue puts a dead letter back into to's inbox (to may be m) with its
// attempts reset, addressed to to, and its death recorded under
// HistoryKey. It gets past duplicate detection on purpose: the id's .seen
// marker stays, and the file goes into inbox/ directly. A dead letter that
// no longer decodes is left where it is, and the error says why.
//
// The copy is created before the dead letter is removed, so a crash in
// between leaves both; running Requeue again recognises its own copy by
// the history entry and only removes the dead letter.
func (m *Mailbox) Requeue(dl DeadLetter, to *Mailbox, now time.Time) (Message, error) {
	if dl.State != StateDead {
		return Message{}, fmt.Errorf("cannot retry %s: it is %s, not dead", dl.File, dl.State)
	}
	if dl.Problem != "" {
		return Message{}, fmt.Errorf("cannot retry %s: it still cannot be read: %s", dl.File, dl.Problem)
	}
	msg := dl.Message
	entry := Death{Agent: m.Agent, File: dl.File, Reason: dl.Reason, Attempts: msg.Attempts, LastError: msg.LastError}
	if !dl.DiedAt.IsZero() {
		entry.DeadletteredAt = dl.DiedAt.UTC().Format(time.RFC3339)
	}
	meta := make(map[string]any, len(msg.Meta)+1)
	for k, v := range msg.Meta {
		meta[k] = v
	}
	meta[HistoryKey] = append(slices.Clone(Deaths(msg)), entry)
	msg.Meta = meta
	msg.To, msg.Attempts, msg.LastError, msg.DeliverAfter = to.Agent, 0, "", nil
	if msg.ExpiresAt != nil && now.After(*msg.ExpiresAt) {
		msg.ExpiresAt = nil // a person asked for it again: its old deadline no longer holds
	}

	copies, err := to.Locate(msg.ID)
	if err != nil {
		return Message{}, err
	}
	for _, c := range copies {
		if c.State != StateDead && cameFrom(c.Message, entry) {
			return msg, m.removeDeadLetter(dl.File) // an earlier Requeue got this far
		}
	}
	for _, c := range copies {
		if c.State != StateDead {
			return Message{}, fmt.Errorf("cannot retry %s: %s already has a message with id %s (%s)", dl.File, to.Agent, msg.ID, c.File)
		}
	}
	if err := atomicfile.Create(to.path(InboxDir, Stem(msg.ID)+MessageSuffix), msg.Encode()); err != nil {
		return Message{}, fmt.Errorf("cannot retry %s: %w", dl.File, err)
	}
	return msg, m.removeDeadLetter(dl.File)
}

// cameFrom reports whether msg was requeued from the dead letter that
// entry describes.
func cameFrom(msg Message, entry Death) bool {
	return slices.ContainsFunc(Deaths(msg), func(d Death) bool {
		return d.Agent == entry.Agent && d.File == entry.File && d.DeadletteredAt == entry.DeadletteredAt
	})
}

func jsonLine(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	return append(data, '\n'), err
}

// removeDeadLetter removes a dead letter that lives on elsewhere, then its
// reason.
func (m *Mailbox) removeDeadLetter(file string) error {
	for _, p := range []string{m.path(file), m.path(file + ReasonSuffix)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove the dead letter %s: %w", file, err)
		}
	}
	return atomicfile.SyncDir(m.path(DeadletterDir))
}
