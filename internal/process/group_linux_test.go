package process

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// A group outlives its leader while any member runs, and ends when only
// zombies are left.
func TestGroupAlive(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $! > "+dir+"/member; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL)
	member := readPid(t, dir+"/member")
	if alive, err := GroupAlive(pgid); !alive || err != nil {
		t.Fatalf("GroupAlive of a running group = %v, %v", alive, err)
	}

	cmd.Process.Kill()
	cmd.Wait()
	if alive, err := GroupAlive(pgid); !alive || err != nil {
		t.Fatalf("GroupAlive with the leader gone and member %d running = %v, %v", member, alive, err)
	}

	// The member's new parent may be an init that never reaps it: a zombie
	// must not keep the group alive.
	syscall.Kill(member, syscall.SIGKILL)
	poll.Until(t, "the member to end", func() bool { return ended(member) })
	if alive, err := GroupAlive(pgid); alive || err != nil {
		t.Fatalf("GroupAlive with nothing running = %v, %v", alive, err)
	}
}

func TestGroupAliveIgnoresZombies(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	cmd.Process.Kill()
	// Not reaped yet: a zombie.
	poll.Until(t, "the child to become a zombie", func() bool { return ended(cmd.Process.Pid) })
	if alive, err := GroupAlive(cmd.Process.Pid); alive || err != nil {
		t.Errorf("GroupAlive of a zombie's group = %v, %v", alive, err)
	}
	if alive, _ := GroupAlive(0); alive {
		t.Error("group 0 is alive")
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	poll.Until(t, "a pid in "+path, func() bool {
		b, _ := os.ReadFile(path)
		p, err := strconv.Atoi(strings.TrimSpace(string(b)))
		pid = p
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	return pid
}

// ended reports whether pid is gone or a zombie.
func ended(pid int) bool {
	fields, err := stat(pid)
	return err != nil || len(fields) == 0 || string(fields[0]) == "Z"
}

// Is tells a process that runs from one that ended and waits to be reaped
// (its pid still answers signal 0) and from a pid another process took
// (its start differs): a runner's status.json names either after a crash.
func TestIsTellsAZombieAndAReusedPID(t *testing.T) {
	self := os.Getpid()
	start, err := StartTime(self)
	if err != nil {
		t.Fatal(err)
	}
	if !Is(self, start) || !Is(self, 0) || Is(self, start+1) {
		t.Errorf("Is(self) with its start, none and another = %v, %v, %v; want true, true, false", Is(self, start), Is(self, 0), Is(self, start+1))
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	cmd.Process.Kill()
	poll.Until(t, "the child to become a zombie", func() bool { return ended(cmd.Process.Pid) })
	if !Alive(cmd.Process.Pid) || Is(cmd.Process.Pid, 0) {
		t.Errorf("a zombie: Alive %v, Is %v; want true, false", Alive(cmd.Process.Pid), Is(cmd.Process.Pid, 0))
	}
}
