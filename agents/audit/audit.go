// Package audit owns the audit log, runtime/audit/YYYY-MM-DD.jsonl: one
// JSON object per line for every effect a reply had or was refused, every
// effect parked for a person's approval, and every approval and denial.
//
// Each record is appended with a single O_APPEND write, so runners and
// commands in other processes append to the same day's file without
// interleaving. Callers write a record only after its effect happened (or
// was refused): a crash in between may lose a line, never invent one.
//
// The package decides nothing about effects; it never reads or writes
// anything but the audit folder.
package audit

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentctl/agentctl/internal/jsonl"
	"github.com/agentctl/agentctl/internal/layout"
)

// DirName is the audit folder's name under a runtime root.
const DirName = layout.AuditDir

// Verdicts a record may carry.
const (
	Applied  = "applied"  // the effect happened
	Refused  = "refused"  // it was refused (a guardrail, a bad item, a failed change)
	Deferred = "deferred" // a board change kept until the boards can take it
	Parked   = "parked"   // held for a person's approval
	Approved = "approved" // a person approved a parked effect, which then happened
	Denied   = "denied"   // a person denied a parked effect
)

// Record is one line of the audit log.
type Record struct {
	Time      time.Time `json:"time"`
	Agent     string    `json:"agent"`      // whose reply caused the effect
	MessageID string    `json:"message_id"` // the message the reply answered
	Kind      string    `json:"kind"`       // send, board, devlog, ack, note, approval, item
	What      string    `json:"what"`       // the effect, in words
	Verdict   string    `json:"verdict"`
	Reason    string    `json:"reason,omitempty"`
	By        string    `json:"by,omitempty"` // the person who approved or denied
}

// Dir is the audit folder of a runtime root.
func Dir(root string) string { return layout.Audit(root) }

// Path is the audit log of the day t falls on, in UTC.
func Path(root string, t time.Time) string {
	return filepath.Join(Dir(root), t.UTC().Format(layout.DayFormat)+layout.DaySuffix)
}

// Append adds r to the log of its day in one O_APPEND write.
func Append(root string, r Record) error {
	if r.Time.IsZero() {
		return errors.New("cannot write the audit log: the record has no time")
	}
	r.Time = r.Time.UTC()
	if err := jsonl.Append(Path(root, r.Time), r); err != nil {
		return fmt.Errorf("cannot write the audit log: %w", err)
	}
	return nil
}

// Read returns the records of the day t falls on; a day without a log has
// none. A line that is not a record (cut short by a crash) is skipped.
func Read(root string, t time.Time) ([]Record, error) {
	out, err := jsonl.Read(Path(root, t), func(r Record) bool { return !r.Time.IsZero() })
	if err != nil {
		return out, fmt.Errorf("cannot read the audit log: %w", err)
	}
	return out, nil
}
