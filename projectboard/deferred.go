package projectboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
)

// DeferredDir holds the changes that waited for the boards, one file each.
const DeferredDir = layout.DeferredDir

// Change is a change of one task that an agent asked for. Absent fields are
// left as they are.
type Change struct {
	Task   string  `json:"task"`
	Status *Status `json:"status,omitempty"`
	Owner  *string `json:"owner,omitempty"`
	Notes  *string `json:"notes,omitempty"`
	// Key names the change once and for all (the message and the item that
	// asked for it), so deferring it again after a crash stores it once.
	Key string `json:"key"`
	// By and At say who asked for it and when; deferred changes are
	// applied in the order they were asked for.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
	// Waited says why the change could not be made when it was asked for.
	Waited string `json:"waited,omitempty"`
	// MissingSince is when its task was first found on none of the boards
	// while the change waited; see missingGrace.
	MissingSince time.Time `json:"missing_since,omitzero"`
}

// missingGrace is how long a kept change whose task is on none of the
// boards is kept anyway before it is dropped: an editor that saves in
// place shows an empty board for a moment, and a person may be moving the
// task between boards.
const missingGrace = 10 * time.Minute

func (c Change) apply(t *Task) error {
	if c.Status != nil {
		t.Status = *c.Status
	}
	if c.Owner != nil {
		t.Owner = *c.Owner
	}
	if c.Notes != nil {
		t.Notes = *c.Notes
	}
	return nil
}

// Refused reports whether err means the change itself can never be made
// as asked: its task is on none of the boards (all of them valid), or the
// board cannot hold it (a value a board refuses, a task written in a shape
// agentctl does not edit: changeError). Every other error is the boards'
// state now (a board a person left invalid, the lock held too long, a task
// on two boards, a file that cannot be written) and worth waiting out: a
// change kept for what no wait mends would wait for ever, and one refused
// for a passing fault would be lost.
func Refused(err error) bool {
	var ce *changeError
	return errors.Is(err, ErrNoTask) && !errors.Is(err, errBoardUnread) || errors.As(err, &ce)
}

// changeError is a change the task, as it stands, can never take.
type changeError struct{ error }

func (e *changeError) Unwrap() error { return e.error }

