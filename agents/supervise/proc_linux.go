package supervise

import "syscall"

// parentDeath makes a runner get SIGTERM when the supervisor dies, even by
// kill -9, so that no runner outlives an up nobody can stop any more.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
