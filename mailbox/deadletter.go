package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// ReasonSuffix ends the name of the file that explains why its neighbour
// is in deadletter/.
const ReasonSuffix = ".reason.txt"

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
// deadletter/, reason first, so it is never without one.
func (c *Consumer) deadletterFile(name, reason string, now time.Time) error {
	delete(c.settling, name)
	dst := c.mb.freeDeadletterName(now.UTC().Format("20060102T150405Z") + "-" + name)
	if err := c.mb.moveToDeadletter(c.mb.path(InboxDir, name), dst, reasonText(c.mb.Agent, InboxDir+"/"+name, "", reason, now)); err != nil {
		return err
	}
	c.emit("deadlettered", "", name, reason)
	return nil
}

func (m *Mailbox) moveToDeadletter(src, dstName string, reason []byte) error {
	// Recreated if someone removed it: a dead letter must always land.
	if _, err := m.ensureDir(DeadletterDir); err != nil {
		return fmt.Errorf("cannot dead-letter %s: %w", src, err)
	}
	if err := atomicfile.WriteFile(m.path(DeadletterDir, dstName+ReasonSuffix), reason); err != nil {
		return fmt.Errorf("cannot dead-letter %s: %w", src, err)
	}
	if err := os.Rename(src, m.path(DeadletterDir, dstName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			os.Remove(m.path(DeadletterDir, dstName+ReasonSuffix))
			return nil
		}
		return fmt.Errorf("cannot dead-letter %s: %w", src, err)
	}
	return atomicfile.SyncDir(m.path(DeadletterDir))
}
