package lockfile

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// holdLock starts another process that holds the lock on path until the
// test ends, and returns it.
func holdLock(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LOCKFILE_TEST_HOLD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder said %q", line)
	}
	return cmd
}

func TestHoldersNameAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if got := Holders(path); got != nil {
		t.Errorf("holders of a missing file: %v", got)
	}
	holder := holdLock(t, path)
	if got := Holders(path); len(got) != 1 || got[0] != holder.Process.Pid {
		t.Errorf("holders = %v, want [%d]", got, holder.Process.Pid)
	}
	if got, want := Describe(path), fmt.Sprintf("pid %d (", holder.Process.Pid); !strings.HasPrefix(got, want) {
		t.Errorf("Describe = %q, want it to start %q", got, want)
	}
	other := filepath.Join(t.TempDir(), "y.lock")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Holders(other); got != nil {
		t.Errorf("holders of a lock nobody holds: %v", got)
	}
}
