package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// Record files msg straight into the archive with a receipt of r's
// outcome, never passing through inbox/: a message that is history, not
// work (one an older system had handled, or kept aside in a backup), so
// that it can be found and read but is never worked. Like Deliver, an id
// recorded or delivered before is ErrDuplicate.
//
// The archived file goes first and the .seen marker last: a crash in
// between leaves the message archived, and recording it again finds the
// file there and is a duplicate.
func (m *Mailbox) Record(msg Message, r Receipt, now time.Time) error {
	if msg.ID == "" {
		return errors.New("cannot record a message without an id")
	}
	stem := Stem(msg.ID)
	if m.seen(stem) {
		return fmt.Errorf("cannot record %s in %s: %w", msg.ID, m.Agent, ErrDuplicate)
	}
	day := m.path(ArchiveDir, now.UTC().Format("2006-01-02"))
	if err := atomicfile.MkdirAll(day); err != nil {
		return err
	}
	err := atomicfile.Create(filepath.Join(day, stem+MessageSuffix), msg.Encode())
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot record %s in %s: %w", msg.ID, m.Agent, ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("cannot record %s in %s: %w", msg.ID, m.Agent, err)
	}
	r.ID, r.Agent, r.ClaimedAt, r.CompletedAt = msg.ID, m.Agent, now, now
	log := Progress{ID: r.ID, Agent: m.Agent, PID: os.Getpid(), Host: hostname(), ClaimedAt: now,
		Stage: StageDone, Stages: map[string]time.Time{StageDone: now}, Receipt: &r}
	line, err := jsonLine(log)
	if err != nil {
		return err
	}
	if err := atomicfile.Create(filepath.Join(day, stem+ReceiptSuffix), line); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot write the receipt of %s: %w", msg.ID, err)
	}
	if _, err := m.markSeen(stem); err != nil {
		return fmt.Errorf("cannot record %s in %s: %w", msg.ID, m.Agent, err)
	}
	return nil
}

// Seen reports whether a message with this id was delivered or recorded
// here before: delivering it again would be a duplicate.
func (m *Mailbox) Seen(id string) bool { return id != "" && m.seen(Stem(id)) }
