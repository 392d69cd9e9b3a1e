package cursor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/agentctl/agentctl/internal/process"
)

// command is the command args name, started the way Windows users expect
// for each kind of file:
//
//   - a batch file (.bat, .cmd) runs in cmd.exe, started here rather than
//     left to CreateProcess. Windows starts cmd.exe for a batch file by
//     itself, but cmd.exe then parses the arguments by its own rules, not
//     those Go quotes for, and under Wine a batch started that way never
//     sees the end of a prompt piped to its stdin (one started through
//     cmd.exe does);
//   - a PowerShell script (.ps1), which Windows cannot start by itself,
//     runs in powershell.exe without profile or prompts;
//   - anything else is started as it is.
func command(ctx context.Context, args []string) (*exec.Cmd, error) {
	switch strings.ToLower(filepath.Ext(args[0])) {
	case ".bat", ".cmd":
		line, err := batchCommandLine(args)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, comSpec())
		cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
		return cmd, nil
	case ".ps1":
		ps := []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"}
		args = append(ps, args...)
	}
	return exec.CommandContext(ctx, args[0], args[1:]...), nil
}

// comSpec is the command interpreter: %ComSpec%, as Windows itself uses
// for batch files, else cmd.exe in the system folder.
func comSpec() string {
	if c := os.Getenv("ComSpec"); c != "" {
		return c
	}
	return filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
}

// batchCommandLine is the command line of cmd.exe running the batch file
// args[0] with args[1:], each of which the batch file then finds exactly in
// %~1, %~2…: /d skips AutoRun commands, /s /c runs what is between the
// outer quotes. Every argument is quoted, which keeps & | < > ^ ( ) and
// spaces literal. cmd.exe has no escape for the rest: a line break ends its
// command, a double quote inside quotes ends them, and %NAME% is expanded
// even there (the tricks that hide a % from one cmd.exe fail in another).
// An argument holding any of these is refused rather than passed on
// changed: such text must go to the batch file's stdin.
func batchCommandLine(args []string) (string, error) {
	var b strings.Builder
	b.WriteString(`cmd.exe /d /s /c "`)
	for i, a := range args {
		if strings.ContainsAny(a, "\"%\r\n\x00") {
			if i == 0 {
				return "", fmt.Errorf("cannot run the batch file %s: cmd.exe cannot carry a double quote or %% in its path", a)
			}
			return "", fmt.Errorf("cannot pass argument %d to the batch file %s: cmd.exe cannot carry a line break, a double quote or %% in an argument; take the prompt on stdin instead (leave {prompt} out of exec.command)", i, filepath.Base(args[0]))
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(a)
		b.WriteByte('"')
	}
	b.WriteByte('"')
	return b.String(), nil
}

// setProcessGroup gives the command a new process group, so that console
// signals meant for it spare this process, and starts it suspended, so that
// afterStart puts it in a job before it can start anything itself.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED
}

// jobs holds the job object of each running command: everything the
// command starts joins its job, so ending the job ends the whole tree, and
// as the job kills what it holds when its last handle closes, a runner that
// dies takes its command's tree along, as a parent-death signal does on
// Linux.
var jobs sync.Map // *exec.Cmd → windows.Handle

// afterStart puts the suspended command in a new job and lets it run. A
// job that cannot be had (an old Windows refusing nested jobs) leaves
// taskkill /T to end the tree; the command runs all the same.
func afterStart(cmd *exec.Cmd) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME, false, uint32(cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("cannot open the started process: %w", err)
	}
	defer windows.CloseHandle(p)
	if job, err := process.NewKillOnCloseJob(); err == nil {
		if windows.AssignProcessToJobObject(job, p) == nil {
			jobs.Store(cmd, job)
		} else {
			windows.CloseHandle(job)
		}
	}
	if r, _, _ := procNtResumeProcess.Call(uintptr(p)); r != 0 {
		return fmt.Errorf("cannot resume the started process: NTSTATUS %#x", r)
	}
	return nil
}

var procNtResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// killProcessGroup ends the command and everything it started: the job
// when there is one, else the tree taskkill finds.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if job, ok := jobs.LoadAndDelete(cmd); ok {
		err := windows.TerminateJobObject(job.(windows.Handle), 1)
		windows.CloseHandle(job.(windows.Handle))
		if err == nil {
			return nil
		}
	}
	if err := signalChild(Child{PID: cmd.Process.Pid}, true); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// processGroupOf is 0: Windows process groups only route console signals,
// and EndChild finds a command's tree from its pid.
func processGroupOf(*exec.Cmd) int { return 0 }

// childAlive reports whether c's process still runs. What it spawned is
// found only through it: once it has ended, taskkill /T cannot reach its
// orphans.
func childAlive(c Child) (bool, error) { return process.Alive(c.PID), nil }

// signalChild asks c's process tree to close, or with force terminates it.
// Console programs refuse to be asked; the forced kill after the grace ends
// them, so a refusal is no error.
func signalChild(c Child, force bool) error {
	if !force {
		exec.Command("taskkill", "/T", "/PID", strconv.Itoa(c.PID)).Run()
		return nil
	}
	pid := strconv.Itoa(c.PID)
	if exec.Command("taskkill", "/F", "/T", "/PID", pid).Run() == nil {
		return nil
	}
	// Wine's taskkill knows no /T: end the process itself at least.
	if err := exec.Command("taskkill", "/F", "/PID", pid).Run(); err != nil {
		return fmt.Errorf("cannot end process %d: %w", c.PID, err)
	}
	return nil
}
