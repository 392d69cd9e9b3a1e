package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// The folders and files of one agent's mailbox, relative to its folder;
// internal/layout owns their names.
const (
	InboxDir      = layout.InboxDir
	ProcessingDir = layout.ProcessingDir
	ArchiveDir    = layout.ArchiveDir
	DeadletterDir = layout.DeadletterDir
	// SeenDir holds one empty marker per message id ever delivered, so that
	// a message delivered twice is stored once even after it was archived.
	SeenDir = layout.SeenDir
	// IngestDir holds what was taken out of inbox.json under the writers'
	// lock and is not yet delivered in full: one spool file per taking.
	IngestDir     = layout.IngestDir
	InboxJSON     = layout.InboxJSON
	InboxJSONLock = layout.InboxJSONLock
	StatusJSON    = layout.StatusJSON
	// MessageSuffix ends a message's file name after its stem.
	MessageSuffix = layout.MessageSuffix
)

// Dir is the folder of an agent's mailbox under a runtime root. The name must
// already be valid; Dir never sees a raw user string (see Open), and
// panics on one rather than build a path from it.
func Dir(root, agent string) string {
	return layout.MustFor(root, agent).Mailbox()
}

// LocksDir is the runtime root's folder of cross-process locks.
func LocksDir(root string) string { return layout.Locks(root) }

// layoutDirs are the folders inside every mailbox.
var layoutDirs = []string{InboxDir, ProcessingDir, ArchiveDir, DeadletterDir, SeenDir}

// Create makes the folders of an agent's mailbox. It is idempotent and never
// touches what is already there.
func Create(root, agent string) error {
	if err := agentname.Valid(agent); err != nil {
		return err
	}
	dir := Dir(root, agent)
	for _, sub := range layoutDirs {
		if err := atomicfile.MkdirAll(filepath.Join(dir, sub)); err != nil {
			return fmt.Errorf("cannot create mailbox of %s: %w", agent, err)
		}
	}
	return nil
}

// ensureDir makes sure the mailbox has its folder sub, making it if it
// was removed, but never the mailbox folder itself (see Repair). made says
// whether it had to.
func (m *Mailbox) ensureDir(sub string) (made bool, err error) {
	err = os.Mkdir(m.path(sub), atomicfile.DirPerm)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err == nil, nil
	}
	if _, serr := os.Stat(m.Dir); errors.Is(serr, fs.ErrNotExist) {
		return false, fmt.Errorf("the mailbox folder %s was removed: %w", m.Dir, ErrNoMailbox)
	}
	return false, fmt.Errorf("cannot recreate %s: %w", m.path(sub), err)
}

// Repair recreates the folders of the mailbox that were removed while it
// was in use, and returns their names. The mailbox folder itself is never
// recreated: when it is gone, the agent was removed or the runtime moved,
// and only a person can say which.
func (m *Mailbox) Repair() (recreated []string, err error) {
	for _, sub := range layoutDirs {
		made, err := m.ensureDir(sub)
		if err != nil {
			return recreated, err
		}
		if made {
			recreated = append(recreated, sub)
		}
	}
	return recreated, nil
}
