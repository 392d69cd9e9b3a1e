package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseProgramPages lets go of the program's code and read-only data
// that start-up touched. Every package's init runs once, all over a 30 MB
// program, and the kernel maps 64 KB around each page it faults in: an
// idle runner kept some 15 MB of such pages, most never run again. The
// pages stay in the page cache, shared with every other agentctl; a page
// needed again is mapped back on its first touch.
//
// Only mappings of the program's file that are read-only and hold no
// private copy (a page a relocation wrote) are let go: those read back
// from the file exactly as they were.
func releaseProgramPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range programMappings(smaps, exe) {
		// Advice only: an error leaves the pages where they were.
		syscall.Syscall(syscall.SYS_MADVISE, m[0], m[1]-m[0], syscall.MADV_DONTNEED)
	}
}

// programMappings returns the [start, end) ranges in smaps of exe's
// read-only mappings that hold no anonymous (privately written) pages.
func programMappings(smaps []byte, exe string) [][2]uintptr {
	var out [][2]uintptr
	var cur [2]uintptr
	keep := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			// A mapping's first line: range, perms, offset, dev, inode[, path].
			keep = false
			start, end, ok := strings.Cut(f[0], "-")
			s, err1 := strconv.ParseUint(start, 16, 64)
			e, err2 := strconv.ParseUint(end, 16, 64)
			if !ok || err1 != nil || err2 != nil || len(f) < 6 || strings.Join(f[5:], " ") != exe {
				continue
			}
			if f[1] == "r-xp" || f[1] == "r--p" {
				cur, keep = [2]uintptr{uintptr(s), uintptr(e)}, true
			}
			continue
		}
		if keep && len(f) >= 2 && f[0] == "Anonymous:" {
			if f[1] == "0" {
				out = append(out, cur)
			}
			keep = false
		}
	}
	return out
}
