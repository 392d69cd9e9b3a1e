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
	if path, self = Beside(name); path != "" {
		return path, self
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, self
	}
	return "", self
}

// Beside finds agentctl's program name in this program's own folder only:
// installed with it, so of the same build. Its results are FindProgram's.
func Beside(name string) (path, self string) {
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	exe, err := os.Executable()
	if err != nil {
		return "", ""
	}
	path = filepath.Join(filepath.Dir(exe), file)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, exe
	}
	return "", exe
}
