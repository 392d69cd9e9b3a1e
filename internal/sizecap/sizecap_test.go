package sizecap

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCap(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("board"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(small); err != nil || string(got) != "board" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is over the cap without writing it.
	if err := f.Truncate(Limit() + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(big)
	var tb *TooBigError
	if !errors.As(err, &tb) || tb.What != big || tb.Size != Limit()+1 || !strings.Contains(tb.Hint(), Env) {
		t.Fatalf("ReadFile of a file over the cap = %v, want TooBigError naming it", err)
	}
	if _, err := ReadAll(io.LimitReader(zeros{}, Limit()+1), "the prompt on stdin"); !IsTooBig(err) || !strings.Contains(err.Error(), "the prompt on stdin") {
		t.Fatalf("ReadAll over the cap = %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile of an absent file = %v, want ErrNotExist kept", err)
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
