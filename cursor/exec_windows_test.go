package cursor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/wintest"
)

// Roles the test binary plays as an agent behind a batch file.
func init() {
	// cat: the reply is stdin, exactly.
	helperMains["wincat"] = func() { io.Copy(os.Stdout, os.Stdin) }
	// args: the reply is the arguments after -test.run, one per line.
	helperMains["winargs"] = func() { os.Stdout.WriteString(strings.Join(os.Args[2:], "\n")) }
	// runner: takes a turn with the batch file $CURSOR_TEST_BAT, whose
	// child is a sleeper.
	helperMains["winrunner"] = func() {
		os.Setenv("CURSOR_TEST_ROLE", "winsleeper")
		d, _ := NewExec(ExecSettings{Command: []string{os.Getenv("CURSOR_TEST_BAT")}, Timeout: time.Minute})
		d.Run(context.Background(), Turn{Prompt: "x"})
	}
	// sleeper: records its pid in $CURSOR_TEST_PIDFILE and sleeps a day
	// (outlasting), longer than any test waits for it to be ended.
	helperMains["winsleeper"] = func() {
		os.WriteFile(os.Getenv("CURSOR_TEST_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		time.Sleep(24 * time.Hour)
	}
}

// batch writes a batch file into a folder whose name has a space, and
// makes the children it starts play role.
func batch(t *testing.T, role, body string) string {
	t.Helper()
	dir := filepath.Join(wintest.TempDir(t), "agent dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent.bat")
	body = strings.ReplaceAll(body, "TESTBIN", `"`+os.Args[0]+`" -test.run=^^$`)
	if err := os.WriteFile(path, []byte("@echo off\r\n"+strings.ReplaceAll(body, "\n", "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CURSOR_TEST_ROLE", role)
	return path
}

func runExec(t *testing.T, command []string, timeout time.Duration, prompt string) (string, error) {
	t.Helper()
	d, err := NewExec(ExecSettings{Command: command, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return d.Run(context.Background(), Turn{Prompt: prompt})
}

// A batch file reading its stdin to the end gets there: left to
// CreateProcess, Wine's cmd.exe never saw the end of the prompt.
func TestWindowsBatchAgentSeesTheEndOfItsStdin(t *testing.T) {
	bat := batch(t, "", "more >nul\necho read it all\n")
	reply, err := runExec(t, []string{bat}, 10*time.Second, "line one\nline two\n")
	if err != nil || reply != "read it all\r\n" {
		t.Fatalf("reply %q, %v; want the batch file to finish", reply, err)
	}
}

func TestWindowsBatchAgentPassesThePromptOnExactly(t *testing.T) {
	bat := batch(t, "wincat", "TESTBIN\n")
	reply, err := runExec(t, []string{bat}, 10*time.Second, awkwardText)
	if err != nil || reply != awkwardText {
		t.Fatalf("reply %q, %v; want the prompt exactly", reply, err)
	}
}

// Each argument arrives in %1… exactly, whatever cmd.exe makes of & | < >
// ^ ! and parentheses elsewhere.
func TestWindowsBatchArgumentsArriveExactly(t *testing.T) {
	bat := batch(t, "winargs", "TESTBIN %*\n")
	prompt := `fix a & b | c > d < e ^ f (x) ! héllo 😀 C:\dir with space\ end`
	reply, err := runExec(t, []string{bat, "--flag", "{prompt}", "last"}, 10*time.Second, prompt)
	if want := "--flag\n" + prompt + "\nlast"; err != nil || reply != want {
		t.Fatalf("arguments %q, %v; want %q", reply, err, want)
	}
}

func TestWindowsBatchRefusesWhatCmdCannotCarry(t *testing.T) {
	bat := batch(t, "winargs", "TESTBIN %*\necho ran>\"%~dp0ran.txt\"\n")
	for _, prompt := range []string{"two\nlines", `a "quoted" word`, "50% of %PATH%"} {
		_, err := runExec(t, []string{bat, "{prompt}"}, 10*time.Second, prompt)
		if !errors.Is(err, ErrExecFailed) || !strings.Contains(err.Error(), "stdin") {
			t.Errorf("prompt %q: %v; want ErrExecFailed with a hint to use stdin", prompt, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(bat), "ran.txt")); err == nil {
		t.Error("the batch file ran with an argument it could not get exactly")
	}
}

// A timeout ends the command and what it started: Wine's taskkill knows no
// /T, and taskkill cannot find orphans on Windows either.
func TestWindowsTimeoutEndsTheWholeTree(t *testing.T) {
	pidFile := filepath.Join(wintest.TempDir(t), "pid")
	t.Setenv("CURSOR_TEST_PIDFILE", pidFile)
	bat := batch(t, "winsleeper", "TESTBIN\n")
	d, err := NewExec(ExecSettings{Command: []string{bat}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.Run(ctx, Turn{Prompt: "x"})
		done <- err
	}()
	grandchild := awaitPid(t, pidFile)
	cancel()
	if err := <-done; !errors.Is(err, ErrExecFailed) {
		t.Fatalf("cancelled turn: %v", err)
	}
	awaitGone(t, grandchild, "the turn was cancelled")
}

// A runner that dies takes its agent's tree along, as the parent-death
// signal does on Linux: nothing is left at work on a prompt the next runner
// may send again.
func TestWindowsDeadRunnerTakesItsAgentAlong(t *testing.T) {
	pidFile := filepath.Join(wintest.TempDir(t), "pid")
	bat := batch(t, "winrunner", "TESTBIN\n")
	runner := exec.Command(os.Args[0], "-test.run=^$")
	runner.Env = append(os.Environ(), "CURSOR_TEST_PIDFILE="+pidFile, "CURSOR_TEST_BAT="+bat)
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	grandchild := awaitPid(t, pidFile)
	runner.Process.Kill()
	runner.Wait()
	awaitGone(t, grandchild, "its runner was killed")
}

func awaitPid(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	poll.Until(t, "the batch file's child to start", func() bool {
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(data))
		return pid > 0
	})
	return pid
}

// awaitGone waits until pid, started by the batch file, has ended since
// after; one never ended hangs the test until -timeout.
func awaitGone(t *testing.T, pid int, after string) {
	t.Helper()
	// Should the test fail, the sleeper must not sleep on for a day.
	t.Cleanup(func() {
		if process.Alive(pid) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	})
	poll.Until(t, fmt.Sprintf("process %d, started by the batch file, to end now that %s", pid, after), func() bool { return !process.Alive(pid) })
}

// Windows cannot start a .ps1 by itself. Wine's powershell.exe is an empty
// stand-in, so only the command is checked here, not a real run.
func TestWindowsPowerShellScriptRunsInPowerShell(t *testing.T) {
	cmd, err := command(context.Background(), []string{`C:\agents\agent.ps1`, "--fast"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", `C:\agents\agent.ps1`, "--fast"}
	if strings.Join(cmd.Args, "|") != strings.Join(want, "|") {
		t.Errorf("command %q, want %q", cmd.Args, want)
	}
}
