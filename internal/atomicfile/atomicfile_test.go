package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	for i := range 3 {
		want := fmt.Sprintf(`{"n": %d}`, i)
		if err := WriteFile(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm()&0o002 != 0 {
		t.Errorf("file is world-writable: %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

// Many goroutines create the same name at once: exactly one wins, the
// others see fs.ErrExist, and the file holds the winner's bytes whole.
func TestCreateRefusesToClobber(t *testing.T) {
	path := filepath.Join(t.TempDir(), "msg.json")
	var wg sync.WaitGroup
	wins := make(chan string, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := fmt.Sprintf("writer %02d", i)
			err := Create(path, []byte(data))
			switch {
			case err == nil:
				wins <- data
			case !errors.Is(err, fs.ErrExist):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d writers created the file", len(winners))
	}
	if got, _ := os.ReadFile(path); string(got) != winners[0] {
		t.Errorf("file holds %q, winner wrote %q", got, winners[0])
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{".msg.json.tmp1": true, ".hidden": true, "msg.json": false, "dir/.x": true} {
		if IsTemp(name) != want {
			t.Errorf("IsTemp(%q) = %v", name, !want)
		}
	}
}

// A secret is its owner's alone, even where the file it replaces was
// readable by others: a replace keeps no looser mode.
func TestWriteSecretIsForItsOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"one", "two"} {
		if err := WriteSecret(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Errorf("read %q, want %q", got, data)
		}
	}
}
