package cursor

import "os"

// guardArg is the hidden subcommand by which agentctl, re-executed, guards
// one turn's command (exec_guard_linux.go).
const guardArg = "__exec-guard"

// GuardMain is called first thing in main. In a process started as a guard
// it runs the guard and exits; in any other it lets the exec driver start
// its commands through this executable, so that on Linux a runner that
// dies, even by SIGKILL, takes along everything its turn started.
func GuardMain() {
	runGuardIfAsked()
	if exe, err := os.Executable(); err == nil && guardSupported {
		enableGuard(exe, os.Args[0])
	}
}

// runGuardIfAsked runs the guard and exits when this process was started
// as one; test binaries call it alone, and turn the guard on per test.
func runGuardIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == guardArg {
		os.Exit(runGuard(os.Args[2:]))
	}
}
