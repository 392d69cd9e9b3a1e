//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// survivePipeClose keeps a long-running command alive when whatever reads
// its output goes away (the reader of `agentctl up 2>&1 | tee log`, gone
// with the same Ctrl+C that asks up to stop): by default a Go program that
// writes to a closed stdout or stderr dies at once of SIGPIPE, so it never
// stopped in order, and its runners died mid-turn. Hearing the signal makes
// the write fail instead. A handler, unlike an ignored signal, does not
// pass on to the programs the command starts.
func survivePipeClose() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
