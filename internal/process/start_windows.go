//go:build windows

package process

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/windows"
)

// StartTime returns a token for when the process with this pid started
// (its creation time in microseconds since the epoch: finer units would not
// survive a round trip through JSON as numbers); see the Linux version for
// what it is for.
func StartTime(pid int) (uint64, error) {
	if !Alive(pid) {
		return 0, fmt.Errorf("no process %d: %w", pid, fs.ErrNotExist)
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, fmt.Errorf("cannot read the start time of pid %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, fmt.Errorf("cannot read the start time of pid %d: %w", pid, err)
	}
	return uint64(created.Nanoseconds() / 1000), nil
}
