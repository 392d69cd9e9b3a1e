//go:build linux

package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// StartTime returns a token for when the process with this pid started
// (clock ticks since boot, field 22 of /proc/PID/stat). A pid recorded with
// its token names the same process only while the token still matches:
// pids are reused, tokens are not.
func StartTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses itself; the fields after its last ')' are plain.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("cannot read the start time of pid %d: /proc/%d/stat has no command name", pid, pid)
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("cannot read the start time of pid %d: /proc/%d/stat is too short", pid, pid)
	}
	return strconv.ParseUint(string(fields[19]), 10, 64)
}
