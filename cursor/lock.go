package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/internal/process"
)

// InputLock is the desktop input lock: one file lock per display under the
// runtime's locks folder, taken by every agentctl process before it uses the
// mouse, keyboard or clipboard, and released while the model thinks.
//
// It is a kernel file lock, so a process that dies releases it at once.
type InputLock struct {
	path string
	wait time.Duration
	lock *flock.Flock
	// Agent is whose turn takes the lock, recorded for `agentctl status`.
	Agent string
	// Clock times the wait for the lock; clock.System when nil.
	Clock clock.Clock
}

// lockRetry is how often a waiting process tries the lock again.
const lockRetry = 10 * time.Millisecond

// NewInputLock returns the lock for the current display. wait bounds each
// Acquire.
func NewInputLock(dir string, wait time.Duration) *InputLock {
	path := layout.DesktopLock(dir, displayKey())
	return &InputLock{path: path, wait: wait, lock: lockfile.New(path)}
}

// Path is the lock file.
func (l *InputLock) Path() string { return l.path }

// Acquire takes the lock, waiting at most the configured time.
func (l *InputLock) Acquire(ctx context.Context) error {
	if err := atomicfile.MkdirAll(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("cannot create the lock folder: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := lockfile.Take(ctx, l.lock, lockfile.Wait{For: l.wait, Poll: lockRetry, Clock: l.Clock})
	var busy *lockfile.BusyError
	switch {
	case err == nil:
		l.recordHolder()
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &busy):
		holder := busy.Holder.String()
		if holder == "" {
			holder = "another process"
		}
		return fmt.Errorf("%w after %s: %s holds the desktop input lock %s (another agentctl using the mouse and keyboard, or a stuck process)", ErrInputLockTimeout, l.wait, holder, l.path)
	default:
		return fmt.Errorf("cannot take the desktop input lock: %w", err)
	}
}

// Release gives the lock back.
func (l *InputLock) Release() error {
	// The record goes first: removed after unlocking, it could be the next
	// holder's.
	os.Remove(l.path + holderSuffix)
	if err := l.lock.Unlock(); err != nil {
		return fmt.Errorf("cannot release the desktop input lock %s: %w", l.path, err)
	}
	return nil
}

// holderSuffix ends the name of the file beside a desktop lock that says
// who holds it (layout.HolderSuffix).
const holderSuffix = layout.HolderSuffix

// Holder is who holds a desktop input lock.
type Holder struct {
	Lock  string    `json:"lock"` // the lock file's name, which names the display
	PID   int       `json:"pid"`
	Start uint64    `json:"start,omitempty"` // process.StartTime of PID, where known
	Agent string    `json:"agent,omitempty"`
	Since time.Time `json:"since"`
}

// recordHolder writes the holder record. It is for people reading status,
// so failing to write it does not fail the turn.
func (l *InputLock) recordHolder() {
	h := Holder{Lock: filepath.Base(l.path), PID: os.Getpid(), Agent: l.Agent, Since: time.Now().UTC()}
	h.Start, _ = process.StartTime(h.PID)
	if data, err := json.Marshal(h); err == nil {
		atomicfile.WriteFileNoSync(l.path+holderSuffix, append(data, '\n'))
	}
}

// Holders lists the live holders of the desktop input locks in dir (one
// lock per display). A record whose process is gone, or whose pid now names
// another process, is not a holder: the kernel released its lock.
func Holders(dir string) []Holder {
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
		h.Lock = strings.TrimSuffix(filepath.Base(name), holderSuffix)
		out = append(out, h)
	}
	return out
}

var unsafeInName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// displayKey names the desktop the lock guards: the X display on Unix, the
// one interactive desktop elsewhere.
func displayKey() string {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return "console"
	}
	d := os.Getenv("DISPLAY")
	if d == "" {
		return "none"
	}
	// ":0" and ":0.0" are the same desktop: the screen number does not
	// matter, the keyboard is shared.
	if i := lastIndexByte(d, '.'); i > lastIndexByte(d, ':') {
		d = d[:i]
	}
	return "x11" + unsafeInName().ReplaceAllString(d, "_")
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
