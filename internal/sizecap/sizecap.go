// Package sizecap reads a file, or a stream, whole only up to a size, so
// that a file grown by mistake (or by someone else) never takes a
// process's memory: what is over the cap is refused with an error naming
// it, its size and the cap, and how to raise the cap.
//
// The cap is 64 MiB, or AGENTCTL_MAX_FILE_MB megabytes where that is set:
// the one cap of every file agentctl reads whole (settings, templates,
// boards, lore, a board to import, a prompt on stdin, a file an agent asks
// for). Messages have their own, smaller cap (mailbox.max_message_bytes).
//
// It owns only the reading; it never opens a file for writing.
package sizecap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Env names the variable that sets the cap, in megabytes.
const Env = "AGENTCTL_MAX_FILE_MB"

const defaultMB = 64

// Limit is the cap in bytes: AGENTCTL_MAX_FILE_MB megabytes where that is
// a positive whole number, else 64 MiB.
var Limit = sync.OnceValue(func() int64 {
	if mb, err := strconv.ParseInt(os.Getenv(Env), 10, 64); err == nil && mb > 0 {
		return mb << 20
	}
	return defaultMB << 20
})

// TooBigError is a file, or a stream, over the cap.
type TooBigError struct {
	What  string // the file's path, or what the stream is
	Size  int64  // the file's size; 0 for a stream, read only up to the cap
	Limit int64
}

func (e *TooBigError) Error() string {
	if e.Size == 0 {
		return fmt.Sprintf("%s is over the %d MiB that agentctl reads of one file", e.What, e.Limit>>20)
	}
	return fmt.Sprintf("%s is %d bytes, over the %d MiB that agentctl reads of one file", e.What, e.Size, e.Limit>>20)
}

func (e *TooBigError) Hint() string {
	return fmt.Sprintf("if it should be read, raise the cap: %s=%d", Env, 2*(e.Limit>>20))
}

// ReadFile is os.ReadFile with the cap.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := Limit()
	size := int64(0)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if size = fi.Size(); size > limit {
			return nil, &TooBigError{What: path, Size: size, Limit: limit}
		}
	}
	// A file that grows while it is read is stopped at the cap too.
	data, err := readAll(f, limit, size)
	if IsTooBig(err) {
		size := limit + 1
		if fi, serr := f.Stat(); serr == nil && fi.Size() > limit {
			size = fi.Size()
		}
		return nil, &TooBigError{What: path, Size: size, Limit: limit}
	}
	return data, err
}

// ReadAll is io.ReadAll with the cap; what names the stream in the error.
func ReadAll(r io.Reader, what string) ([]byte, error) {
	data, err := readAll(r, Limit(), 0)
	if IsTooBig(err) {
		return nil, &TooBigError{What: what, Limit: Limit()}
	}
	return data, err
}

// readAll reads r up to one byte past limit; size is what it likely
// holds, so that a big file is read into one buffer of its size.
func readAll(r io.Reader, limit, size int64) ([]byte, error) {
	data := make([]byte, 0, min(size, limit)+512)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > limit {
		return nil, &TooBigError{Limit: limit}
	}
	return data, nil
}

// IsTooBig reports whether err is a file or stream over the cap.
func IsTooBig(err error) bool {
	var t *TooBigError
	return errors.As(err, &t)
}
