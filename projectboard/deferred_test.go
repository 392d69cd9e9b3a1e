package projectboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// TestDeferredChangeWaitsForAValidBoard: a change asked for while a person
// left the board invalid is kept, not reported as made, and made exactly
// once when the board is valid again, after the changes asked before it.
func TestDeferredChangeWaitsForAValidBoard(t *testing.T) {
	root := t.TempDir()
	s := &Store{Root: root, LockWait: time.Second}
	good := "tasks:\n  - id: T-1\n    title: parse\n    status: todo\n    owner: Agent-1\n"
	if err := s.CreateBoard(context.Background(), "b.yaml", []byte(good)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(Dir(root), "b.yaml")
	if err := os.WriteFile(path, []byte(good+"  - id: [broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	review, done := Review, Done
	owner := "Agent-2"
	first := Change{Task: "T-1", Status: &review, Key: "m1/board/0", By: "Agent-1", At: time.Unix(100, 0)}
	second := Change{Task: "T-1", Status: &done, Owner: &owner, Key: "m2/board/0", By: "Agent-2", At: time.Unix(200, 0)}
	for _, c := range []Change{first, first, second} { // first twice: a crash before it was recorded
		waited, err := s.Apply(context.Background(), c)
		if err != nil || waited == "" {
			t.Fatalf("Apply(%s) on an invalid board = %q, %v; want it kept", c.Key, waited, err)
		}
	}
	if applied, _, waiting, err := s.ApplyDeferred(context.Background()); err != nil || len(applied) != 0 || len(waiting) != 2 {
		t.Fatalf("ApplyDeferred on an invalid board = %v, waiting %v, %v", applied, waiting, err)
	}
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	applied, dropped, _, err := s.ApplyDeferred(context.Background())
	if err != nil || len(applied) != 2 || len(dropped) != 0 || applied[0].Key != "m1/board/0" || applied[1].Key != "m2/board/0" {
		t.Fatalf("ApplyDeferred = %+v, %+v, %v; want m1 then m2", applied, dropped, err)
	}
	if !strings.Contains(applied[0].Waited, "b.yaml") {
		t.Errorf("the change does not say why it waited: %q", applied[0].Waited)
	}
	tk, err := s.Find("T-1")
	if err != nil || tk.Status != Done || tk.Owner != "Agent-2" {
		t.Fatalf("T-1 = %+v, %v; want done by Agent-2", tk, err)
	}
	if s.HasDeferred() {
		t.Error("applied changes are still kept")
	}
	if applied, _, _, _ := s.ApplyDeferred(context.Background()); len(applied) != 0 {
		t.Errorf("applied again: %+v", applied)
	}
}

// TestApplyRefusesAMissingTask: a task on none of the valid boards is the
// asker's mistake, not something to wait for.
func TestApplyRefusesAMissingTask(t *testing.T) {
	root := t.TempDir()
	s := &Store{Root: root, LockWait: time.Second}
	if err := s.CreateBoard(context.Background(), "b.yaml", []byte("tasks:\n  - id: T-1\n    title: x\n    status: todo\n")); err != nil {
		t.Fatal(err)
	}
	done := Done
	waited, err := s.Apply(context.Background(), Change{Task: "T-9", Status: &done, Key: "k"})
	if waited != "" || err == nil || !Refused(err) {
		t.Fatalf("Apply(T-9) = %q, %v; want refused", waited, err)
	}
	if s.HasDeferred() {
		t.Error("a refused change was kept")
	}
	waited, err = s.Apply(context.Background(), Change{Task: "T-1", Status: &done, Key: "k2"})
	if waited != "" || err != nil {
		t.Fatalf("Apply(T-1) = %q, %v; want applied", waited, err)
	}
}

// TestKeptChangeOutlivesABoardSavedInPlace: a kept change whose task is
// missing for a moment (an editor truncating the board to save it) is kept,
// and dropped only once the task has been gone for missingGrace.
func TestKeptChangeOutlivesABoardSavedInPlace(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clk := clocktest.New(now)
	s := &Store{Root: root, LockWait: time.Second, Clock: clk}
	path := filepath.Join(Dir(root), "b.yaml")
	if err := os.MkdirAll(Dir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("tasks:\n  - id: [broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := Done
	if waited, err := s.Apply(context.Background(), Change{Task: "T-1", Status: &done, Key: "k", By: "Agent-1", At: now}); waited == "" || err != nil {
		t.Fatalf("Apply = %q, %v", waited, err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil { // mid-save: empty
		t.Fatal(err)
	}
	if applied, dropped, _, err := s.ApplyDeferred(context.Background()); len(applied)+len(dropped) != 0 || err != nil || !s.HasDeferred() {
		t.Fatalf("on an empty board: applied %v, dropped %v, %v; want it kept", applied, dropped, err)
	}
	if err := os.WriteFile(path, []byte("tasks:\n  - id: T-1\n    title: x\n    status: todo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if applied, _, _, err := s.ApplyDeferred(context.Background()); len(applied) != 1 || err != nil {
		t.Fatalf("once saved: applied %v, %v", applied, err)
	}
	// A task that stays gone is dropped after the grace.
	if err := os.WriteFile(path, []byte("tasks:\n  - id: [broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Apply(context.Background(), Change{Task: "T-9", Status: &done, Key: "k9", At: now})
	if err := os.WriteFile(path, []byte("tasks: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, dropped, _, _ := s.ApplyDeferred(context.Background()); len(dropped) != 0 {
		t.Fatalf("dropped at once: %v", dropped)
	}
	clk.Advance(missingGrace)
	if _, dropped, _, _ := s.ApplyDeferred(context.Background()); len(dropped) != 1 || s.HasDeferred() {
		t.Fatalf("after the grace: dropped %v, still kept %v", dropped, s.HasDeferred())
	}
}

// TestUnmakeableChangeIsRefusedAndHoldsNothingBack: a change the board can
// never take (its task is written as a flow mapping, which agentctl does
// not edit) is refused, not kept; and a change kept for one task (its
// board invalid) holds back later changes of that task only.
func TestUnmakeableChangeIsRefusedAndHoldsNothingBack(t *testing.T) {
	root := t.TempDir()
	s := &Store{Root: root, LockWait: time.Second}
	ctx := context.Background()
	board := "tasks:\n  - id: T-1\n    title: one\n    status: todo\n  - {id: T-2, title: compact, status: todo}\n"
	if err := s.CreateBoard(ctx, "b.yaml", []byte(board)); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(Dir(root), "o.yaml")
	if err := os.WriteFile(other, []byte("tasks:\n  - id: O-1\n    title: x\n    status: todo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done, review := Done, Review
	waited, err := s.Apply(ctx, Change{Task: "T-2", Status: &done, Key: "m1/board/0", At: time.Unix(100, 0)})
	if waited != "" || !Refused(err) || !strings.Contains(err.Error(), "flow") {
		t.Fatalf("Apply(T-2) = %q, %v; want refused for its flow mapping", waited, err)
	}
	// o.yaml left invalid: O-1's change waits, T-1's is made at once.
	if err := os.WriteFile(other, []byte("tasks:\n  - id: O-1\n    title: [x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if waited, err := s.Apply(ctx, Change{Task: "O-1", Status: &done, Key: "m2/board/0", At: time.Unix(200, 0)}); waited == "" || err != nil {
		t.Fatalf("Apply(O-1) on an invalid board = %q, %v; want it kept", waited, err)
	}
	if waited, err := s.Apply(ctx, Change{Task: "T-1", Status: &review, Key: "m3/board/0", At: time.Unix(300, 0)}); waited != "" || err != nil {
		t.Fatalf("Apply(T-1) = %q, %v; want it made, not held back by O-1's", waited, err)
	}
	if tk, err := s.Find("T-1"); err != nil || tk.Status != Review {
		t.Fatalf("T-1 = %+v, %v", tk, err)
	}
	_, _, waiting, err := s.ApplyDeferred(ctx)
	if err != nil || len(waiting) != 1 || waiting[0].Task != "O-1" || !strings.Contains(waiting[0].Waited, "o.yaml") {
		t.Fatalf("waiting %+v, %v; want O-1's change, saying why", waiting, err)
	}
}

// TestPersonsChangeComesAfterTheKeptOnes: a change an agent asked for
// while the board was invalid is made before a person's later change of
// the same task, never over it; and ApplyDeferred still reports it once.
func TestPersonsChangeComesAfterTheKeptOnes(t *testing.T) {
	root := t.TempDir()
	s := &Store{Root: root, LockWait: time.Second}
	ctx := context.Background()
	good := "tasks:\n  - id: T-1\n    title: one\n    status: todo\n"
	if err := s.CreateBoard(ctx, "b.yaml", []byte(good)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(Dir(root), "b.yaml")
	if err := os.WriteFile(path, []byte(good+"  - broken: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := Done
	if waited, err := s.Apply(ctx, Change{Task: "T-1", Status: &done, Key: "m1/board/0", By: "Agent-1", At: time.Unix(100, 0)}); waited == "" || err != nil {
		t.Fatalf("Apply = %q, %v; want it kept", waited, err)
	}
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "T-1", func(t *Task) error { t.Status = Blocked; return nil }); err != nil {
		t.Fatal(err)
	}
	applied, dropped, waiting, err := s.ApplyDeferred(ctx)
	if err != nil || len(applied) != 1 || applied[0].By != "Agent-1" || len(dropped)+len(waiting) != 0 {
		t.Fatalf("ApplyDeferred = %+v, %+v, %+v, %v; want the agent's change reported made", applied, dropped, waiting, err)
	}
	if tk, err := s.Find("T-1"); err != nil || tk.Status != Blocked {
		t.Fatalf("T-1 = %+v, %v; want the person's blocked", tk, err)
	}
	if s.HasDeferred() {
		t.Error("a reported change is still kept")
	}
}

// Only the change's own faults refuse it: any other error, an I/O error
// in whatever shape the system gives it, is waited out.
func TestRefusedIsTheChangesOwnFault(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("cannot update board: %w", syscall.EROFS):                                                           false,
		fmt.Errorf("cannot update board: %w", &os.PathError{Op: "rename", Err: syscall.EBUSY}):                         false,
		&LockError{Path: "l", Waited: time.Second}:                                                                     false,
		fmt.Errorf("%w %q", ErrNoTask, "T-9"):                                                                          true,
		fmt.Errorf("%w %q, and %w: %w", ErrNoTask, "T-9", errBoardUnread, &ParseError{File: "b.yaml"}):                 false,
		fmt.Errorf("%w %q, and %w: %w", ErrNoTask, "T-9", errBoardUnread, &os.PathError{Op: "open", Err: syscall.EIO}): false,
		&changeError{errors.New("task written as a flow mapping")}:                                                     true,
	} {
		if got := Refused(err); got != want {
			t.Errorf("Refused(%v) = %v, want %v", err, got, want)
		}
	}
}

// A board whose file cannot be read (a link to nowhere) may hold the task:
// a change of a task on no readable board waits for it, and is not
// refused.
func TestChangeWaitsForABoardThatCannotBeRead(t *testing.T) {
	root := t.TempDir()
	s := &Store{Root: root, LockWait: time.Second}
	if err := s.CreateBoard(context.Background(), "b.yaml", []byte("tasks:\n  - id: T-1\n    title: x\n    status: todo\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere.yaml"), filepath.Join(Dir(root), "lost.yaml")); err != nil {
		t.Fatal(err)
	}
	done := Done
	waited, err := s.Apply(context.Background(), Change{Task: "L-1", Status: &done, Key: "k", At: time.Unix(1, 0)})
	if err != nil || waited == "" || !s.HasDeferred() {
		t.Fatalf("Apply(L-1) beside an unreadable board = %q, %v; want it kept", waited, err)
	}
}
