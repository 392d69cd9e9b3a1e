package projectboard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// A change facing a lock that another process keeps gives up after the
// store's wait, as its clock tells it, with an error naming the lock
// and, where the system says, its holder; it changes nothing.
func TestHeldLockFailsNamingItsHolder(t *testing.T) {
	s, root := newRoot(t, "shared.yaml")
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	s.LockWait, s.Clock = time.Minute, clk
	holder := exec.Command(os.Args[0], root)
	holder.Env = append(os.Environ(), "PROJECTBOARD_WORKER=holder")
	holder.Stderr = os.Stderr
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); holder.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder said %q", line)
	}
	before, _ := os.ReadFile(filepath.Join(Dir(root), "shared.yaml"))

	done := make(chan error, 1)
	go func() {
		_, err := s.Update(context.Background(), "C-1", func(t *Task) error { t.Notes = "changed"; return nil })
		done <- err
	}()
	<-clk.Sleeping()
	clk.Advance(time.Minute)
	err := <-done
	var locked *LockError
	if !errors.As(err, &locked) {
		t.Fatalf("update under a held lock: %v, want a *LockError", err)
	}
	if locked.Waited != time.Minute || !strings.Contains(err.Error(), "after 1m0s") {
		t.Errorf("error %q says it waited %s; want the store's wait, 1m", err, locked.Waited)
	}
	if want := filepath.Join(root, "locks", "project_board.lock"); locked.Path != want || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the lock %s", err, want)
	}
	if runtime.GOOS == "linux" {
		if want := fmt.Sprintf("by pid %d (", holder.Process.Pid); !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name the holder (%q)", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(Dir(root), "shared.yaml")); string(after) != string(before) {
		t.Errorf("the board changed although its lock was held")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.LockWait = time.Hour
	if _, err := s.Update(ctx, "C-1", func(*Task) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled update waiting for the lock: %v", err)
	}
}
