// Package childthread starts a child process from an OS thread kept for
// that child until it is reaped.
//
// On Linux a child's parent-death signal (SysProcAttr.Pdeathsig) fires when
// the thread that started it ends, not when this process does, and the Go
// runtime ends a thread whenever a goroutine locked to it returns without
// unlocking. A child started from any thread could therefore be killed by
// some other goroutine's end, long after it started. Start keeps the
// starting thread for the child alone, so the signal fires only when this
// process ends. Elsewhere the thread is kept all the same, at no cost that
// matters.
//
// The package owns that thread's lifetime and nothing else: it never sets
// the child's arguments, attributes or output, never signals it and never
// decides when it should end.
package childthread

import (
	"os/exec"
	"runtime"
)

// Start starts cmd from a goroutine locked to its OS thread. ready, if not
// nil, runs on that thread once cmd has started and before Start returns:
// an error from it is Start's, and then held never runs, so ready must
// reap what it started. held runs next on the same thread, after Start has
// returned; it must not return before cmd is reaped (it calls cmd.Wait),
// and the thread is released when it does.
func Start(cmd *exec.Cmd, ready func() error, held func()) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		if ready != nil {
			if err := ready(); err != nil {
				started <- err
				return
			}
		}
		started <- nil
		held()
	}()
	return <-started
}
