package execguard

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SweepSignal asks a guard to kill everything below it, and itself.
const SweepSignal = syscall.SIGUSR1

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// takeOver makes a guard or host (role), which listens for signals by
// now, the child subreaper of all it will start, and returns its runner's
// pid (runnerArg); false ends it: the runner died before it listened (a
// race, said nowhere), or the system refused (said on stderr).
func takeOver(runnerArg, role string) (runner int, ok bool) {
	runner, err := strconv.Atoi(runnerArg)
	if err != nil || os.Getppid() != runner {
		return 0, false
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "agentctl: exec %s: cannot become a child subreaper: %v\n", role, e)
		return 0, false
	}
	return runner, true
}

// Run is the guard: args are the runner's pid, the program's path,
// "--" and the command's arguments (its name first).
func Run(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "agentctl: the exec guard is started by agentctl itself")
		return 2
	}
	// Listening first: a signal before this would end the guard, which
	// has started nothing yet.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, SweepSignal)
	runner, ok := takeOver(args[0], "guard")
	if !ok {
		return 1
	}
	// os.StartProcess, not os/exec: this package is initialized, and the
	// guard run, as soon as its imports are, and os/exec's would be late.
	proc, err := os.StartProcess(args[1], args[3:], &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentctl: cannot start %s: %v\n", args[3], err)
		return 127
	}
	type waited struct {
		st  *os.ProcessState
		err error
	}
	done := make(chan waited, 1)
	go func() {
		st, err := proc.Wait()
		done <- waited{st, err}
	}()
	for {
		select {
		case w := <-done:
			killDescendants(nil)
			return exitLike(w.st, w.err)
		case s := <-sigs:
			// The kernel reparents before it sends the parent-death
			// signal; the runner sends guardSweepSignal when it ends the
			// turn early (a timeout, a skip).
			if s == SweepSignal || os.Getppid() != runner {
				killDescendants(nil)
				syscall.Kill(0, syscall.SIGKILL)
			}
			// Someone else asked: the command decides.
			proc.Signal(s)
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
		if goDumps(ws.Signal()) {
			// Raised here, Go would print its own stacks over the tail of
			// the command's stderr, which says why it died; the shells' exit
			// status says it as well.
			fmt.Fprintf(os.Stderr, "agentctl: the command was killed by signal %d (%v)\n", int(ws.Signal()), ws.Signal())
			return 128 + int(ws.Signal())
		}
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		// The signal arrives on another thread; one whose default is not
		// to end the process comes back here.
		time.Sleep(time.Second)
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// goDumps reports the signals that a Go program dies of with a dump of its
// goroutines rather than quietly.
func goDumps(s syscall.Signal) bool {
	switch s {
	case syscall.SIGABRT, syscall.SIGQUIT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS:
		return true
	}
	return false
}

// killDescendants kills every process below this one, and reaps those
// that were handed to it as subreaper, until none is left. A process
// forked between a look and the kill is found at the next look. reaped,
// if set, hears of every child it reaps.
func killDescendants(reaped func(pid int, ws syscall.WaitStatus)) {
	self := os.Getpid()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !hasChildren(reaped) {
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
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || errors.Is(err, syscall.ECHILD) {
				break
			}
			if reaped != nil {
				reaped(pid, ws)
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
// cost beyond the command. reaped, if set, hears of every child it reaps.
func hasChildren(reaped func(pid int, ws syscall.WaitStatus)) bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return false
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil || pid == 0:
			return true // a child lives, or it cannot tell: look
		}
		if reaped != nil {
			reaped(pid, ws)
		}
	}
}

// descendants lists the live (not zombie) processes below root, from
// /proc.
func descendants(root int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	live := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
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
