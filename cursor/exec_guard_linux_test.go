package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

func init() { helperMains["guard-runner"] = guardRunner }

// leaverScript starts, below the command, a grandchild in its group and
// one that left it (setsid), both deaf to SIGTERM and SIGHUP, notes their
// pids in dir, and works on.
func leaverScript(dir string) []string {
	return []string{"sh", "-c", `d="$1"
(trap "" TERM HUP; exec sleep ` + outlasting + `) & echo $! > "$d/grandchild.tmp" && mv "$d/grandchild.tmp" "$d/grandchild"
setsid sh -c 'trap "" TERM HUP; echo $$ > "$1/escaped.tmp" && mv "$1/escaped.tmp" "$1/escaped"; exec sleep ` + outlasting + `' sh "$d" &
sleep ` + outlasting, "sh", dir}
}

// guardRunner is a runner that takes one turn of leaverScript, through the
// guard when GUARD_TEST_ON is 1, and writes the started Child to
// GUARD_TEST_DIR/child. It is killed mid-turn.
func guardRunner() {
	dir := os.Getenv("GUARD_TEST_DIR")
	if os.Getenv("GUARD_TEST_ON") == "1" {
		enableGuard(os.Args[0], os.Args[0])
	}
	d, _ := NewExec(ExecSettings{Command: leaverScript(dir), Timeout: time.Hour})
	_, err := d.Run(context.Background(), Turn{Prompt: "x", OnStart: func(c Child) error {
		b, _ := json.Marshal(c)
		return os.WriteFile(filepath.Join(dir, "child"), b, 0o600)
	}})
	fmt.Fprintln(os.Stderr, "guard-runner: the turn ended:", err)
	os.Exit(1)
}

// readPidFile waits for a pid file the script writes.
func readPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	poll.Until(t, path+" to be written", func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// runs reports whether pid is a live process, not a zombie.
func runs(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	return !strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

// killedRunner starts guardRunner, waits until its command's processes
// all run, SIGKILLs it, and returns the recorded Child and the pids of
// the grandchild and the one that left the group.
func killedRunner(t *testing.T, guard bool) (c Child, grandchild, escaped int) {
	dir := t.TempDir()
	runner := exec.Command(os.Args[0], "-test.run=^$")
	on := "0"
	if guard {
		on = "1"
	}
	runner.Env = append(os.Environ(), "CURSOR_TEST_ROLE=guard-runner", "GUARD_TEST_DIR="+dir, "GUARD_TEST_ON="+on)
	runner.Stderr = os.Stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	grandchild = readPidFile(t, filepath.Join(dir, "grandchild"))
	escaped = readPidFile(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() {
		// A failed run must not leave them sleeping.
		syscall.Kill(grandchild, syscall.SIGKILL)
		syscall.Kill(escaped, syscall.SIGKILL)
	})
	b, err := os.ReadFile(filepath.Join(dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	runner.Process.Kill()
	runner.Wait()
	return c, grandchild, escaped
}

// A runner killed by SIGKILL takes along every process its turn started:
// the guard hears its parent-death signal and kills everything below it,
// even a process deaf to SIGTERM and SIGHUP that left the group.
func TestGuardEndsEverythingWithTheRunner(t *testing.T) {
	c, grandchild, escaped := killedRunner(t, true)
	poll.Until(t, "the turn's processes to end with the runner", func() bool {
		alive, err := process.GroupAlive(c.PGID)
		return err == nil && !alive && !runs(grandchild) && !runs(escaped)
	})
}

// Without the guard, the grandchildren outlive the runner, and the next
// runner's EndChild ends the group whose leader is gone. The one that left
// the group is out of its reach: the guard is what ends it.
func TestUnguardedLeftoverGroupIsEndedByTheNextRunner(t *testing.T) {
	c, grandchild, escaped := killedRunner(t, false)
	poll.Until(t, "the command to die of its parent-death signal", func() bool { return !process.Alive(c.PID) || !runs(c.PID) })
	if !runs(grandchild) || !runs(escaped) {
		t.Fatalf("grandchild %d or escaped %d died with an unguarded runner; this test needs them left over", grandchild, escaped)
	}
	ended, err := EndChild(c)
	if !ended || err != nil {
		t.Fatalf("EndChild = %v, %v; want the leftover group ended", ended, err)
	}
	if alive, _ := process.GroupAlive(c.PGID); alive || runs(grandchild) {
		t.Errorf("the group %d still runs after EndChild", c.PGID)
	}
}

// useGuard starts this test's commands through the guard.
func useGuard(t *testing.T) {
	enableGuard(os.Args[0], os.Args[0])
	t.Cleanup(func() { enableGuard("", "") })
}

// Through the guard, a command gets its prompt and arguments, and ends as
// it would without: the same output, exit status or signal, and start
// error.
func TestGuardPassesTheCommandThrough(t *testing.T) {
	for _, guard := range []bool{false, true} {
		t.Run(fmt.Sprintf("guard=%v", guard), func(t *testing.T) {
			if guard {
				useGuard(t)
			}
			d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `cat; printf ' %s' "$0"`, "arg one"}})
			reply, err := d.Run(context.Background(), Turn{Prompt: "the prompt"})
			if err != nil || reply != "the prompt arg one" {
				t.Errorf("reply = %q, %v", reply, err)
			}
			for script, want := range map[string]string{
				"echo said >&2; exit 3":  "exit status 3; stderr: said",
				"kill -TERM $$; sleep 5": "signal: terminated",
			} {
				d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", script}})
				_, err := d.Run(context.Background(), Turn{Prompt: "x"})
				if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: err = %v, want %q", script, err, want)
				}
			}
			// A command that aborts (Node out of memory) keeps its own last
			// words: the guard adds no stacks of its own over them.
			d, _ = NewExec(ExecSettings{Command: []string{"sh", "-c", "echo 'FATAL ERROR: heap out of memory' >&2; kill -ABRT $$; sleep 5"}})
			_, err = d.Run(context.Background(), Turn{Prompt: "x"})
			if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "FATAL ERROR: heap out of memory") || strings.Contains(err.Error(), "goroutine") ||
				!strings.Contains(err.Error(), "abort") {
				t.Errorf("an aborted command: err = %v", err)
			}
			d, _ = NewExec(ExecSettings{Command: []string{"no-such-agent-command"}})
			_, err = d.Run(context.Background(), Turn{Prompt: "x"})
			if err == nil || !strings.Contains(err.Error(), `exec: "no-such-agent-command": executable file not found`) {
				t.Errorf("missing program: err = %v", err)
			}
		})
	}
}

