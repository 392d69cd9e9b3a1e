package main

import (
	"os"

	"github.com/agentctl/agentctl/cmd/internal/cli"
)

// guardProgram is the program an exec turn's guard is started as: agentctl,
// where it is installed beside this program (never one found on PATH,
// which may be of another build), since a guard starts for every exec
// turn and agentctl starts in a third of this program's time; else this
// program itself. Both run the guard from their first package init.
func guardProgram() string {
	if front, _ := cli.Beside("agentctl"); front != "" {
		if st, err := os.Stat(front); err == nil && st.Mode().Perm()&0o111 != 0 {
			return front
		}
	}
	self, _ := os.Executable()
	return self
}
