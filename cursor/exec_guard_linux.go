package cursor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentctl/agentctl/internal/execguard"
)

// A parent-death signal reaches one process, and a runner killed by
// SIGKILL can do nothing after; Codex's native binary and Gemini's node
// workers, children of the command, would work on. So when the executable
// can play it (GuardMain), a command is started through a guard: agentctl
// re-executed, whose parent-death signal is SIGTERM, the child subreaper
// of everything below it. When its runner dies it kills every process
// below it, even one that left the group (setsid); when the command ends it
// kills what the command left behind. An exec seat's turns go to the
// seat's host (exec_host_linux.go), one guard for all of them; an ACP
// agent, one command for a whole session, has a guard of its own
// (execguard.Arg), the leader of its process group, which passes the
// command's exit status on.
const guardSupported = true

// guardParentDeathSignal is the guard's parent-death signal: one it can
// catch, unlike the SIGKILL a bare command gets.
const guardParentDeathSignal = syscall.SIGTERM

// guardExe is the executable that can play the guard; empty: commands
// are started as they are. guardName is the name it was started by, the
// guard's argv[0] (a multi-call binary, such as a test's, tells its roles
// by it). guardFile is the file guardExe named then. All are set once,
// before any turn, by GuardMain.
var (
	guardExe, guardName string
	guardFile           os.FileInfo
)

// enableGuard lets the exec driver start its commands through exe.
func enableGuard(exe, name string) {
	guardExe, guardName = exe, name
	guardFile, _ = os.Stat(exe)
}

// ownImage names this process's own program, even once an upgrade has
// replaced or removed its file.
const ownImage = "/proc/self/exe"

// guardProgram is the program a guard or a host is started from: guardExe
// while it is the file it was at start-up, else this process's own image,
// which can play the guard too (GuardMain). An upgrade that replaced
// guardExe while this runner runs installed a program of another release,
// whose guard may speak another protocol to this runner's driver. (One
// that lands between this look and the start is not seen: installers
// replace a program in one rename, which leaves a microsecond's window.)
func guardProgram() string {
	if now, err := os.Stat(guardExe); err == nil && sameProgram(now, guardFile) {
		return guardExe
	}
	return ownImage
}

// sameProgram reports whether now is still the file was: the same file,
// its status not changed since (a write, even one that keeps the size and
// the modification time, as cp -p does, changes it).
func sameProgram(now, was os.FileInfo) bool {
	if was == nil || !os.SameFile(now, was) {
		return false
	}
	n, nok := now.Sys().(*syscall.Stat_t)
	w, wok := was.Sys().(*syscall.Stat_t)
	return nok && wok && n.Ctim == w.Ctim && n.Size == w.Size
}

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
	cmd := exec.CommandContext(ctx, guardProgram(), append([]string{execguard.Arg, strconv.Itoa(os.Getpid()), path, "--"}, args...)...)
	if guardName != "" {
		cmd.Args[0] = guardName
	}
	return cmd
}

// guardSweepSignal asks a guard to kill everything below it, and itself.
const guardSweepSignal = execguard.SweepSignal

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
func guardedCommand(args []string) bool { return len(args) > 1 && args[1] == execguard.Arg }
