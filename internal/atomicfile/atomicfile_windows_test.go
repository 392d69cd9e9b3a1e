package atomicfile

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/wintest"
)

// TestMain lets the test binary play a reader in another process: it opens
// the file named by ATOMICFILE_TEST_HOLD the way most programs do (without
// delete sharing), says so, and keeps it open until its stdin closes.
func TestMain(m *testing.M) {
	if path := os.Getenv("ATOMICFILE_TEST_HOLD"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("held\n")
		io.Copy(io.Discard, os.Stdin)
		f.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder is another process that has path open.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func hold(t *testing.T, path string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_TEST_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin}
	t.Cleanup(h.release)
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder did not open %s (said %q)", path, line)
	}
	return h
}

func (h *holder) release() {
	h.stdin.Close()
	h.cmd.Wait()
}

func TestWindowsReplaceWaitsForAReaderToClose(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "status.json")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	h := hold(t, path)
	// What a bare rename does while another process reads the file.
	tmp := path + ".new"
	os.WriteFile(tmp, []byte("x"), FilePerm)
	if err := os.Rename(tmp, path); err == nil {
		t.Fatal("Windows replaced a file another process holds open; this test proves nothing here")
	}
	os.Remove(tmp)

	waiting := make(chan bool, 1)
	heldOpenHook = func() {
		select {
		case waiting <- true:
		default:
		}
	}
	defer func() { heldOpenHook = nil }()
	done := make(chan error, 1)
	go func() { done <- WriteFile(path, []byte("new")) }()
	select {
	case <-waiting:
		h.release()
	case err := <-done:
		t.Fatalf("the replace ended (%v) without waiting for the reader", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the replace failed once the reader closed the file: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Fatalf("file holds %q, want the new version", got)
	}
	assertNoTemps(t, filepath.Dir(path))
}

func TestWindowsReplaceGivesUpWithTheOldVersionIntact(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "board.yaml")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	hold(t, path)
	for name, write := range map[string]func() error{
		"WriteFile":       func() error { return WriteFile(path, []byte("new")) },
		"WriteFileNoSync": func() error { return WriteFileNoSync(path, []byte("new")) },
	} {
		err := write()
		if err == nil || !strings.Contains(err.Error(), "another process kept it open") {
			t.Errorf("%s while another process holds the file: %v; want an error saying so", name, err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("file holds %q, want the old version untouched", got)
	}
	assertNoTemps(t, filepath.Dir(path))
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if IsTemp(e.Name()) {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}