// A turn leaves nothing behind, not even a process that left the group:
// the guard ends it when the command ends.
func TestGuardEndsWhatTheCommandLeft(t *testing.T) {
	useGuard(t)
	dir := t.TempDir()
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c",
		`setsid sh -c 'trap "" TERM HUP; echo $$ > "$1/escaped"; exec sleep ` + outlasting + `' sh "$0" & while [ ! -s "$0/escaped" ]; do sleep 0.01; done`, dir}})
	if _, err := d.Run(context.Background(), Turn{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
	escaped := readPidFile(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() { syscall.Kill(escaped, syscall.SIGKILL) })
	poll.Until(t, "the process that left the group to end", func() bool { return !runs(escaped) })
}

// A turn cut short (a timeout, a skip) leaves nothing behind either: the
// guard kills what left the group before the group is killed.
func TestGuardEndsWhatACutTurnLeft(t *testing.T) {
	useGuard(t)
	dir := t.TempDir()
	d, _ := NewExec(ExecSettings{Command: leaverScript(dir)})
	ctx, cancel := context.WithCancel(context.Background())
	// Not poll.Until: a wait in a goroutine of its own outlives a test
	// that fails first, and must not report to it.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "escaped")); err == nil {
				cancel()
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	if _, err := d.Run(ctx, Turn{Prompt: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the turn cancelled", err)
	}
	grandchild, escaped := readPidFile(t, filepath.Join(dir, "grandchild")), readPidFile(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() {
		syscall.Kill(grandchild, syscall.SIGKILL)
		syscall.Kill(escaped, syscall.SIGKILL)
	})
	poll.Until(t, "the cut turn's processes to end", func() bool { return !runs(grandchild) && !runs(escaped) })
}

// BenchmarkExecStart is what the guard adds to a turn: a command that does
// nothing, started as it is and through the seat's host.
func BenchmarkExecStart(b *testing.B) {
	for _, guard := range []bool{false, true} {
		b.Run(fmt.Sprintf("guard=%v", guard), func(b *testing.B) {
			if guard {
				enableGuard(os.Args[0], os.Args[0])
				defer func() { enableGuard("", "") }()
			}
			d, _ := NewExec(ExecSettings{Command: []string{"true"}})
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := d.Run(context.Background(), Turn{Prompt: "x"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/turn")
		})
	}
}
