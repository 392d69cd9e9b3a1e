//go:build linux

package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUTicks is the CPU time, user and system, that the process has used, in
// clock ticks (fields 14 and 15 of /proc/PID/stat). Benchmarks read it to
// show what an idle process costs.
func CPUTicks(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name's last ')' start with field 3.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat is too short", pid)
	}
	u, err1 := strconv.Atoi(f[11])
	s, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat has no CPU times", pid)
	}
	return u + s, nil
}

// RSSKB is the process's resident memory in KiB (VmRSS in /proc/PID/status).
func RSSKB(pid int) (int, error) { return kbField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") }

// PSSKB is the process's proportional set size in KiB: its own memory,
// plus its share of pages other processes map too (the program's code, for
// processes of one program). Summed over processes, it is what they cost
// together, where RSS counts each shared page in every one.
func PSSKB(pid int) (int, error) {
	return kbField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
}

// kbField reads the figure, in KiB, of the line starting with key in a
// /proc file of "Key:   123 kB" lines.
func kbField(path, key string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("%s has no %s", path, strings.TrimSuffix(key, ":"))
}
