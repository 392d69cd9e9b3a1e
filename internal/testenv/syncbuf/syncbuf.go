// Package syncbuf is the log a test keeps of what a process or driver
// under test writes while the test reads it: a buffer safe for one writer
// and any readers at once, and one that shows itself only when the test
// fails, so that a failure on a loaded machine is diagnosed from what was
// written, not reproduced.
//
// It owns only the buffer; it never starts anything.
package syncbuf

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer guarded for concurrent writes and reads.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Count is how many times sub was written so far.
func (s *Buffer) Count(sub string) int { return strings.Count(s.String(), sub) }

// OnFailure returns a Buffer that tb logs, titled what, if it fails.
func OnFailure(tb testing.TB, what string) *Buffer {
	b := &Buffer{}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("%s:\n%s", what, b.String())
		}
	})
	return b
}
