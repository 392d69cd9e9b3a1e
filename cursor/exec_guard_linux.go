package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A parent-death signal reaches one process, and a runner killed by
// SIGKILL can do nothing after; Codex's native binary and Gemini's node
// workers, children of the command, would work on. So when the executable
// can play it (GuardMain), a turn's command is started through a guard:
// agentctl re-executed with guardArg, the leader of the turn's process
// group, whose parent-death signal is SIGTERM. It starts the command in its
// own group, becomes the child subreaper of everything below it, and
// passes the command's exit status on. When its runner dies it kills every
// process below it, even one that left the group (setsid), and the group;
// when the command ends it kills what the command left behind.
const guardSupported = true

// guardParentDeathSignal is the guard's parent-death signal: one it can
// catch, unlike the SIGKILL a bare command gets.
const guardParentDeathSignal = syscall.SIGTERM

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// guardExe is the executable that can play the guard; empty: commands
// are started as they are. guardName is the name it was started by, the
// guard's argv[0] (a multi-call binary, such as a test's, tells its roles
// by it). Both are set once, before any turn, by GuardMain.
var guardExe, guardName string

// enableGuard lets the exec driver start its commands through exe.
func enableGuard(exe, name string) { guardExe, guardName = exe, name }

// guardedCommandContext is the command args name, started through the
// guard, or as it is when no guard is set or the program cannot be found,
// which starting it then reports as it always did. The guard gets the
// program's path, so that it is found by this process's PATH as before.
func guardedCommandContext(ctx context.Context, args []string) *exec.Cmd {
	path := args[0]
	if guardExe != "" && !strings.ContainsRune(path, filepath.Separator) {
		path, _ = exec.LookPath(path)
	}
	if guardExe == "" || path == "" {
		return exec.CommandContext(ctx, args[0], args[1:]...)
	}
	cmd := exec.CommandContext(ctx, guardExe, append([]string{guardArg, strconv.Itoa(os.Getpid()), path, "--"}, args...)...)
	if guardName != "" {
		cmd.Args[0] = guardName
	}
	return cmd
}

// guardSweepSignal asks a guard to kill everything below it, and itself.
const guardSweepSignal = syscall.SIGUSR1

// guardSweepWait bounds how long sweepGuard waits for the guard to go.
const guardSweepWait = 2 * time.Second

// sweepGuard asks a guarded command's guard to end everything below it,
// before its group is killed: a process that left the group (setsid) is
// out of the group's reach, not the guard's. It waits until the guard is
// gone, or guardSweepWait. A command already reaped is not signalled
// (os.Process knows), so its pid, maybe another's now, is left alone.
func sweepGuard(cmd *exec.Cmd) {
	if !guardedCommand(cmd.Args) || cmd.Process.Signal(guardSweepSignal) != nil {
		return
	}
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	for deadline := time.Now().Add(guardSweepWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		data, err := os.ReadFile(stat)
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(data), ')'); i > 0 && strings.HasPrefix(string(data[i+1:]), " Z") {
			return
		}
	}
}

// guardedCommand reports whether args start a guard.
func guardedCommand(args []string) bool { return len(args) > 1 && args[1] == guardArg }

// runGuard is the guard: args are the runner's pid, the program's path,
// "--" and the command's arguments (its name first).
func runGuard(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "agentctl: the exec guard is started by agentctl itself")
		return 2
	}
	// Listening first: a signal before this would end the guard, which
	// has started nothing yet.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, guardSweepSignal)
	runner, err := strconv.Atoi(args[0])
	if err != nil || os.Getppid() != runner {
		return 1 // the runner died before the guard listened
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "agentctl: exec guard: cannot become a child subreaper: %v\n", e)
		return 1
	}
	cmd := &exec.Cmd{Path: args[1], Args: args[3:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "agentctl: cannot start %s: %v\n", args[3], err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			killDescendants()
			return exitLike(cmd.ProcessState, err)
		case s := <-sigs:
			// The kernel reparents before it sends the parent-death
			// signal; the runner sends guardSweepSignal when it ends the
			// turn early (a timeout, a skip).
			if s == guardSweepSignal || os.Getppid() != runner {
				killDescendants()
				syscall.Kill(0, syscall.SIGKILL)
			}
			// Someone else asked: the command decides.
			cmd.Process.Signal(s)
		}
	}
}

// exitLike ends the guard the way the command ended: the same exit status,
// or the same signal.
func exitLike(st *os.ProcessState, err error) int {
	if st == nil {
		fmt.Fprintf(os.Stderr, "agentctl: exec guard: %v\n", err)
		return 1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		// The signal arrives on another thread; one whose default is not
		// to end the process comes back here.
		time.Sleep(time.Second)
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// killDescendants kills every process below this one, and reaps those
// that were handed to it as subreaper, until none is left. A process
// forked between a look and the kill is found at the next look.
func killDescendants() {
	self := os.Getpid()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !hasChildren() {
			return
		}
		below := descendants(self)
		if len(below) == 0 {
			return
		}
		for _, pid := range below {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || errors.Is(err, syscall.ECHILD) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hasChildren reaps the children that have ended and says whether any
// is left. Every process below the guard has a child of the guard above
// it (an orphan is handed to the guard, its subreaper), so none left means
// none below, without reading every process's stat in /proc: after most
// turns the command has ended alone, and that read was most of a turn's
// cost beyond the command.
func hasChildren() bool {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return false
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil || pid == 0:
			return true // a child lives, or it cannot tell: look
		}
	}
}

// descendants lists the live (not zombie) processes below root, from
// /proc.
func descendants(root int) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	children := map[int][]int{}
	live := map[int]bool{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		live[pid] = f[0] != "Z"
	}
	var out []int
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if live[pid] {
			out = append(out, pid)
		}
		queue = append(queue, children[pid]...)
	}
	return out
}
