package mailbox

import (
	"io/fs"
	"slices"
	"time"
)

// Settler tells when a file someone is still writing has stopped changing:
// a file that is not a complete message yet is taken only once its size
// and modification time have stayed the same for the settle period. The
// store uses one for inbox/ and the intake one for the places it watches.
// Time is whatever the caller says it is. Not safe for concurrent use.
type Settler struct {
	period time.Duration
	files  map[string]settleState
}

type settleState struct {
	size  int64
	mtime time.Time
	since time.Time
}

// NewSettler returns a Settler that waits period.
func NewSettler(period time.Duration) *Settler {
	return &Settler{period: period, files: map[string]settleState{}}
}

// Settled reports whether the file has stopped changing for the settle
// period, and starts or restarts its wait if not. A file seen for the
// first time that has not been touched for the period is settled at once:
// a scan found it long after its writer finished.
func (s *Settler) Settled(key string, fi fs.FileInfo, now time.Time) bool {
	st, ok := s.files[key]
	if !ok && now.Sub(fi.ModTime()) >= s.period {
		return true
	}
	if !ok || st.size != fi.Size() || !st.mtime.Equal(fi.ModTime()) {
		s.Restart(key, fi, now)
		return false
	}
	if now.Sub(st.since) < s.period {
		return false
	}
	delete(s.files, key)
	return true
}

// Restart begins the file's wait again from now, for a file that looks
// settled but is known to be unfinished (a writer stalled mid-message).
func (s *Settler) Restart(key string, fi fs.FileInfo, now time.Time) {
	s.files[key] = settleState{size: fi.Size(), mtime: fi.ModTime(), since: now}
}

// Forget drops the file's wait: it was taken, removed or refused.
func (s *Settler) Forget(key string) { delete(s.files, key) }

// Due returns, sorted, the files whose wait has run out by now, to be
// looked at again.
func (s *Settler) Due(now time.Time) []string {
	var due []string
	for key, st := range s.files {
		if !now.Before(st.since.Add(s.period)) {
			due = append(due, key)
		}
	}
	slices.Sort(due)
	return due
}

// Next is when the first wait runs out; ok is false when nothing waits.
func (s *Settler) Next() (t time.Time, ok bool) {
	for _, st := range s.files {
		if due := st.since.Add(s.period); !ok || due.Before(t) {
			t, ok = due, true
		}
	}
	return t, ok
}

// Keep forgets every file that keep says is gone.
func (s *Settler) Keep(keep func(key string) bool) {
	for key := range s.files {
		if !keep(key) {
			delete(s.files, key)
		}
	}
}
