// Package lockholder keeps the records of who holds a desktop input lock
// (package cursor's InputLock), which 'agentctl status' and mission
// control show: apart from cursor, so that reading them does not link the
// desktop drivers.
//
// It owns the record beside each lock (layout.HolderSuffix): its shape,
// its writer (Record) and its reader (List). It never takes, waits on or
// releases a lock: cursor's InputLock does, through internal/lockfile,
// and removes the record as it lets go.
package lockholder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/process"
)

// Suffix ends the name of the file beside a desktop lock that says who
// holds it (layout.HolderSuffix).
const Suffix = layout.HolderSuffix

// Holder is who holds a desktop input lock.
type Holder struct {
	Lock  string    `json:"lock"` // the lock file's name, which names the display
	PID   int       `json:"pid"`
	Start uint64    `json:"start,omitempty"` // process.StartTime of PID, where known
	Agent string    `json:"agent,omitempty"`
	Since time.Time `json:"since"`
}

// Record writes, beside the lock file at lock, that this process holds it
// for agent. It is for people reading status, so failing to write it does
// not fail the turn.
func Record(lock, agent string) {
	h := Holder{Lock: filepath.Base(lock), PID: os.Getpid(), Agent: agent, Since: time.Now().UTC()}
	h.Start, _ = process.StartTime(h.PID)
	if data, err := json.Marshal(h); err == nil {
		atomicfile.WriteFileNoSync(lock+Suffix, append(data, '\n'))
	}
}

// List lists the live holders of the desktop input locks in dir (one
// lock per display). A record whose process is gone, or whose pid now names
// another process, is not a holder: the kernel released its lock.
func List(dir string) []Holder {
	names, _ := filepath.Glob(layout.DesktopLockHolders(dir))
	var out []Holder
	for _, name := range names {
		data, err := os.ReadFile(name)
		var h Holder
		if err != nil || json.Unmarshal(data, &h) != nil || !process.Alive(h.PID) {
			continue
		}
		if start, err := process.StartTime(h.PID); err == nil && h.Start != 0 && start != h.Start {
			continue
		}
		h.Lock = strings.TrimSuffix(filepath.Base(name), Suffix)
		out = append(out, h)
	}
	return out
}
