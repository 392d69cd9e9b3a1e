package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/execguard"
	"github.com/agentctl/agentctl/internal/testenv/poll"
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

// A host no turn uses for hostIdle ends, and the next turn starts another;
// each idle spell is timed from its own start, so a host in steady use is
// kept.
func TestIdleHostEnds(t *testing.T) {
	useGuard(t)
	clk := clocktest.New(time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC))
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}, Clock: clk})
	first := parentTurn(t, d)
	clk.Advance(hostIdle * 2 / 3)
	if again := parentTurn(t, d); again != first {
		t.Fatalf("a turn two thirds of hostIdle after the last ran below %d, not the kept host %d", again, first)
	}
	// Past the first spell's end, inside the second's.
	clk.Advance(hostIdle * 2 / 3)
	if again := parentTurn(t, d); again != first {
		t.Fatalf("the host was let go at the end of an earlier idle spell: the turn ran below %d, not %d", again, first)
	}
	clk.Advance(hostIdle)
	poll.Until(t, "the idle host to end", func() bool { return !isHost(first) })
	if next := parentTurn(t, d); next == first || !isHost(next) {
		t.Fatalf("the turn after the idle host ended ran below %d", next)
	}
}

// A sweep that reaches the host after its command ended, late, is
// nothing: it never touches the command of the turn after.
func TestLateSweepSparesTheNextCommand(t *testing.T) {
	useGuard(t)
	h, err := startHost()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	run := func(script string) int {
		t.Helper()
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		req := execguard.Start{Path: []byte("/bin/sh"), Argv: bytesOf([]string{"sh", "-c", script}), Env: bytesOf(os.Environ())}
		if err := h.send(execguard.Request{Start: &req}, null, null, null); err != nil {
			t.Fatal(err)
		}
		r, err := h.receive()
		if err != nil || r.Started <= 0 {
			t.Fatalf("start: %+v, %v", r, err)
		}
		return r.Started
	}
	first := run("exit 0")
	if r, err := h.receive(); err != nil || r.Exited == nil || r.Exited.Pid != first {
		t.Fatalf("the first command's end: %+v, %v", r, err)
	}
	second := run("sleep 0.5; exit 7")
	if err := h.send(execguard.Request{Sweep: first}); err != nil {
		t.Fatal(err)
	}
	r, err := h.receive()
	if err != nil || r.Exited == nil || r.Exited.Pid != second {
		t.Fatalf("the second command's end: %+v, %v", r, err)
	}
	if ws := syscall.WaitStatus(r.Exited.Status); !ws.Exited() || ws.ExitStatus() != 7 {
		t.Fatalf("the second command ended %v; want exit 7, untouched by the first one's sweep", (&hostExitError{ws}).Error())
	}
}

// A kept host that no longer answers (stopped) fails the turn that
// asks it within hostAnswer, and the turn after has a new host.
func TestStuckHostFailsTheTurnInTime(t *testing.T) {
	useGuard(t)
	was := hostAnswer
	hostAnswer = 500 * time.Millisecond
	t.Cleanup(func() { hostAnswer = was })
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	first := parentTurn(t, d)
	syscall.Kill(first, syscall.SIGSTOP)
	t.Cleanup(func() { syscall.Kill(first, syscall.SIGKILL) })
	if _, err := d.Run(context.Background(), Turn{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("a turn on a stopped host: err = %v; want it failed", err)
	}
	if next := parentTurn(t, d); next == first || !isHost(next) {
		t.Fatalf("the turn after the stopped host ran below %d", next)
	}
}

// A turn whose own time runs out while its host has not yet said whether
// it started the command (a host slow to answer on a loaded machine, here
// a stopped one) timed out; it did not fail to start.
func TestTurnTimingOutBeforeItsHostAnswersTimedOut(t *testing.T) {
	useGuard(t)
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
	first := parentTurn(t, d)
	syscall.Kill(first, syscall.SIGSTOP)
	t.Cleanup(func() { syscall.Kill(first, syscall.SIGKILL) })
	d.timeout = 300 * time.Millisecond // well within hostAnswer
	_, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if !errors.Is(err, ErrExecTimeout) {
		t.Fatalf("a turn that timed out waiting for its host: err = %v; want ErrExecTimeout", err)
	}
}

// Arguments are bytes, as the system takes them: ones that are no UTF-8
// arrive as they were.
func TestHostPassesBytesThrough(t *testing.T) {
	useGuard(t)
	arg := "caf\xe9 \xff\xfe"
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `printf %s "$0"`, arg}})
	reply, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if err != nil || reply != arg {
		t.Fatalf("reply = %q, %v; want %q", reply, err, arg)
	}
}

// A command that ends at once is recorded with its start time all the
// same: the host reads it before it can reap the command.
func TestQuickCommandIsRecordedWithItsStart(t *testing.T) {
	useGuard(t)
	d, _ := NewExec(ExecSettings{Command: []string{"true"}})
	for range 20 {
		var c Child
		if _, err := d.Run(context.Background(), Turn{Prompt: "x", OnStart: func(got Child) error { c = got; return nil }}); err != nil {
			t.Fatal(err)
		}
		if c.PID <= 0 || c.StartTime == 0 {
			t.Fatalf("the command was recorded as %+v; want its pid and start time", c)
		}
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
	poll.Until(t, "the command to end", func() bool { return !runs(child.PID) })
	d.command = []string{"sh", "-c", "echo $PPID"}
	if next := parentTurn(t, d); !isHost(next) || next == host {
		t.Fatalf("the next turn ran below %d", next)
	}
}

// An upgrade that installs a new release over the guard program while a
// runner runs must not give that runner hosts of the new program, whose
// protocol may differ from its own: they are of the runner's own image.
// A guard program left as it was is the one used.
func TestAReplacedGuardProgramGivesWayToTheRunnersOwnImage(t *testing.T) {
	for _, how := range []string{"left", "renamed over", "written over"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			program := filepath.Join(dir, "agentctl")
			copyProgram(t, os.Args[0], program)
			enableGuard(program, os.Args[0])
			t.Cleanup(func() { enableGuard("", "") })
			upgraded := how != "left"
			switch how {
			case "renamed over": // as installers do: written beside, renamed over
				next := filepath.Join(dir, "agentctl.next")
				if err := os.WriteFile(next, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(next, program); err != nil {
					t.Fatal(err)
				}
			case "written over": // in place, size and times kept, as cp -p may
				was, err := os.Stat(program)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(program, make([]byte, was.Size()), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(program, was.ModTime(), was.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "echo $PPID"}})
			host := parentTurn(t, d)
			if !isHost(host) {
				t.Fatalf("the command's parent %d is no exec host", host)
			}
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", host))
			if err != nil {
				t.Fatal(err)
			}
			want := program
			if upgraded {
				want, _ = os.Readlink(ownImage)
			}
			if exe != want {
				t.Errorf("the host runs %s, want %s", exe, want)
			}
		})
	}
}

// copyProgram copies the executable from to a new file to.
func copyProgram(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
