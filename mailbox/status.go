package mailbox

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// Status is the heartbeat a runner writes to status.json. Readers judge
// liveness by UpdatedAt and by checking the pid, never by State alone.
type Status struct {
	Agent string `json:"agent"`
	PID   int    `json:"pid"`
	// PIDStart is when the process PID started (process.StartTime's
	// token), so that a pid reused by another process is not taken for
	// the runner; 0 in records that kept none.
	PIDStart uint64 `json:"pid_start,omitempty"`
	Host     string `json:"host"`
	State    string `json:"state"`
	Current  string `json:"current,omitempty"`
	Subject  string `json:"subject,omitempty"`
	// Since is when State began: with State "working", the turn's start,
	// from which status tells a stalled turn.
	Since time.Time `json:"since,omitzero"`
	// Waiting says what keeps the runner from its work while it waits for
	// it to go away, e.g. a lock another process holds. Empty when nothing.
	Waiting   string         `json:"waiting,omitempty"`
	StartedAt time.Time      `json:"started_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Counters  map[string]int `json:"counters,omitempty"`
	// NoBlock is the runner's run of turns whose reply lacked the agentctl
	// block their prompt asked for. Unlike Counters it outlives the runner:
	// the next one reads it back, so a person is told once per run.
	NoBlock Streak `json:"no_block,omitzero"`
}

// Streak is a run of turns in a row that ended the same way: how many, and
// the message of the first, which names the run.
type Streak struct {
	Turns int    `json:"turns"`
	First string `json:"first"`
}

// WriteStatus replaces status.json atomically. It does not wait for the
// disk: a heartbeat is rewritten every run.heartbeat, and one lost in a power
// cut costs nothing.
func (m *Mailbox) WriteStatus(s Status) error {
	s.Agent = m.Agent
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFileNoSync(m.path(StatusJSON), append(data, '\n')); err != nil {
		return fmt.Errorf("cannot write heartbeat: %w", err)
	}
	return nil
}

// ReadStatus reads status.json; a missing file is an error wrapping
// fs.ErrNotExist.
func (m *Mailbox) ReadStatus() (Status, error) {
	var s Status
	data, err := os.ReadFile(m.path(StatusJSON))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("cannot read %s: %w", m.path(StatusJSON), err)
	}
	return s, nil
}
