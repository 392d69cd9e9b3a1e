// Package execguard is the guard of one exec turn: agentctl re-executed
// with Arg, the leader of the turn's process group, which starts the
// turn's command, becomes the child subreaper of everything below it and,
// when its runner dies or asks (SweepSignal), kills all of it. The cursor
// package's exec driver starts commands through it.
//
// It owns the turn's process tree while the command runs: it writes no
// file, reads nothing of the runtime folder (only /proc, to find what is
// below it), and signals no process but the command, what is below it and
// its own group.
//
// A guard is started for every turn, so it starts before almost
// everything else in the program: this package's init runs the guard and
// exits, and the packages it does not need are never initialized. It
// imports nothing but the standard library for that reason.
package execguard

import "os"

// Arg is the hidden subcommand by which agentctl, re-executed, guards one
// turn's command.
const Arg = "__exec-guard"

func init() {
	if IsGuard() {
		os.Exit(Run(os.Args[2:]))
	}
}

// IsGuard reports whether this process was started as a guard.
func IsGuard() bool { return len(os.Args) > 1 && os.Args[1] == Arg }
