package childthread

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// A failed ready is Start's failure, and held never runs.
func TestReadyFailureIsStarts(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	refused := errors.New("refused")
	held := false
	err := Start(cmd, func() error {
		cmd.Wait()
		return refused
	}, func() { held = true })
	if !errors.Is(err, refused) {
		t.Fatalf("Start = %v, want ready's error", err)
	}
	if held {
		t.Fatal("held ran after ready failed")
	}
}

// A command that cannot start is Start's failure, and nothing runs.
func TestStartFailure(t *testing.T) {
	ran := false
	err := Start(exec.Command("/nonexistent/program"), func() error { ran = true; return nil }, func() { ran = true })
	if err == nil || ran {
		t.Fatalf("Start = %v, ran = %v; want an error and nothing run", err, ran)
	}
}
