package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/process"
)

// A mapping that a relocation wrote into (Anonymous above 0) holds what
// the file does not: dropping it would lose the write.
func TestProgramMappingsSkipWrittenAndOtherFiles(t *testing.T) {
	smaps := `00400000-00d64000 r-xp 00000000 103:02 3146 /opt/agentctl
Rss:                7820 kB
Anonymous:             0 kB
00d64000-01789000 r--p 00964000 103:02 3146 /opt/agentctl
Anonymous:             8 kB
01789000-0184c000 rw-p 01389000 103:02 3146 /opt/agentctl
Anonymous:           332 kB
0184c000-0184d000 r--p 01389000 103:02 3146 /opt/agentctl
Anonymous:             0 kB
7fcdeb201000-7fcdeb357000 r-xp 00028000 103:02 99 /usr/lib/libc.so.6
Anonymous:             0 kB
7fcdeb400000-7fcdeb401000 r--p 00028000 103:02 3147 /opt/agentctl two
Anonymous:             0 kB
`
	got := programMappings([]byte(smaps), "/opt/agentctl")
	want := [][2]uintptr{{0x400000, 0xd64000}, {0x184c000, 0x184d000}}
	if !slices.Equal(got, want) {
		t.Errorf("programMappings = %x, want %x", got, want)
	}
	if got := programMappings([]byte(smaps), "/opt/agentctl two"); !slices.Equal(got, [][2]uintptr{{0x7fcdeb400000, 0x7fcdeb401000}}) {
		t.Errorf("a path with a space: %x", got)
	}
}

// After the program's pages are let go, the program runs on (its code
// comes back from the file) and holds fewer of them.
func TestReleaseProgramPagesKeepsTheProgramRunning(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	if len(programMappings(smaps, exe)) == 0 {
		t.Fatalf("no read-only mapping of %s in /proc/self/smaps", exe)
	}
	before, err := process.RSSKB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	releaseProgramPages()
	after, err := process.RSSKB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("RSS went from %d to %d KiB", before, after)
	}
	var out, errs strings.Builder
	if code := run([]string{"version"}, strings.NewReader(""), &out, &errs); code != 0 || !strings.Contains(out.String(), "agentctl") {
		t.Errorf("version after the release: %d, %q, %q", code, out.String(), errs.String())
	}
}
