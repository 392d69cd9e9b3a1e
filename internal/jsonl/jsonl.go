// Package jsonl appends JSON values to a file one line each, and reads
// them back: the shape of the audit log and of the cost ledger.
//
// Each value is appended with a single O_APPEND write, so processes that
// append to the same file at once never interleave their lines. A line cut
// short by a crash is skipped when read. The package decides no names;
// callers give whole paths. It owns only the line format: it never
// rewrites, truncates or removes a file.
package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// Append adds v to the file at path as one line, creating the file and
// its folder as needed.
func Append(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, atomicfile.FilePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read returns the values of the file at path for which keep is true,
// in order; a missing file has none. A line that does not decode (cut
// short by a crash) is skipped.
func Read[T any](path string, keep func(T) bool) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var v T
		if json.Unmarshal(sc.Bytes(), &v) == nil && keep(v) {
			out = append(out, v)
		}
	}
	return out, sc.Err()
}
