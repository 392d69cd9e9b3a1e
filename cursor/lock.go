package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"time"

	"github.com/gofrs/flock"

	"agentctl/internal/atomicfile"
	"agentctl/internal/lockfile"
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
}

// lockRetry is how often a waiting process tries the lock again.
const lockRetry = 10 * time.Millisecond

// NewInputLock returns the lock for the current display. wait bounds each
// Acquire.
func NewInputLock(dir string, wait time.Duration) *InputLock {
	path := filepath.Join(dir, "desktop-"+displayKey()+".lock")
	return &InputLock{path: path, wait: wait, lock: lockfile.New(path)}
}

// Path is the lock file.
func (l *InputLock) Path() string { return l.path }

// Acquire takes the lock, waiting at most the configured time.
func (l *InputLock) Acquire(ctx context.Context) error {
	if err := atomicfile.MkdirAll(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("cannot create the lock folder: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	ok, err := l.lock.TryLockContext(wctx, lockRetry)
	switch {
	case ok:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil || errors.Is(err, context.DeadlineExceeded):
		holder := lockfile.Describe(l.path)
		if holder == "" {
			holder = "another process"
		}
		return fmt.Errorf("%w after %s: %s holds the desktop input lock %s (another agentctl using the mouse and keyboard, or a stuck process)", ErrInputLockTimeout, l.wait, holder, l.path)
	default:
		return fmt.Errorf("cannot take the desktop input lock %s: %w", l.path, err)
	}
}

// Release gives the lock back.
func (l *InputLock) Release() error {
	if err := l.lock.Unlock(); err != nil {
		return fmt.Errorf("cannot release the desktop input lock %s: %w", l.path, err)
	}
	return nil
}

var unsafeInName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

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
	return "x11" + unsafeInName.ReplaceAllString(d, "_")
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
