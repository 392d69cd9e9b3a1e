package projectboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/layout"
)

// TestMain lets the test binary re-execute itself as the worker processes
// of TestConcurrentProcesses.
func TestMain(m *testing.M) {
	switch os.Getenv("PROJECTBOARD_WORKER") {
	case "agent":
		os.Exit(agentWorker(os.Args[1:]))
	case "editor":
		os.Exit(editorWorker(os.Args[1:]))
	case "holder":
		os.Exit(holderWorker(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// holderWorker holds the boards' lock, as any other process could, until
// its stdin closes.
func holderWorker(args []string) int {
	lock := flock.New(layout.BoardsLock(args[0]))
	if err := lock.Lock(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

var countRE = regexp.MustCompile(`^count: (\d+)$`)

// agentWorker increments the counter in its task's notes n times, each a
// read-modify-write through Store.Update, so a lost update shows as a
// missing count.
func agentWorker(args []string) int {
	root, id := args[0], args[1]
	n, _ := strconv.Atoi(args[2])
	s := &Store{Root: root}
	for i := 0; i < n; i++ {
		_, err := s.Update(context.Background(), id, func(t *Task) error {
			m := countRE.FindStringSubmatch(t.Notes)
			if m == nil {
				return fmt.Errorf("notes of %s are %q", id, t.Notes)
			}
			k, _ := strconv.Atoi(m[1])
			t.Notes = fmt.Sprintf("count: %d", k+1)
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

var humanRE = regexp.MustCompile(`(?m)^# human saves: (\d+)$`)

// editorWorker saves the board n times the way an editor does: read the
// file, change a line in the buffer, write a new file next to it and rename
// it over the board. Like vim or VS Code it checks just before saving that
// the file did not change on disk since it was loaded and reloads if it
// did. It takes the board lock only around that check and the rename, to
// stand in for the editor's check atomically: a real editor leaves a
// microsecond gap there that no file protocol can close.
func editorWorker(args []string) int {
	root, board := args[0], args[1]
	n, _ := strconv.Atoi(args[2])
	path := filepath.Join(Dir(root), board)
	lock := flock.New(layout.BoardsLock(root))
	for saved := 0; saved < n; {
		loaded, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := Parse(path, loaded); err != nil {
			fmt.Fprintln(os.Stderr, "editor loaded an invalid board:", err)
			return 1
		}
		m := humanRE.FindSubmatch(loaded)
		k, _ := strconv.Atoi(string(m[1]))
		buf := humanRE.ReplaceAll(loaded, []byte(fmt.Sprintf("# human saves: %d", k+1)))
		tmp := filepath.Join(filepath.Dir(path), "."+board+".swp")
		if err := os.WriteFile(tmp, buf, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := lock.Lock(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		onDisk, err := os.ReadFile(path)
		if err == nil && bytes.Equal(onDisk, loaded) {
			err = os.Rename(tmp, path)
			saved++
		}
		lock.Unlock()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentProcesses runs four agent processes updating different
// tasks of one board while a fifth saves it like an editor, and checks from
// this process that every version of the file it sees is a valid board and
// that in the end no update is missing.
func TestConcurrentProcesses(t *testing.T) {
	const updates, saves = 30, 30
	_, root := newRoot(t, "shared.yaml")
	path := filepath.Join(Dir(root), "shared.yaml")
	var cmds []*exec.Cmd
	start := func(role string, args ...string) {
		cmd := exec.Command(os.Args[0], append([]string{root}, args...)...)
		cmd.Env = append(os.Environ(), "PROJECTBOARD_WORKER="+role)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if stderr.Len() > 0 {
				t.Logf("%s %v: %s", role, args, stderr.String())
			}
		})
	}
	for i := 1; i <= 4; i++ {
		start("agent", fmt.Sprintf("C-%d", i), strconv.Itoa(updates))
	}
	start("editor", "shared.yaml", strconv.Itoa(saves))

	done := make(chan error, len(cmds))
	for _, c := range cmds {
		go func() { done <- c.Wait() }()
	}
	// Workers that never finish hang the test until -timeout.
	observed := 0
	for finished := 0; finished < len(cmds); {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker failed: %v", err)
			}
			finished++
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("board missing while being written: %v", err)
			}
			if _, err := Parse(path, data); err != nil {
				t.Fatalf("observed an invalid board: %v", err)
			}
			observed++
		}
	}
	data, _ := os.ReadFile(path)
	b, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		task, _ := b.Task(fmt.Sprintf("C-%d", i))
		if want := fmt.Sprintf("count: %d", updates); task.Notes != want {
			t.Errorf("C-%d: notes %q, want %q (an update was lost)", i, task.Notes, want)
		}
	}
	if !strings.Contains(string(data), fmt.Sprintf("# human saves: %d\n", saves)) {
		t.Errorf("a human save was lost:\n%s", data)
	}
	if !strings.Contains(string(data), "title: Third counter   # with a comment\n") {
		t.Errorf("an untouched line changed:\n%s", data)
	}
	t.Logf("observed %d versions of the board while it was written", observed)
}
