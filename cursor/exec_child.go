package cursor

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/agentctl/agentctl/internal/process"
)

// How long EndChild lets a command stop on its own after asking, and how
// long it waits for it to go once killed.
const (
	childGrace    = 3 * time.Second
	childKillWait = 10 * time.Second
)

// EndChild ends what is left of a command an earlier process started and
// recorded through Turn.OnStart, before a turn that would run the prompt
// again: it asks the command's whole process group to stop, kills it after
// a short grace, and returns only once nothing of it runs. It never signals
// a process that merely got the recorded pid. It reports whether anything
// was left to end.
func EndChild(c Child) (bool, error) { return endChild(c, childGrace, childKillWait) }

func endChild(c Child, grace, killWait time.Duration) (bool, error) {
	start, startErr := process.StartTime(c.PID)
	alive, err := childAlive(c)
	if err != nil {
		return false, fmt.Errorf("cannot tell whether command %d still runs: %w", c.PID, err)
	}
	older := false
	if alive && startErr != nil && c.StartTime != 0 {
		// The leader is gone: its group is the recorded one only if no
		// member started before it. Unknown (not Linux): trusted, as
		// before.
		oldest, found, err := process.GroupOldestStart(c.PGID)
		older = err == nil && found && oldest < c.StartTime
	}
	switch judgeChild(c, start, startErr, alive, older) {
	case childGone, childStranger:
		return false, nil
	case childUnknown:
		return false, fmt.Errorf("cannot tell whether pid %d is still the command started for this turn: its start time is unknown (%v)", c.PID, startErr)
	}
	if err := signalChild(c, false); err != nil {
		return false, err
	}
	if waitChildGone(c, grace) {
		return true, nil
	}
	if err := signalChild(c, true); err != nil {
		return false, err
	}
	if !waitChildGone(c, killWait) {
		return false, fmt.Errorf("command %d still runs %s after it was killed", c.PID, killWait)
	}
	return true, nil
}

// childFate is what is left of a recorded command.
type childFate int

const (
	childGone     childFate = iota // nothing of it runs
	childStranger                  // its pid names another process now
	childRunning                   // it, or what it spawned, still runs
	childUnknown                   // its pid runs, but whose it is cannot be told
)

// judgeChild tells what is left of c from what the system says now: the
// start time of c.PID (or why it cannot be read), whether c's process
// group still runs, and whether one of its members started before c did.
func judgeChild(c Child, start uint64, startErr error, groupAlive, older bool) childFate {
	switch {
	case c.PID <= 0:
		return childGone
	case errors.Is(startErr, fs.ErrNotExist):
		// The command itself is gone. A group still running without it is
		// the one it led (a pid is not given out while a group bears it),
		// unless a member is older than the command: then the number was
		// given out again and others joined the new group.
		switch {
		case groupAlive && older:
			return childStranger
		case groupAlive:
			return childRunning
		}
		return childGone
	case startErr != nil || c.StartTime == 0:
		return childUnknown
	case start != c.StartTime:
		// A new process got the pid, so the recorded group, which bore
		// it, had ended.
		return childStranger
	case groupAlive:
		return childRunning
	}
	return childGone
}

// waitChildGone polls until nothing of c runs or limit passes, and says
// which came first.
func waitChildGone(c Child, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if alive, err := childAlive(c); err == nil && !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
