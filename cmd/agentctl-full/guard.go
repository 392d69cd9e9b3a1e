package main

import (
	"os"
	"path/filepath"
)

// guardProgram is the program an exec turn's guard is started as: agentctl,
// where it is installed beside this program, since a guard starts for
// every exec turn and agentctl starts in a third of this program's time;
// else this program itself. Both run the guard from their first package
// init.
func guardProgram() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	front := filepath.Join(filepath.Dir(self), "agentctl"+filepath.Ext(self))
	if st, err := os.Stat(front); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
		return front
	}
	return self
}
