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
// (its task is on none of the boards, all of which are valid), rather than
// that the boards cannot take it now (a board a person left invalid, a lock
// held too long, a task on two boards): only the second kind is worth
// deferring.
func Refused(err error) bool {
	var pe *ParseError
	return errors.Is(err, ErrNoTask) && !errors.As(err, &pe)
}

// Apply makes the change now, after any change deferred before it; if the
// boards cannot take it, or older deferred changes still wait, it is
// deferred instead and applied later by ApplyDeferred. deferred says which
// happened. An error means neither: the change was refused (see Refused),
// or it could not even be kept.
func (s *Store) Apply(ctx context.Context, c Change) (deferred bool, err error) {
	unlock, lerr := s.lock(ctx)
	if lerr == nil {
		defer unlock()
		var waiting int
		if _, waiting, err = s.applyDeferred(); err == nil && waiting == 0 {
			_, err = s.update(c.Task, c.apply)
			if err == nil || Refused(err) {
				return false, err
			}
		} else if err == nil {
			err = fmt.Errorf("%d earlier changes wait for the boards", waiting)
		}
	} else {
		err = lerr
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	c.Waited = err.Error()
	if err := s.saveDeferred(c); err != nil {
		return false, err
	}
	return true, nil
}

// ApplyDeferred applies, in order, the changes that waited for the boards,
// each exactly once, and returns them. It stops at the first one the
// boards still cannot take; a change whose task has been on none of the
// boards for missingGrace is returned in dropped and no longer kept.
func (s *Store) ApplyDeferred(ctx context.Context) (applied, dropped []Change, err error) {
	if !s.HasDeferred() {
		return nil, nil, nil
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	results, _, err := s.applyDeferred()
	for _, r := range results {
		if r.err != nil {
			r.change.Waited = r.err.Error()
			dropped = append(dropped, r.change)
		} else {
			applied = append(applied, r.change)
		}
	}
	return applied, dropped, err
}

// HasDeferred reports, without the lock, whether any change waits.
func (s *Store) HasDeferred() bool {
	entries, _ := os.ReadDir(s.deferredDir())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !atomicfile.IsTemp(e.Name()) {
			return true
		}
	}
	return false
}

type deferredResult struct {
	change Change
	err    error // non-nil: refused and dropped
}

// applyDeferred is ApplyDeferred with the lock held. waiting counts the
// changes still kept. Under the lock each change is applied and its file
// removed before the next, so no two processes apply one change.
func (s *Store) applyDeferred() (results []deferredResult, waiting int, err error) {
	changes, err := s.loadDeferred()
	if err != nil {
		return nil, 0, err
	}
	for i, lc := range changes {
		_, uerr := s.update(lc.change.Task, lc.change.apply)
		if uerr != nil && !Refused(uerr) {
			return results, len(changes) - i, nil
		}
		if uerr != nil {
			// No task to hold back the changes after it; kept a while in
			// case its board is only being saved.
			c := lc.change
			if c.MissingSince.IsZero() {
				c.MissingSince = s.now().UTC()
				if err := s.rewriteDeferred(lc.path, c); err != nil {
					return results, len(changes) - i, err
				}
			}
			if s.now().Sub(c.MissingSince) < missingGrace {
				waiting++
				continue
			}
		}
		if err := os.Remove(lc.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return results, len(changes) - i + waiting, fmt.Errorf("cannot remove the applied change %s: %w", lc.path, err)
		}
		results = append(results, deferredResult{change: lc.change, err: uerr})
	}
	return results, waiting, nil
}

func (s *Store) deferredDir() string { return layout.BoardsDeferred(s.Root) }

func (s *Store) saveDeferred(c Change) error {
	if err := atomicfile.MkdirAll(s.deferredDir()); err != nil {
		return fmt.Errorf("cannot keep the change of %s: %w", c.Task, err)
	}
	sum := sha256.Sum256([]byte(c.Key))
	path := filepath.Join(s.deferredDir(), hex.EncodeToString(sum[:12])+".json")
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
		if !strings.HasSuffix(e.Name(), ".json") || atomicfile.IsTemp(e.Name()) {
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
			if rerr := os.Rename(path, path+".unreadable"); rerr != nil {
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
