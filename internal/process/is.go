package process

import "errors"

// Is reports whether pid names a process that still runs on this machine
// and started at start (StartTime's token): not a pid since reused by
// another process, and not one that has ended and waits, a zombie, for a
// parent to reap it. A zero start (a record that kept none) checks the
// pid alone, as does a system whose start times are unknown.
func Is(pid int, start uint64) bool {
	if !Alive(pid) || defunct(pid) {
		return false
	}
	if start == 0 {
		return true
	}
	got, err := StartTime(pid)
	if errors.Is(err, errors.ErrUnsupported) {
		return true
	}
	return err == nil && got == start
}
