package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// ReasonSuffix ends the name of the file that explains why its neighbour
// is in deadletter/.
const ReasonSuffix = layout.ReasonSuffix

// Letter is one thing going to deadletter/: a file moved there whole, or
// bytes that never were a file of their own (an entry of inbox.json, the
// stale tail of one, a message of an appended text file).
type Letter struct {
	// Name is its name in deadletter/.
	Name string
	// Fresh makes Name free first, by a number in front, so that a dead
	// letter never replaces another. Without it, Name is derived from
	// where the letter came from, and Data found there already was written
	// before a crash: nothing is written or reported again.
	Fresh bool
	// From is the file moved in by rename; "" when Data holds the letter.
	From string
	Data []byte
	// Origin is where it was, as the reason file says: "inbox/x.md",
	// "inbox.json[3]", a path outside the mailbox.
	Origin string
	ID     string // the message's id, when it decoded
	Reason string
	// Seen marks ID as delivered here once the letter is written: a
	// message the mailbox has received, if only to keep it dead (one the
	// old system had handled), is never delivered or imported again.
	Seen bool
}

// WriteDeadLetter is the one writer of deadletter/: it writes the reason
// first, then the letter, so a dead letter is never without its reason.
// written is false when there was nothing to do: the file to move was
// gone, or the letter was written before. The folder is recreated if
// someone removed it: a dead letter must always land.
func (m *Mailbox) WriteDeadLetter(l Letter, now time.Time) (written bool, err error) {
	written, err = m.writeDeadLetter(l, now)
	if err == nil && l.Seen && l.ID != "" {
		if _, err := m.markSeen(Stem(l.ID)); err != nil {
			return written, fmt.Errorf("cannot dead-letter %s: %w", l.Origin, err)
		}
	}
	return written, err
}

func (m *Mailbox) writeDeadLetter(l Letter, now time.Time) (bool, error) {
	if l.From == "" {
		if _, err := os.Lstat(m.path(DeadletterDir, l.Name)); err == nil && !l.Fresh {
			return false, nil
		}
	}
	if _, err := m.ensureDir(DeadletterDir); err != nil {
		return false, fmt.Errorf("cannot dead-letter %s: %w", l.Origin, err)
	}
	name := l.Name
	if l.Fresh {
		name = m.freeDeadletterName(name)
	}
	reason := m.path(DeadletterDir, name+ReasonSuffix)
	if err := atomicfile.WriteFile(reason, reasonText(m.Agent, l.Origin, l.ID, l.Reason, now)); err != nil {
		return false, fmt.Errorf("cannot dead-letter %s: %w", l.Origin, err)
	}
	if l.From == "" {
		err := atomicfile.Create(m.path(DeadletterDir, name), l.Data)
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("cannot dead-letter %s: %w", l.Origin, err)
		}
		return true, nil
	}
	if err := os.Rename(l.From, m.path(DeadletterDir, name)); err != nil {
		// A reason without its letter would only puzzle a person.
		os.Remove(reason)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("cannot dead-letter %s: %w", l.Origin, err)
	}
	return true, atomicfile.SyncDir(m.path(DeadletterDir))
}

// reasonText is what a person reads next to a dead letter.
func reasonText(agent, file, id, reason string, now time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s\n", agent)
	fmt.Fprintf(&b, "file: %s\n", file)
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	fmt.Fprintf(&b, "time: %s\n", now.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "reason: %s\n", reason)
	return []byte(b.String())
}

// freeDeadletterName picks a name in deadletter/ that is not taken yet, so a
// dead letter never replaces another.
func (m *Mailbox) freeDeadletterName(name string) string {
	candidate := name
	for i := 2; ; i++ {
		if _, err := os.Lstat(m.path(DeadletterDir, candidate)); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Lstat(m.path(DeadletterDir, candidate+ReasonSuffix)); errors.Is(err, fs.ErrNotExist) {
				return candidate
			}
		}
		candidate = fmt.Sprintf("%d-%s", i, name)
	}
}

// deadletterFile moves a file that cannot be used out of inbox/ into
// deadletter/; id is the message's when it decoded, which the reason file
// keeps: an id derived from the file's name would change with the name.
func (c *Consumer) deadletterFile(name, id, reason string, now time.Time) error {
	c.settling.Forget(name)
	_, err := c.mb.WriteDeadLetter(Letter{Name: now.UTC().Format("20060102T150405Z") + "-" + name, Fresh: true,
		From: c.mb.path(InboxDir, name), Origin: InboxDir + "/" + name, ID: id, Reason: reason}, now)
	if err != nil {
		return err
	}
	c.emit("deadlettered", id, name, reason)
	return nil
}
