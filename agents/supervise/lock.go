package supervise

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// roleUp is what a supervisor records in its lock file.
const roleUp = "up"

// LockPath is the supervisor's lock file: whoever holds it is the runtime's
// `agentctl up`, and its record names that process for `agentctl down`.
func LockPath(root string) string { return layout.SupervisorLock(root) }

// RunningError says another supervisor holds the runtime.
type RunningError struct{ PID int }

func (e *RunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("agentctl up is already running here (pid %d)", e.PID)
	}
	return "agentctl up is already running here"
}

// Lock makes this process the runtime's supervisor until release is
// called, or fails with a *RunningError.
func Lock(root string) (release func(), err error) {
	if err := atomicfile.MkdirAll(layout.Locks(root)); err != nil {
		return nil, err
	}
	path := LockPath(root)
	// Never waited for: a supervisor holds it for as long as it runs.
	l, _, err := lockfile.Acquire(context.Background(), path, lockfile.Wait{})
	if busy := (*lockfile.BusyError)(nil); errors.As(err, &busy) {
		e := &RunningError{}
		if h := busy.Holder; h.Believed && h.Record.Role == roleUp {
			e.PID = h.Record.PID
		}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	if err := lockfile.Write(path, lockfile.Self(roleUp)); err != nil {
		l.Unlock()
		return nil, err
	}
	// A request left for a supervisor that is gone is not for this one.
	if err := os.Remove(StopPath(root)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.Unlock()
		return nil, fmt.Errorf("cannot clear an old stop request: %w", err)
	}
	return func() { l.Unlock() }, nil
}

// StopPath is the file by which `agentctl down` asks the supervisor to stop
// where no signal can (Windows): it writes it, the supervisor removes it.
func StopPath(root string) string { return layout.SupervisorStop(root) }

// RequestStop asks the runtime's supervisor to stop, through StopPath.
func RequestStop(root string) error {
	return atomicfile.WriteFile(StopPath(root), []byte(strconv.Itoa(os.Getpid())+"\n"))
}

// untilStopRequested returns a context that ends with ctx or when a stop
// request appears, looked for every interval.
func untilStopRequested(ctx context.Context, root string, every time.Duration, clk clock.Clock) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-clock.After(clk, every):
			}
			if _, err := os.Stat(StopPath(root)); err == nil {
				os.Remove(StopPath(root))
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// Running returns the pid of the runtime's live supervisor, if its lock
// record is believed.
func Running(root string) (int, bool) {
	r, ok := lockfile.HeldBy(LockPath(root))
	if !ok || r.Role != roleUp {
		return 0, false
	}
	return r.PID, true
}
