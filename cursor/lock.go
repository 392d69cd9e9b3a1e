package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/cursor/lockholder"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
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
	if err := l.makeFolder(); err != nil {
		return err
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

// another is a handle of its own on the same lock, which this one's
// holding keeps out as it does another process.
func (l *InputLock) another() *InputLock {
	return &InputLock{path: l.path, wait: l.wait, lock: lockfile.New(l.path), Agent: l.Agent, Clock: l.Clock}
}

// TryAcquire takes the lock if no one holds it, without waiting.
func (l *InputLock) TryAcquire() (bool, error) {
	if err := l.makeFolder(); err != nil {
		return false, err
	}
	ok, err := l.lock.TryLock()
	if err != nil {
		return false, fmt.Errorf("cannot take the desktop input lock: %w", err)
	}
	if ok {
		l.recordHolder()
	}
	return ok, nil
}

func (l *InputLock) makeFolder() error {
	if err := atomicfile.MkdirAll(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("cannot create the lock folder: %w", err)
	}
	return nil
}

// Release gives the lock back.
func (l *InputLock) Release() error {
	// The record goes first: removed after unlocking, it could be the next
	// holder's.
	os.Remove(l.path + lockholder.Suffix)
	if err := l.lock.Unlock(); err != nil {
		return fmt.Errorf("cannot release the desktop input lock %s: %w", l.path, err)
	}
	return nil
}

// recordHolder writes who holds the lock, for people reading status.
func (l *InputLock) recordHolder() { lockholder.Record(l.path, l.Agent) }

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
