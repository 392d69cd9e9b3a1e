package cursor

import "syscall"

// setParentDeathSignal has the kernel kill a command os/exec starts when
// the thread that started it ends, which Exec.Run and startACPChild make
// the same as when this process ends (see there): a runner killed with SIGKILL takes its command along instead
// of leaving it at work on a prompt the next runner may send again. It is
// SIGKILL because nothing is left to hear a graceful ending. It reaches the
// command only, not what the command spawned: a guard, which hears its
// SIGTERM, ends those (exec_guard_linux.go), and without one EndChild does.
func setParentDeathSignal(a *syscall.SysProcAttr, guard bool) {
	a.Pdeathsig = syscall.SIGKILL
	if guard {
		a.Pdeathsig = guardParentDeathSignal
	}
}