// Apply makes the change now, after the changes of the same task kept
// before it; if the boards cannot take it, or an older change of its task
// still waits, it is kept instead and made later by ApplyDeferred. waited
// says why it was kept, and is "" when the change was made. An error means
// neither: the change was refused (see Refused), or it could not even be
// kept.
func (s *Store) Apply(ctx context.Context, c Change) (waited string, err error) {
	unlock, lerr := s.lock(ctx)
	if lerr == nil {
		defer unlock()
		var waiting []Change
		if waiting, err = s.applyDeferred(); err == nil {
			if w := waitingFor(waiting, c.Task); w != nil {
				err = fmt.Errorf("an earlier change of task %s waits: %s", c.Task, w.Waited)
			} else if _, err = s.update(c.Task, c.apply); err == nil || Refused(err) {
				return "", err
			}
		}
	} else {
		err = lerr
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	c.Waited = err.Error()
	if err := s.saveDeferred(c); err != nil {
		return "", err
	}
	return c.Waited, nil
}

func waitingFor(waiting []Change, task string) *Change {
	for i := range waiting {
		if waiting[i].Task == task {
			return &waiting[i]
		}
	}
	return nil
}

// ApplyDeferred makes the kept changes the boards can take now, and returns
// every change made or dropped since it was last asked, whoever made it (a
// person's change makes the kept ones of its task first), each once, and
// the changes still waiting, with why. A change that can never be made, or
// whose task has been on none of the boards for missingGrace, is dropped.
func (s *Store) ApplyDeferred(ctx context.Context) (applied, dropped, waiting []Change, err error) {
	if !s.HasDeferred() {
		return nil, nil, nil, nil
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer unlock()
	waiting, err = s.applyDeferred()
	applied, dropped, serr := s.takeSettled()
	return applied, dropped, waiting, errors.Join(err, serr)
}

// HasDeferred reports, without the lock, whether any change waits, or was
// made or dropped and not yet reported.
func (s *Store) HasDeferred() bool {
	entries, _ := os.ReadDir(s.deferredDir())
	for _, e := range entries {
		if name := e.Name(); !atomicfile.IsTemp(name) && (strings.HasSuffix(name, layout.RecordSuffix) || strings.HasSuffix(name, appliedSuffix) || strings.HasSuffix(name, droppedSuffix)) {
			return true
		}
	}
	return false
}

// A kept change made, or dropped, is renamed to end in one of these until
// ApplyDeferred reports it: the process that makes it may be a person's
// command, which tells no agent.
const (
	appliedSuffix = layout.RecordSuffix + layout.AppliedSuffix
	droppedSuffix = layout.RecordSuffix + layout.DroppedSuffix
)

// applyDeferred makes, with the lock held, every kept change the boards
// can take now, oldest first, each exactly once: a change is settled
// before the next is tried. A change whose task has an older change still
// waiting waits behind it, so a task's changes are made in the order asked;
// the other tasks' go on. It returns the changes still waiting, with why.
func (s *Store) applyDeferred() (waiting []Change, err error) {
	changes, err := s.loadDeferred()
	if err != nil {
		return nil, err
	}
	for _, lc := range changes {
		c := lc.change
		if w := waitingFor(waiting, c.Task); w != nil {
			c.Waited = fmt.Sprintf("an earlier change of task %s waits: %s", c.Task, w.Waited)
			waiting = append(waiting, c)
			continue
		}
		_, uerr := s.update(c.Task, c.apply)
		switch {
		case uerr == nil:
			err = s.settle(lc.path, c, appliedSuffix)
		case errors.Is(uerr, ErrNoTask) && Refused(uerr):
			// Kept a while in case its board is only being saved.
			if c.MissingSince.IsZero() {
				c.MissingSince = s.now().UTC()
				if err = s.rewriteDeferred(lc.path, c); err != nil {
					break
				}
			}
			c.Waited = uerr.Error()
			if s.now().Sub(c.MissingSince) < missingGrace {
				waiting = append(waiting, c)
				continue
			}
			err = s.settle(lc.path, c, droppedSuffix)
		case Refused(uerr):
			c.Waited = uerr.Error()
			err = s.settle(lc.path, c, droppedSuffix)
		default:
			c.Waited = uerr.Error()
			waiting = append(waiting, c)
		}
		if err != nil {
			return waiting, err
		}
	}
	return waiting, nil
}

// settle records a kept change as made or dropped (suffix), with why, for
// ApplyDeferred to report.
func (s *Store) settle(path string, c Change, suffix string) error {
	if err := atomicfile.WriteFile(strings.TrimSuffix(path, layout.RecordSuffix)+suffix, encodeChange(c)); err != nil {
		return fmt.Errorf("cannot record the kept change of %s as settled: %w", c.Task, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove the settled change %s: %w", path, err)
	}
	return nil
}

// takeSettled returns, oldest first, and forgets the changes made or
// dropped since it was last called.
func (s *Store) takeSettled() (applied, dropped []Change, err error) {
	entries, err := os.ReadDir(s.deferredDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot list deferred board changes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		to := &applied
		switch {
		case atomicfile.IsTemp(name):
			continue
		case strings.HasSuffix(name, droppedSuffix):
			to = &dropped
		case !strings.HasSuffix(name, appliedSuffix):
			continue
		}
		path := filepath.Join(s.deferredDir(), name)
		data, err := os.ReadFile(path)
		var c Change
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		if err == nil {
			err = os.Remove(path)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("settled board change %s: %w", path, err))
			continue
		}
		*to = append(*to, c)
	}
	for _, l := range []*[]Change{&applied, &dropped} {
		sort.SliceStable(*l, func(i, j int) bool { return (*l)[i].At.Before((*l)[j].At) })
	}
	return applied, dropped, errors.Join(errs...)
}

func (s *Store) deferredDir() string { return layout.BoardsDeferred(s.Root) }

func (s *Store) saveDeferred(c Change) error {
	if err := atomicfile.MkdirAll(s.deferredDir()); err != nil {
		return fmt.Errorf("cannot keep the change of %s: %w", c.Task, err)
	}
	sum := sha256.Sum256([]byte(c.Key))
	path := filepath.Join(s.deferredDir(), hex.EncodeToString(sum[:12])+layout.RecordSuffix)
	if err := atomicfile.Create(path, encodeChange(c)); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot keep the change of %s: %w", c.Task, err)
	}
	return nil
}

func (s *Store) rewriteDeferred(path string, c Change) error {
	if err := atomicfile.WriteFile(path, encodeChange(c)); err != nil {
		return fmt.Errorf("cannot update the kept change of %s: %w", c.Task, err)
	}
	return nil
}

func encodeChange(c Change) []byte {
	data, _ := json.MarshalIndent(c, "", "  ") // plain strings and times only
	return append(data, '\n')
}

type loadedChange struct {
	path   string
	change Change
}

// loadDeferred reads the waiting changes, oldest first. A file that does
// not read as a change (a person's edit, a torn disk) is renamed to end in
// ".unreadable", kept for a person to look at, and no longer holds back the
// changes after it.
func (s *Store) loadDeferred() ([]loadedChange, error) {
	entries, err := os.ReadDir(s.deferredDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list deferred board changes: %w", err)
	}
	var out []loadedChange
	var errs []error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), layout.RecordSuffix) || atomicfile.IsTemp(e.Name()) {
			continue
		}
		path := filepath.Join(s.deferredDir(), e.Name())
		data, err := os.ReadFile(path)
		var c Change
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		if err == nil && c.Task == "" {
			err = errors.New("it names no task")
		}
		if err != nil {
			if rerr := os.Rename(path, path+layout.UnreadableSuffix); rerr != nil {
				errs = append(errs, fmt.Errorf("deferred board change %s is unreadable (%v) and cannot be set aside: %w", path, err, rerr))
			}
			continue
		}
		out = append(out, loadedChange{path: path, change: c})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].change.At.Equal(out[j].change.At) {
			return out[i].change.At.Before(out[j].change.At)
		}
		return out[i].path < out[j].path
	})
	return out, errors.Join(errs...)
}
