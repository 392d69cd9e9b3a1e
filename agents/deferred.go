package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/projectboard"
)

// deferredLockWait bounds how long the recovery check waits for the
// boards' lock: another writer holding it means the next check will do.
const deferredLockWait = time.Second

// ApplyDeferred makes the board changes that waited for the boards (a board
// a person left invalid), now that they may take them, and tells each
// asking agent's devlog. Every runner and `agentctl reconcile` run it; the
// boards' lock makes each change happen once.
func (rc *Recovery) ApplyDeferred(now time.Time) ([]Finding, error) {
	store := &projectboard.Store{Root: rc.Root, LockWait: deferredLockWait, Clock: rc.Clock}
	if !store.HasDeferred() {
		return nil, nil
	}
	applied, dropped, waiting, err := store.ApplyDeferred(context.Background())
	var found []Finding
	for _, c := range applied {
		f := Finding{Agent: c.By, Kind: "board-applied", ID: c.Task,
			Detail: fmt.Sprintf("made the change of task %s asked for at %s (%s), kept until the boards could take it", c.Task, c.At.UTC().Format(time.RFC3339), c.Key)}
		found = append(found, f)
		rc.tellDeferred(f, c, now, "board")
	}
	for _, c := range dropped {
		f := Finding{Agent: c.By, Kind: "board-dropped", ID: c.Task,
			Detail: fmt.Sprintf("dropped the kept change of task %s (%s): %s", c.Task, c.Key, c.Waited)}
		found = append(found, f)
		rc.tellDeferred(f, c, now, "failed")
	}
	// Still waiting: told once when kept, shown again by every reconcile.
	for _, c := range waiting {
		found = append(found, Finding{Agent: c.By, Kind: "board-waiting", ID: c.Task,
			Detail: fmt.Sprintf("the change of task %s asked for at %s (%s) waits: %s", c.Task, c.At.UTC().Format(time.RFC3339), c.Key, c.Waited)})
	}
	return found, err
}

func (rc *Recovery) tellDeferred(f Finding, c projectboard.Change, now time.Time, outcome string) {
	rc.Log.Info().Str("event", f.Kind).Str("task", c.Task).Str("key", c.Key).Msg(f.Detail)
	if c.By == "" {
		return
	}
	e := devlog.Entry{Time: now, Agent: c.By, MessageID: derivedID("deferred", c.Key), Subject: "board: " + c.Task,
		From: "agentctl", Outcome: outcome, Note: f.Detail}
	if f.Kind == "board-applied" {
		e.Actions = []string{"updated task " + c.Task}
	}
	if err := devlog.Append(rc.Root, e); err != nil {
		rc.Log.Warn().Err(err).Str("task", c.Task).Msg("devlog entry for a kept board change not written")
	}
}
