package jsonl

import (
	"os"
	"path/filepath"
	"testing"
)

type line struct {
	N int `json:"n"`
}

// Lines come back in order; a missing file has none; a line cut short by
// a crash is skipped.
func TestAppendAndReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "day", "log.jsonl")
	if got, err := Read(path, func(line) bool { return true }); err != nil || got != nil {
		t.Fatalf("a missing file: %v, %v", got, err)
	}
	for n := 1; n <= 3; n++ {
		if err := Append(path, line{n}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"n": 4`)
	f.Close()
	got, err := Read(path, func(l line) bool { return l.N != 2 })
	if err != nil || len(got) != 2 || got[0].N != 1 || got[1].N != 3 {
		t.Errorf("read %v, %v; want 1 and 3", got, err)
	}
}
