package cursor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/execguard"
)

// parentTurn is a turn whose reply is the pid of its command's parent.
func parentTurn(t *testing.T, d *Exec) int {
	t.Helper()
	reply, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(reply))
	if err != nil {
		t.Fatalf("reply %q is no pid", reply)
	}
	return pid
}

// isHost reports whether pid is a live exec host.
func isHost(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && runs(pid) && strings.Contains(string(cmdline), "\x00"+execguard.HostArg+"\x00")
}

// A seat's turns, one after another, go to one host, which the driver
// keeps between them; none is this process's own child command.
func TestTurnsShareTheSeatsHost(t *testing.T) {
	useGuard(t)
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	first := parentTurn(t, d)
	if first == os.Getpid() || !isHost(first) {
		t.Fatalf("the command's parent %d is no exec host", first)
	}
	for range 3 {
		if again := parentTurn(t, d); again != first {
			t.Fatalf("a later turn ran below %d, not the seat's host %d", again, first)
		}
	}
}

// Turns under way at once each have a host of their own, and each ends
// with its own reply.
func TestTurnsAtOnceHaveAHostEach(t *testing.T) {
	useGuard(t)
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `read line; echo "$line $PPID"; sleep 0.2`}})
	var wg sync.WaitGroup
	replies := make([]string, 3)
	errs := make([]error, 3)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i], errs[i] = d.Run(context.Background(), Turn{Prompt: fmt.Sprintf("turn-%d\n", i)})
		}()
	}
	wg.Wait()
	hosts := map[string]bool{}
	for i, r := range replies {
		f := strings.Fields(r)
		if errs[i] != nil || len(f) != 2 || f[0] != fmt.Sprintf("turn-%d", i) {
			t.Fatalf("turn %d: reply %q, %v", i, r, errs[i])
		}
		hosts[f[1]] = true
	}
	if len(hosts) != 3 {
		t.Errorf("three turns at once ran below %d hosts; want one each", len(hosts))
	}
}

// A host no turn uses for hostIdle ends, and the next turn starts another.
func TestIdleHostEnds(t *testing.T) {
	useGuard(t)
	was := hostIdle
	hostIdle = 50 * time.Millisecond
	t.Cleanup(func() { hostIdle = was })
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	first := parentTurn(t, d)
	waitUntil(t, 20*time.Second, "the idle host to end", func() bool { return !isHost(first) })
	if next := parentTurn(t, d); next == first || !isHost(next) {
		t.Fatalf("the turn after the idle host ended ran below %d", next)
	}
}

// A kept host that was killed while idle is replaced at the next turn,
// which goes through.
func TestKilledIdleHostIsReplaced(t *testing.T) {
	useGuard(t)
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	first := parentTurn(t, d)
	syscall.Kill(first, syscall.SIGKILL)
	if next := parentTurn(t, d); next == first || !isHost(next) {
		t.Fatalf("the turn after the host was killed ran below %d", next)
	}
}

// A host killed mid-turn fails that turn, with the reason, and takes the
// command along; the next turn has a new host.
func TestHostKilledMidTurn(t *testing.T) {
	useGuard(t)
	dir := t.TempDir()
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `echo $PPID > "$0/host.tmp" && mv "$0/host.tmp" "$0/host"; exec sleep 600`, dir}})
	done := make(chan error, 1)
	var child Child
	go func() {
		_, err := d.Run(context.Background(), Turn{Prompt: "x", OnStart: func(c Child) error { child = c; return nil }})
		done <- err
	}()
	host := readPidFile(t, dir+"/host")
	syscall.Kill(host, syscall.SIGKILL)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "exec host ended") {
		t.Fatalf("err = %v; want the turn failed for its host", err)
	}
	waitUntil(t, 20*time.Second, "the command to end", func() bool { return !runs(child.PID) })
	d2, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	d2.hosts.idle = d.hosts.idle
	if next := parentTurn(t, d2); !isHost(next) || next == host {
		t.Fatalf("the next turn ran below %d", next)
	}
}
