package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A seed printed into a file a shell made (mode 0644 under umask 022) is
// closed to other accounts before it is written; a pipe is left alone.
func TestCredentialsPrintedIntoAFileAreClosedToOthers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no mode bits for others")
	}
	path := filepath.Join(t.TempDir(), "m2.nk")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Chmod(path, 0o644); err != nil { // whatever the test's umask
		t.Fatal(err)
	}
	if err := closeToOthers(f); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file is %v, want 0600", fi.Mode().Perm())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := closeToOthers(w); err != nil {
		t.Errorf("a pipe: %v", err)
	}
}
