package layout

import (
	"fmt"
	"path/filepath"

	"github.com/agentctl/agentctl/internal/agentname"
)

// Agent is where one agent's files live under a runtime root. Only For
// makes one, so none of its paths is built from a name that could leave
// its folder ("..", a separator, a dot-file).
type Agent struct {
	root, name string
}

// For returns the paths of agent under root, or the reason the name
// cannot become a folder name.
func For(root, agent string) (Agent, error) {
	if err := agentname.Valid(agent); err != nil {
		return Agent{}, err
	}
	return Agent{root: root, name: agent}, nil
}

// MustFor is For for callers that validated the name already, as their
// own contract requires: an invalid name there is a bug in agentctl, and
// building a path from it anyway could write outside the runtime.
func MustFor(root, agent string) Agent {
	a, err := For(root, agent)
	if err != nil {
		panic(fmt.Sprintf("layout: a path was asked for an unchecked agent name: %v", err))
	}
	return a
}

// MustPath is a path made, as MustFor makes an Agent, from a name its
// caller validated already: SessionFile, RawOutput, ServiceLog.
func MustPath(path string, err error) string {
	if err != nil {
		panic(fmt.Sprintf("layout: a path was asked for an unchecked agent name: %v", err))
	}
	return path
}

// Name is the agent's name.
func (a Agent) Name() string { return a.name }

// Mailbox is the agent's mailbox folder.
func (a Agent) Mailbox() string { return filepath.Join(Mailboxes(a.root), a.name) }

// InMailbox is a file or folder of the agent's mailbox, e.g. InboxDir.
func (a Agent) InMailbox(name ...string) string {
	return filepath.Join(append([]string{a.Mailbox()}, name...)...)
}

// Devlog is the agent's devlog.
func (a Agent) Devlog() string { return filepath.Join(Devlogs(a.root), a.name+DevlogSuffix) }

// ConsumerLock is the lock whose holder consumes the agent's mailbox.
func (a Agent) ConsumerLock() string {
	return filepath.Join(Locks(a.root), a.name+".consumer"+LockSuffix)
}

// ByHandLock is the lock a person's command takes while it acts on a
// message of the agent's mailbox by hand (reply, approve, deny, drop,
// retry).
func (a Agent) ByHandLock() string {
	return filepath.Join(Locks(a.root), a.name+".by-hand"+LockSuffix)
}

// Journal is the folder where the agent's seat keeps its journal.
func (a Agent) Journal() string { return filepath.Join(a.root, SeatsDir, a.name) }

// CursorHome is the folder of a Cursor started for the agent's seat.
func (a Agent) CursorHome() string { return filepath.Join(a.root, CursorDir, a.name) }

// CursorProfile is that Cursor's profile (its --user-data-dir).
func (a Agent) CursorProfile() string { return filepath.Join(a.CursorHome(), "profile") }

// CursorLaunchLog is what that Cursor prints.
func (a Agent) CursorLaunchLog() string { return filepath.Join(a.CursorHome(), "launch.log") }

// Workspace is the workspace such a Cursor opens when the configuration
// names none.
func (a Agent) Workspace() string { return filepath.Join(a.root, WorkspacesDir, a.name) }

// SendKeys is the folder where `agentctl mcp --as` the agent remembers
// the idempotency keys of its sends, one file per key.
func (a Agent) SendKeys() string { return filepath.Join(a.root, MCPDir, a.name, "keys") }

// SendKeysLock is the lock every writer of SendKeys takes.
func (a Agent) SendKeysLock() string {
	return filepath.Join(Locks(a.root), a.name+".mcp-keys"+LockSuffix)
}

// Worktree is the git worktree an exec seat with worktree: true works in.
func (a Agent) Worktree() string { return filepath.Join(a.root, WorktreesDir, a.name) }

// ServiceLog is what the installed service named name prints: an agent's
// runner, or "up".
func ServiceLog(root, name string) (string, error) {
	if err := agentname.Valid(name); err != nil {
		return "", err
	}
	return filepath.Join(root, LogsDir, name+".log"), nil
}

// SessionFile is where the agent's conversation is recorded in the
// sessions folder dir (Sessions, or another a caller chose).
func SessionFile(dir, agent string) (string, error) {
	if err := agentname.Valid(agent); err != nil {
		return "", err
	}
	return filepath.Join(dir, agent+".json"), nil
}

// RawOutput is where the exec driver keeps, in the sessions folder dir,
// what the agent's command printed in a turn that gave no reply.
func RawOutput(dir, agent string) (string, error) {
	if err := agentname.Valid(agent); err != nil {
		return "", err
	}
	return filepath.Join(dir, agent+".raw"), nil
}

// Notified is the folder of records of the messages in person's mailbox
// that notify (agentctl.yaml's notify:) has told them of.
func Notified(root, person string) (string, error) {
	if err := agentname.Valid(person); err != nil {
		return "", err
	}
	return filepath.Join(root, NotifiedDir, person), nil
}
