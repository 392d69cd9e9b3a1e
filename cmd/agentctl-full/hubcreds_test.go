package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A seed is not printed into a file a shell made readable by others (mode
// 0644 under umask 022); into a private file or a pipe it is.
func TestCredentialsAreNotPrintedIntoAFileOthersCanRead(t *testing.T) {
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
	if open := openToOthers(f); !strings.Contains(open, "m2.nk (mode -rw-r--r--)") {
		t.Errorf("a 0644 file: %q", open)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if open := openToOthers(f); open != "" {
		t.Errorf("a 0600 file: %q", open)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if open := openToOthers(w); open != "" {
		t.Errorf("a pipe: %q", open)
	}
}
