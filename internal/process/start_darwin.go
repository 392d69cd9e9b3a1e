//go:build darwin

package process

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// StartTime returns a token for when the process with this pid started
// (microseconds since the epoch, from the kernel's process table); see the
// Linux version for what it is for.
func StartTime(pid int) (uint64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		if !Alive(pid) {
			return 0, fmt.Errorf("no process %d: %w", pid, fs.ErrNotExist)
		}
		return 0, fmt.Errorf("cannot read the start time of pid %d: %v", pid, err)
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec), nil
}
