// Package execguard is the guard of exec turns: agentctl re-executed to
// start a turn's command, become the child subreaper of everything below
// it and, when the command ends, its runner dies or the runner asks, kill
// all of it. The cursor package's exec driver starts commands through it.
// A host (HostArg, Host) guards one seat's turns one after another, for
// as long as the seat keeps it, so a turn costs a request on a socket
// rather than a program's start; a guard (Arg, Run) guards one command,
// the leader of its process group, for an ACP agent's whole session.
//
// It owns the process tree of the commands it starts while they run: it
// writes no file, reads nothing of the runtime folder (only /proc, to find
// what is below it), and signals no process but the command, what is
// below it and its own group.
//
// A guard or host starts before almost everything else in the program:
// this package's init runs it and exits, and the packages it does not need
// are never initialized. It imports nothing but the standard library and,
// on Linux, internal/process (the standard library's only there) for that
// reason.
package execguard

import "os"

// Arg is the hidden subcommand by which agentctl, re-executed, guards one
// command (an ACP agent, for its whole session).
const Arg = "__exec-guard"

func init() {
	switch {
	case IsGuard():
		os.Exit(Run(os.Args[2:]))
	case IsHost():
		os.Exit(Host(os.Args[2:]))
	}
}

// IsGuard reports whether this process was started as a guard.
func IsGuard() bool { return len(os.Args) > 1 && os.Args[1] == Arg }

// IsHost reports whether this process was started as a host.
func IsHost() bool { return len(os.Args) > 1 && os.Args[1] == HostArg }
