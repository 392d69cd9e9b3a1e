package supervise

import (
	"errors"
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

// askToStop cannot deliver Ctrl+C to one child on Windows; the child is
// killed instead, and the next runner resumes what it left.
func askToStop(*os.Process) error { return errors.ErrUnsupported }
