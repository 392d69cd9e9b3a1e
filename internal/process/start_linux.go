//go:build linux

package process

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// StartTime returns a token for when the process with this pid started
// (clock ticks since boot, field 22 of /proc/PID/stat). A pid recorded with
// its token names the same process only while the token still matches:
// pids are reused, tokens are not. Tokens stay far below 2^53, so they
// survive a round trip through JSON as numbers.
func StartTime(pid int) (uint64, error) {
	fields, err := stat(pid)
	if err != nil {
		return 0, err
	}
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("cannot read the start time of pid %d: /proc/%d/stat is too short", pid, pid)
	}
	return strconv.ParseUint(string(fields[19]), 10, 64)
}

// GroupAlive reports whether any process of the process group pgid still
// runs. Zombies do not count: they have ended and only wait for a parent
// (or an init that may never come) to reap them.
func GroupAlive(pgid int) (bool, error) {
	if pgid <= 0 {
		return false, nil
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return false, err
	}
	want := []byte(strconv.Itoa(pgid))
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		fields, err := stat(pid)
		// A process that ended since the listing has no stat any more.
		if err != nil || len(fields) < 3 {
			continue
		}
		// fields[0] is the state, fields[2] the process group.
		if bytes.Equal(fields[2], want) && (!bytes.Equal(fields[0], []byte("Z")) || threadsLeft(pid)) {
			return true, nil
		}
	}
	return false, nil
}

// threadsLeft reports whether a zombie leader's other threads still run.
// The leader of a multi-threaded program (Go, Node) can turn zombie while
// the rest of it is still exiting and holds its files and locks; only once
// the last thread is gone has the program ended.
func threadsLeft(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	self := strconv.Itoa(pid)
	for _, t := range tasks {
		if t.Name() != self {
			return true
		}
	}
	return false
}

// stat returns the fields of /proc/PID/stat from field 3 (state) on.
func stat(pid int) ([][]byte, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses itself; the fields after its last ')' are plain.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("cannot read /proc/%d/stat: it has no command name", pid)
	}
	return bytes.Fields(data[i+1:]), nil
}

// GroupOldestStart returns the earliest start time (StartTime's token)
// among the processes of group pgid that still run, and false when none
// does. A group whose leader is gone can be told from one that took its
// number later: none of the first group's members started before it.
func GroupOldestStart(pgid int) (uint64, bool, error) {
	if pgid <= 0 {
		return 0, false, nil
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, false, err
	}
	want := []byte(strconv.Itoa(pgid))
	var oldest uint64
	found := false
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		fields, err := stat(pid)
		if err != nil || len(fields) < 20 || !bytes.Equal(fields[2], want) || bytes.Equal(fields[0], []byte("Z")) {
			continue
		}
		st, err := strconv.ParseUint(string(fields[19]), 10, 64)
		if err != nil {
			continue
		}
		if !found || st < oldest {
			oldest, found = st, true
		}
	}
	return oldest, found, nil
}
