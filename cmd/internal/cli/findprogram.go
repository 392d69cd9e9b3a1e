package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// FindProgram finds agentctl's program name (agentctl-full, agentctl-hub)
// beside this program, where an install or a release archive puts it, and
// then on PATH. When it finds none, path is empty and self says where this
// program is, for the error ("" when the system does not say).
func FindProgram(name string) (path, self string) {
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		self = exe
		path := filepath.Join(filepath.Dir(exe), file)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			return path, self
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, self
	}
	return "", self
}
