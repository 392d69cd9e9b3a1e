package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Swap replaces the file and hands back exactly what it replaced, keeping
// the file's permissions; it refuses a file that is not there.
func TestSwapReturnsWhatItReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board.yaml")
	if err := os.WriteFile(path, []byte("a person's text\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	old, err := Swap(path, []byte("agentctl's text\n"))
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrSwapUnsupported) {
			t.Fatalf("Swap = %v, want ErrSwapUnsupported off Linux", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(old) != "a person's text\n" {
		t.Errorf("Swap returned %q", old)
	}
	data, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(data) != "agentctl's text\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("the file holds %q with mode %v", data, fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone", len(entries))
	}
	if _, err := Swap(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("a missing file was swapped")
	}
}
