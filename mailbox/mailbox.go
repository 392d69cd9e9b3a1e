package mailbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
)

// Mailbox is one agent's mailbox folder. It is cheap to open; opening does
// not lock anything, and every method is safe to call from several
// processes at once.
type Mailbox struct {
	Root  string
	Agent string
	Dir   string
	// Clock times the waits for the mailbox's own locks (LockByHand's,
	// inbox.json's for a listing); clock.System when nil. A Consumer's
	// are timed by its Options.Clock.
	Clock clock.Clock

	// afterLink runs between a delivery's link into inbox/ and its .seen
	// marker, so tests can claim the message at the worst moment.
	afterLink func()
}

// ErrNoMailbox is returned by Open when the agent's folder does not exist.
var ErrNoMailbox = errors.New("no mailbox")

// Open returns the mailbox of agent under root. The name must be valid (it
// becomes a folder name) and the folder must exist: agentctl never creates a
// mailbox as a side effect of a message, only `agentctl init` does.
func Open(root, agent string) (*Mailbox, error) {
	if err := agentname.Valid(agent); err != nil {
		return nil, err
	}
	dir := Dir(root, agent)
	if fi, err := os.Stat(filepath.Join(dir, InboxDir)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w for %s in %s", ErrNoMailbox, agent, root)
	}
	return &Mailbox{Root: root, Agent: agent, Dir: dir}, nil
}

func (m *Mailbox) path(parts ...string) string {
	return filepath.Join(append([]string{m.Dir}, parts...)...)
}

// safeStem matches ids that can be used as file names unchanged.
// safeStem says whether id matches ^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$,
// byte by byte: every delivery and count asks, and compiling the regular
// expression cost a short command more than its files did.
func safeStem(id string) bool {
	if len(id) == 0 || len(id) > 100 || id[0] == '_' || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Stem is the file name (without ".json") a message with this id gets in
// every folder of the mailbox. Ids that are not plain names (uuids are;
// "a/b", "{{uuid}}" or 300 characters are not) get a sanitised prefix and a
// hash, so the mapping stays one to one and never builds a path. Dots are
// not allowed in stems, which keeps "x.progress.jsonl" and "x.receipt.jsonl"
// unmistakable for sidecars.
func Stem(id string) string {
	if safeStem(id) {
		return id
	}
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= 60 {
			break
		}
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return "x" + b.String() + "-" + hex.EncodeToString(sum[:])[:16]
}

// ErrDuplicate is returned when a message with the same id was delivered
// before. The message is stored once; the duplicate is dropped.
var ErrDuplicate = errors.New("a message with this id was already delivered")

// DeliverNotice stores msg, a notice agentctl writes of itself, in its
// recipient's inbox, making a person's mailbox that does not exist yet. A
// notice of the same id delivered before is no error: notices derive
// their ids from what they tell, so telling it again stores nothing.
func DeliverNotice(root string, msg Message) error {
	if err := Create(root, msg.To); err != nil {
		return err
	}
	mb, err := Open(root, msg.To)
	if err != nil {
		return err
	}
	if err := mb.Deliver(msg); err != nil && !errors.Is(err, ErrDuplicate) {
		return err
	}
	return nil
}

// Deliver stores msg in the inbox, durably and atomically. Delivering an id
// that is already pending, in flight, archived or dead-lettered stores
// nothing and returns ErrDuplicate.
//
// Without any lock: the file is linked in only if its name is free (one
// pending copy at most), and a .seen marker, taken by whichever of this
// delivery and the claim comes first, remembers the id once the file has
// left inbox/. A delivery that finds the marker taken withdraws its copy
// only if the file is still its own (see withdraw).
func (m *Mailbox) Deliver(msg Message) error {
	if msg.ID == "" {
		return errors.New("cannot deliver a message without an id")
	}
	stem := Stem(msg.ID)
	if m.seen(stem) {
		return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, ErrDuplicate)
	}
	path := m.path(InboxDir, stem+MessageSuffix)
	data := msg.Encode()
	err := atomicfile.Create(path, data)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, err)
	}
	if m.afterLink != nil {
		m.afterLink()
	}
	// The marker goes in after the message landed: if we crash in between,
	// the claim adds it. If it is there already, either the consumer
	// claimed our file (and marked it) meanwhile, or an earlier copy of this
	// id went through and ours is the duplicate.
	fresh, err := m.markSeen(stem)
	if err != nil {
		return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, err)
	}
	if !fresh {
		delivered, err := m.withdraw(path, data)
		switch {
		case err != nil:
			return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, err)
		case !delivered:
			return fmt.Errorf("cannot deliver %s to %s: %w", msg.ID, m.Agent, ErrDuplicate)
		}
	}
	return nil
}

