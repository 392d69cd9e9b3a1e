package cursor

import (
	"os"

	"github.com/agentctl/agentctl/internal/execguard"
)

// GuardMain is called first thing in main. In a process started as a guard
// it runs the guard and exits; in any other it lets the exec driver start
// its commands through program (re-executed as a guard: a program whose
// main calls GuardMain, or that imports internal/execguard), so that on
// Linux a runner that dies, even by SIGKILL, takes along everything its
// turn started. An empty program leaves the guard off.
func GuardMain(program string) {
	runGuardIfAsked()
	if program != "" && guardSupported {
		enableGuard(program, os.Args[0])
	}
}

// runGuardIfAsked runs the guard, or the host, and exits when this process
// was started as one; test binaries call it alone, and turn the guard on
// per test.
func runGuardIfAsked() {
	switch {
	case execguard.IsGuard():
		os.Exit(execguard.Run(os.Args[2:]))
	case execguard.IsHost():
		os.Exit(execguard.Host(os.Args[2:]))
	}
}
