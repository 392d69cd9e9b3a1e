//go:build linux

package intake

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolder names the process holding a flock on path, from /proc/locks,
// or returns "" when that cannot be told.
func lockHolder(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	dev := uint64(st.Dev) //nolint:unconvert // its type differs between architectures
	// /proc/locks names a file as MAJOR:MINOR:INODE, the device numbers in hex.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 08:02:131090 0 EOF"; waiters
		// have "->" after the number and hold nothing.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		pid := fields[4]
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			return "pid " + pid
		}
		return fmt.Sprintf("pid %s (%s)", pid, strings.TrimSpace(string(comm)))
	}
	return ""
}