// DeliverBytes puts bytes that may be no message into the inbox under
// name, as a person dropping a file there would: the consumer reads them
// as it reads any dropped file, and dead-letters them with the reason when
// they are no message, so that nothing received is dropped unseen. A name
// taken already means the same bytes were delivered before, which is no
// error: callers derive the name from where the bytes came from.
func (m *Mailbox) DeliverBytes(name string, data []byte) error {
	if Ignored(name) || strings.ContainsAny(name, `/\`) {
		// A name the consumer would never read, or a path.
		return fmt.Errorf("cannot deliver %s to %s: not a name for a dropped file", name, m.Agent)
	}
	err := atomicfile.Create(m.path(InboxDir, name), data)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot deliver %s to %s: %w", name, m.Agent, err)
	}
	return nil
}

// withdrawSuffix ends the dot-name under which a delivery that found its
// id seen checks the file it linked (see withdraw).
const withdrawSuffix = layout.WithdrawingSuffix

// withdraw takes back the file a delivery linked at path once the id
// turned out to be seen already. The file there may not be ours any more:
// the consumer may have claimed ours and put it back (a retry, a postponed
// message) as a new file under the same name, and that one must stay. So
// whatever is at path is moved aside in one rename, removed only if it
// holds exactly what this delivery wrote, and put back otherwise.
// delivered is true when ours was the copy the consumer took.
func (m *Mailbox) withdraw(path string, ours []byte) (delivered bool, err error) {
	aside := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%016x%s", filepath.Base(path), rand.Uint64(), withdrawSuffix))
	if err := os.Rename(path, aside); errors.Is(err, fs.ErrNotExist) {
		return true, nil // the consumer claimed ours and has it still
	} else if err != nil {
		return false, err
	}
	if got, err := os.ReadFile(aside); err == nil && bytes.Equal(got, ours) {
		return false, os.Remove(aside)
	}
	if err := os.Rename(aside, path); err != nil {
		return true, fmt.Errorf("cannot put back %s: %w", path, err)
	}
	return true, nil
}

func isWithdrawn(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, withdrawSuffix)
}

// restoreWithdrawn puts back a file left aside by a delivery that died in
// withdraw, unless its name has been taken since, and returns that name.
// Such a file is either the delivery's own duplicate, which it died
// before removing, or a message the consumer had put back under that
// name (a retry). Only the latter has no copy elsewhere: one whose
// message is in flight, archived or dead-lettered is the duplicate, and
// is removed (dup) rather than worked again.
func (m *Mailbox) restoreWithdrawn(aside string) (name string, dup bool, err error) {
	rest := strings.TrimSuffix(strings.TrimPrefix(aside, "."), withdrawSuffix)
	dot := strings.LastIndexByte(rest, '.')
	if !isWithdrawn(aside) || dot < 0 {
		return "", false, nil
	}
	name = rest[:dot]
	if _, err := os.Lstat(m.path(InboxDir, name)); err == nil {
		return "", false, nil // taken: looked at again by the next scan
	}
	if m.handledElsewhere(aside) {
		return name, true, os.Remove(m.path(InboxDir, aside))
	}
	if err := os.Link(m.path(InboxDir, aside), m.path(InboxDir, name)); errors.Is(err, fs.ErrExist) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	return name, false, os.Remove(m.path(InboxDir, aside))
}

// handledElsewhere reports whether the message in inbox/'s file name is
// also in flight, archived or dead-lettered. A file that is no message,
// or a search that fails, says no: the file is then put back, and what
// is not a message dead-lettered as any dropped file is.
func (m *Mailbox) handledElsewhere(name string) bool {
	data, err := os.ReadFile(m.path(InboxDir, name))
	if err != nil {
		return false
	}
	msg, err := Decode(data, Source{Name: name, Owner: m.Agent})
	if err != nil || msg.ID == "" {
		return false
	}
	found, err := m.Locate(msg.ID)
	if err != nil {
		return false
	}
	for _, e := range found {
		if e.State != StatePending {
			return true
		}
	}
	return false
}

func (m *Mailbox) seen(stem string) bool {
	_, err := os.Lstat(m.path(SeenDir, stem))
	return err == nil
}

// markSeen records that stem was delivered or claimed; fresh is false when
// it already was. A marker is a hard link to one shared empty file: a link
// costs a folder entry, while creating a file costs an inode, which on some
// file systems takes longer than an fsync. Markers are not fsynced: losing
// one in a power cut only weakens duplicate detection for that id, it never
// loses a message.
func (m *Mailbox) markSeen(stem string) (fresh bool, err error) {
	marker := m.path(SeenDir, stem)
	err = os.Link(m.path(SeenDir, seenBase), marker)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err == nil, nil
	}
	// No base yet, or it has all the links its file system allows (65,000
	// on ext4, 1,024 on NTFS): start a new base, or fall back to a file.
	if err := m.newSeenBase(); err == nil {
		err = os.Link(m.path(SeenDir, seenBase), marker)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err == nil, nil
		}
	}
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, atomicfile.FilePerm)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot mark %s as seen: %w", stem, err)
	}
	return true, f.Close()
}

// seenBase is the empty file that .seen markers link to.
const seenBase = ".base"

// newSeenBase replaces the base with a fresh empty file; markers linked to
// the old one keep it alive.
func (m *Mailbox) newSeenBase() error {
	if err := atomicfile.MkdirAll(m.path(SeenDir)); err != nil {
		return err
	}
	return atomicfile.WriteFileNoSync(m.path(SeenDir, seenBase), nil)
}
