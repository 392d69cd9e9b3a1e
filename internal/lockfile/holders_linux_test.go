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
func holdLock(t *testing.T, path string, env ...string) (cmd *exec.Cmd, release func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "LOCKFILE_TEST_HOLD="+path), env...)
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
	release = func() { stdin.Close(); cmd.Wait() }
	t.Cleanup(release)
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder said %q", line)
	}
	return cmd, release
}

func TestHoldersNameAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if got, known := Holders(path); got != nil || known {
		t.Errorf("holders of a missing file: %v, %v", got, known)
	}
	holder, _ := holdLock(t, path)
	if got, known := Holders(path); !known || len(got) != 1 || got[0] != holder.Process.Pid {
		t.Errorf("holders = %v, %v; want [%d]", got, known, holder.Process.Pid)
	}
	if got, want := Describe(path), fmt.Sprintf("pid %d (", holder.Process.Pid); !strings.HasPrefix(got, want) {
		t.Errorf("Describe = %q, want it to start %q", got, want)
	}
	other := filepath.Join(t.TempDir(), "y.lock")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, known := Holders(other); got != nil || !known {
		t.Errorf("holders of a lock nobody holds: %v, %v", got, known)
	}
}

// A record is believed only while its writer holds the lock.
func TestHeldByBelievesOnlyTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, release := holdLock(t, path, "LOCKFILE_TEST_ROLE=runner")
	r, ok := HeldBy(path)
	if !ok || r.PID != holder.Process.Pid || r.Role != "runner" {
		t.Errorf("HeldBy = %+v, %v; want the holder's record, pid %d", r, ok, holder.Process.Pid)
	}
	// A live process that does not hold the lock: this one.
	if err := Write(path, Self("runner")); err != nil {
		t.Fatal(err)
	}
	if r, ok := HeldBy(path); ok {
		t.Errorf("believed %+v, which names a live process that does not hold the lock", r)
	}
	release()
	if err := Write(path, Record{PID: holder.Process.Pid, Start: r.Start, Role: "runner"}); err != nil {
		t.Fatal(err)
	}
	if r, ok := HeldBy(path); ok {
		t.Errorf("believed %+v after its holder exited", r)
	}
}
