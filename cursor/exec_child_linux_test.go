package cursor

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/process"
)

func TestExecReportsItsCommandBeforeTheStages(t *testing.T) {
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "cat >/dev/null; echo $$"}})
	var events []string
	var child Child
	reply, err := d.Run(context.Background(), Turn{Prompt: "x",
		OnStart: func(c Child) error {
			child = c
			events = append(events, "start")
			if st, err := process.StartTime(c.PID); err != nil || st != c.StartTime {
				t.Errorf("start time of the running command = %d, %v; reported %d", st, err, c.StartTime)
			}
			return nil
		},
		OnStage: func(s Stage) error {
			events = append(events, string(s))
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, " "); got != "start injected submitted replied" {
		t.Errorf("events = %s", got)
	}
	if strings.TrimSpace(reply) != strconv.Itoa(child.PID) || child.PGID != child.PID {
		t.Errorf("reported %+v for the command with pid %s", child, reply)
	}
}

func TestExecStartErrorEndsTheCommand(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "sleep " + outlasting + " & echo $! > " + pidFile + "; wait"}})
	boom := errors.New("cannot record")
	var stages []Stage
	_, err := d.Run(context.Background(), Turn{Prompt: "x",
		OnStart: func(Child) error {
			waitForFile(t, pidFile)
			return boom
		},
		OnStage: func(s Stage) error {
			stages = append(stages, s)
			return nil
		}})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if len(stages) > 0 {
		t.Errorf("the turn went on to %v", stages)
	}
	assertGone(t, pidFile)
}

// startGroup starts script in a process group of its own, as the exec
// driver does, and returns its record and the pid of the sleep it starts.
func startGroup(t *testing.T, script string) (*exec.Cmd, Child, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "member.pid")
	cmd := exec.Command("sh", "-c", script+"; sleep "+outlasting+" & echo $! > "+pidFile+"; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	waitForFile(t, pidFile)
	st, err := process.StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, Child{PID: cmd.Process.Pid, PGID: cmd.Process.Pid, StartTime: st}, pidFile
}

func TestEndChildEndsTheWholeGroup(t *testing.T) {
	for name, script := range map[string]string{
		"stops when asked":  "true",
		"ignores SIGTERM":   "trap '' TERM",
		"leader gone first": "true",
	} {
		t.Run(name, func(t *testing.T) {
			cmd, c, member := startGroup(t, script)
			if name == "leader gone first" {
				cmd.Process.Kill()
				cmd.Wait()
			}
			ended, err := endChild(c, childGrace/30, childKillWait)
			if !ended || err != nil {
				t.Fatalf("endChild = %v, %v; want the group ended", ended, err)
			}
			if alive, _ := process.GroupAlive(c.PGID); alive {
				t.Error("the group still runs")
			}
			assertGone(t, member)
			if ended, err := EndChild(c); ended || err != nil {
				t.Errorf("EndChild of an ended command = %v, %v; want nothing to do", ended, err)
			}
		})
	}
}

// A pid that names another process now is left alone, and so is one whose
// owner cannot be told.
func TestEndChildNeverSignalsAStranger(t *testing.T) {
	_, c, _ := startGroup(t, "true")
	for name, record := range map[string]Child{
		"reused pid":         {PID: c.PID, PGID: c.PGID, StartTime: c.StartTime + 1},
		"unknown start time": {PID: c.PID, PGID: c.PGID},
	} {
		ended, err := EndChild(record)
		if ended || (err != nil) != (name == "unknown start time") {
			t.Errorf("%s: EndChild = %v, %v", name, ended, err)
		}
	}
	if alive, _ := process.GroupAlive(c.PGID); !alive {
		t.Fatal("the group was ended")
	}
	if _, err := process.StartTime(c.PID); err != nil {
		t.Errorf("the leader was ended: %v", err)
	}
}

func TestJudgeChild(t *testing.T) {
	c := Child{PID: 100, PGID: 100, StartTime: 7}
	gone := &fs.PathError{Op: "open", Path: "/proc/100/stat", Err: fs.ErrNotExist}
	for _, tc := range []struct {
		name       string
		c          Child
		start      uint64
		startErr   error
		groupAlive bool
		older      bool
		want       childFate
	}{
		{"running", c, 7, nil, true, false, childRunning},
		{"leader a zombie, nothing else", c, 7, nil, false, false, childGone},
		{"leader gone, group runs", c, 0, gone, true, false, childRunning},
		{"all gone", c, 0, gone, false, false, childGone},
		{"leader gone, its number another group's", c, 0, gone, true, true, childStranger},
		{"pid reused", c, 8, nil, true, false, childStranger},
		{"start time unreadable", c, 0, errors.New("EACCES"), true, false, childUnknown},
		{"start time never known", Child{PID: 100, PGID: 100}, 7, nil, true, false, childUnknown},
		{"no pid", Child{}, 0, nil, true, false, childGone},
	} {
		if got := judgeChild(tc.c, tc.start, tc.startErr, tc.groupAlive, tc.older); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
