package cursor

import "syscall"

// setParentDeathSignal has the kernel kill the command when the thread that
// started it ends, which Exec.Run makes the same as when this process ends
// (see there): a runner killed with SIGKILL takes its command along instead
// of leaving it at work on a prompt the next runner may send again. It is
// SIGKILL because nothing is left to hear a graceful ending. It reaches the
// command only, not what the command spawned: EndChild ends those.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
