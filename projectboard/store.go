package projectboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// BoardsDir is the boards folder's name under a runtime root.
const BoardsDir = layout.BoardsDir

// Suffix ends a board's file name, and DefaultBoard is the board a task
// goes on when there are several and none is named.
const (
	Suffix       = layout.BoardSuffix
	DefaultBoard = layout.DefaultBoard
)

// ErrNoTask is returned for a task id that is on no board.
var ErrNoTask = errors.New("no such task")

// errBoardUnread joins ErrNoTask when a board that may hold the task
// could not be read (invalid, or its file unreadable): the task may be
// there.
var errBoardUnread = errors.New("a board is invalid or cannot be read")

// Dir is the boards folder of a runtime root.
func Dir(root string) string { return layout.Boards(root) }

// Store reads and changes the boards of one runtime root.
type Store struct {
	Root string
	// Clock stamps updated_at, times the wait for the boards' lock and
	// how long a kept change's task may be missing; clock.System when nil.
	// A change that finds the lock held waits on it: on a clock.Fixed it
	// would wait for ever.
	Clock clock.Clock
	// LockWait is how long a change waits for another writer before it
	// fails with a *LockError; DefaultLockWait when zero.
	LockWait time.Duration

	// afterRead runs between reading a board and the check before it is
	// replaced, and beforeWrite between that check and the write, so tests
	// can save the file "from an editor" at the worst moments.
	afterRead, beforeWrite func(path string)
	// full makes every change go the full way, so tests can hold the quick
	// way (quick.go) to it.
	full bool
}

func (s *Store) now() time.Time { return clock.Or(s.Clock).Now() }

// Boards reads every board, sorted by file name. Boards that do not parse
// are left out and reported in the error (joined *ParseError values), so a
// caller can show the good ones and still say what is wrong.
func (s *Store) Boards() ([]*Board, error) {
	entries, err := os.ReadDir(Dir(s.Root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list boards: %w", err)
	}
	var boards []*Board
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || atomicfile.IsTemp(name) || !strings.HasSuffix(name, Suffix) {
			continue
		}
		b, err := ReadBoard(filepath.Join(Dir(s.Root), name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		boards = append(boards, b)
	}
	sort.Slice(boards, func(i, j int) bool { return boards[i].Path < boards[j].Path })
	return boards, errors.Join(errs...)
}

// ReadBoard reads and parses one board file.
func ReadBoard(path string) (*Board, error) {
	data, err := sizecap.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read board: %w", err)
	}
	return parseFile(path, data)
}

// Tasks lists the tasks of every readable board, board by board.
func (s *Store) Tasks() ([]Task, error) {
	boards, err := s.Boards()
	var tasks []Task
	for _, b := range boards {
		tasks = append(tasks, b.Tasks...)
	}
	return tasks, err
}

// Find returns the task with id. If the id is on no readable board and some
// board is invalid, the error says so, since the task may be on it.
func (s *Store) Find(id string) (Task, error) {
	boards, berr := s.Boards()
	b, i, err := locate(boards, berr, id)
	if err != nil {
		return Task{}, err
	}
	return b.Tasks[i], nil
}

func locate(boards []*Board, berr error, id string) (*Board, int, error) {
	var found *Board
	idx := -1
	for _, b := range boards {
		if i := b.index(id); i >= 0 {
			if found != nil {
				return nil, -1, fmt.Errorf("task %q is on two boards, %s and %s; give one of them another id", id, found.Name(), b.Name())
			}
			found, idx = b, i
		}
	}
	if found == nil {
		if berr != nil {
			return nil, -1, fmt.Errorf("%w %q on the readable boards, and %w: %w", ErrNoTask, id, errBoardUnread, berr)
		}
		return nil, -1, fmt.Errorf("%w %q", ErrNoTask, id)
	}
	return found, idx, nil
}

// DefaultLockWait is how long a change waits for the boards' lock when
// Store.LockWait is zero. A change holds it for milliseconds, so a lock
// still held after this is stuck, or held by something that is not
// agentctl; waiting longer would only hide that.
const DefaultLockWait = 5 * time.Second

// LockError says the boards' lock was still held when the wait ran out.
type LockError struct {
	Path   string        // the lock file
	Holder string        // who holds it, e.g. "pid 4242 (flock)"; "" when unknown
	Waited time.Duration // how long the change waited
}

func (e *LockError) Error() string {
	msg := fmt.Sprintf("the boards' lock %s is still held after %s", e.Path, e.Waited.Round(time.Millisecond))
	if e.Holder != "" {
		msg += " by " + e.Holder
	}
	return msg
}

// lock takes the boards' cross-process write lock.
func (s *Store) lock(ctx context.Context) (func(), error) {
	path := layout.BoardsLock(s.Root)
	if err := atomicfile.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	wait := s.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, _, err := lockfile.Acquire(ctx, path, lockfile.Wait{For: wait, Clock: s.Clock})
	var busy *lockfile.BusyError
	switch {
	case err == nil:
		return func() { l.Unlock() }, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &busy):
		return nil, &LockError{Path: path, Holder: busy.Holder.String(), Waited: busy.Waited}
	default:
		return nil, fmt.Errorf("cannot lock the boards: %w", err)
	}
}

// maxAttempts bounds how often a change is redone because a human saved
// the board while it was being made.
const maxAttempts = 20

// Update changes the task with id across the boards: change gets the task
// as it is now and edits it; the keys that differ are written, updated_at is
// set, and nothing else in the file moves. It returns the task as written.
// The changes agents asked for before and that were kept (see Apply) are
// made first, so that none of them is made later over this one.
func (s *Store) Update(ctx context.Context, id string, change func(*Task) error) (Task, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return Task{}, err
	}
	defer unlock()
	if s.HasDeferred() {
		waiting, err := s.applyDeferred()
		if err != nil {
			return Task{}, fmt.Errorf("cannot make the changes kept before this one: %w", err)
		}
		if w := waitingFor(waiting, id); w != nil {
			return Task{}, fmt.Errorf("task %q has a change asked for by %s at %s still waiting for the boards (%s); it would be made after this one", id, w.By, w.At.UTC().Format(time.RFC3339), w.Waited)
		}
	}
	return s.update(id, change)
}

// update is Update with the lock held.
func (s *Store) update(id string, change func(*Task) error) (Task, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if t, done, err := s.quickUpdate(id, change); done {
			return t, err
		}
		boards, berr := s.Boards()
		b, i, err := locate(boards, berr, id)
		if err != nil {
			return Task{}, err
		}
		t := b.Tasks[i]
		t.DependsOn = append([]string(nil), t.DependsOn...)
		if err := change(&t); err != nil {
			return Task{}, &changeError{err}
		}
		if t.ID != id {
			return Task{}, &changeError{fmt.Errorf("task %q: a task's id cannot be changed", id)}
		}
		if keys, _ := changedKeys(b.Tasks[i], t); len(keys) == 0 {
			return b.Tasks[i], nil
		}
		t.UpdatedAt = s.now().UTC().Format(time.RFC3339)
		out, next, err := b.withTask(i, t)
		if err != nil {
			return Task{}, &changeError{err}
		}
		written, err := s.replace(b, out)
		if err != nil {
			return Task{}, err
		}
		if written {
			if next != nil {
				keepBoardLater(b.Path, next)
			}
			t.Line = b.Tasks[i].Line
			return t, nil
		}
	}
	return Task{}, fmt.Errorf("task %q: the board kept changing while agentctl was updating it; try again", id)
}

// Add appends a new task to the named board (a file name in the boards
// folder, created if missing). The id must not be on any board yet; an
// empty one gets the next free T-N, chosen under the boards' lock, so
// that tasks added at once never pick the same.
func (s *Store) Add(ctx context.Context, board string, t Task) (Task, error) {
	if board != filepath.Base(board) || !strings.HasSuffix(board, Suffix) || atomicfile.IsTemp(board) {
		return Task{}, fmt.Errorf("board %q must be a file name ending in .yaml", board)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return Task{}, err
	}
	defer unlock()
	if err := atomicfile.MkdirAll(Dir(s.Root)); err != nil {
		return Task{}, err
	}
	if t.UpdatedAt == "" {
		t.UpdatedAt = s.now().UTC().Format(time.RFC3339)
	}
	path := filepath.Join(Dir(s.Root), board)
	auto := t.ID == ""
	for attempt := 0; attempt < maxAttempts; attempt++ {
		// Read again at each attempt: a person may have saved a new task
		// meanwhile. Without an id, the next free one is chosen from the
		// same reading the task is added on.
		scanID := t.ID
		if auto {
			scanID = ""
		}
		scanned, quick := s.scanBoards(scanID)
		if auto {
			var err error
			if t.ID, err = s.nextID("T", scanned, quick); err != nil {
				return Task{}, err
			}
		}
		if quick {
			if done, err := s.quickAdd(path, t, scanned); done {
				if err != nil {
					return Task{}, err
				}
				t.Board = board
				return t, nil
			}
		}
		boards, berr := s.Boards()
		if _, _, err := locate(boards, nil, t.ID); err == nil {
			return Task{}, fmt.Errorf("task %q already exists", t.ID)
		}
		if berr != nil {
			// An id on the board that cannot be read would be on two.
			return Task{}, fmt.Errorf("cannot add task %q while a board cannot be read: %w", t.ID, berr)
		}
		var b *Board
		for _, x := range boards {
			if x.Path == path {
				b = x
			}
		}
		if b == nil {
			if _, err := os.Stat(path); err == nil {
				continue // saved by a person since the boards were read
			}
			b = &Board{Path: path, data: []byte(newBoardHeader)}
		}
		out, next, err := b.withNewTask(t)
		if err != nil {
			return Task{}, err
		}
		written, err := s.replace(b, out)
		if err != nil {
			return Task{}, err
		}
		if written {
			if next != nil {
				keepBoardLater(b.Path, next)
			}
			t.Board = b.Name()
			return t, nil
		}
	}
	return Task{}, fmt.Errorf("board %s kept changing while agentctl was adding to it; try again", board)
}

const newBoardHeader = "# Task board: agents and humans both edit this file.\n" +
	"# status is one of todo, in_progress, review, blocked, done.\n"

// NextID returns the next free id of the form PREFIX-N across all boards.
func (s *Store) NextID(prefix string) (string, error) {
	boards, ok := s.scanBoards("")
	return s.nextID(prefix, boards, ok)
}

// nextID is NextID over boards as scanBoards gave them, or where it could
// not (ok false), over the boards read the full way.
func (s *Store) nextID(prefix string, boards []*scanned, ok bool) (string, error) {
	var ids []string
	var err error
	if ok {
		for _, b := range boards {
			for id := range b.ids {
				ids = append(ids, id)
			}
		}
	} else {
		var tasks []Task
		tasks, err = s.Tasks()
		for _, t := range tasks {
			ids = append(ids, t.ID)
		}
	}
	max := 0
	for _, id := range ids {
		var n int
		if rest, ok := strings.CutPrefix(id, prefix+"-"); ok {
			if _, serr := fmt.Sscanf(rest, "%d", &n); serr == nil && fmt.Sprint(n) == strings.TrimLeft(rest, "0") && n > max {
				max = n
			}
		}
	}
	return fmt.Sprintf("%s-%d", prefix, max+1), err
}

// replace writes out over board b unless the file changed since b was read
// (a person saved it, without the lock): then it reports false and the
// caller starts again on the newer text. A save that lands between the
// last check and the write is caught too where the system can exchange
// two files in one step (atomicfile.Swap): what the write replaced comes
// back, and if it is not what b was read from, it is put back.
func (s *Store) replace(b *Board, out []byte) (bool, error) {
	if s.afterRead != nil {
		s.afterRead(b.Path)
	}
	cur, err := sizecap.ReadFile(b.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && b.root == nil && len(b.Tasks) == 0 && string(b.data) == newBoardHeader:
		if err := atomicfile.Create(b.Path, out); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("cannot read board: %w", err)
	case !bytes.Equal(cur, b.data):
		return false, nil
	}
	if s.beforeWrite != nil {
		s.beforeWrite(b.Path)
	}
	// A board linked in from elsewhere (a repository's) is written where it
	// lives, as an editor does: replacing the link would leave the two
	// apart, each edited on its own from then on.
	path := b.Path
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	old, err := atomicfile.Swap(path, out)
	if errors.Is(err, atomicfile.ErrSwapUnsupported) {
		if err := atomicfile.WriteFile(path, out); err != nil {
			return false, fmt.Errorf("cannot update board: %w", err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot update board: %w", err)
	}
	if bytes.Equal(old, b.data) {
		return true, nil
	}
	if err := putBack(path, old, out); err != nil {
		return false, err
	}
	return false, nil
}

// putBack restores a person's save that a write replaced. Should yet
// another save land meanwhile, the newest text is what stays.
func putBack(path string, theirs, ours []byte) error {
	for range maxAttempts {
		displaced, err := atomicfile.Swap(path, theirs)
		if err != nil {
			return fmt.Errorf("cannot put back the edit of %s that a person saved meanwhile: %w", path, err)
		}
		if bytes.Equal(displaced, ours) {
			return nil
		}
		theirs, ours = displaced, theirs
	}
	return fmt.Errorf("%s kept changing while agentctl put back a person's edit; check it", path)
}

// CreateBoard writes a new board file (an import) under the lock, refusing
// a name that exists and ids that are on other boards already.
func (s *Store) CreateBoard(ctx context.Context, board string, data []byte) error {
	if board != filepath.Base(board) || !strings.HasSuffix(board, Suffix) || atomicfile.IsTemp(board) {
		return fmt.Errorf("board %q must be a file name ending in .yaml", board)
	}
	path := filepath.Join(Dir(s.Root), board)
	nb, err := Parse(path, data)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("cannot create %s: %w", path, fs.ErrExist)
	}
	boards, berr := s.Boards()
	for _, t := range nb.Tasks {
		if b, _, err := locate(boards, nil, t.ID); err == nil {
			return fmt.Errorf("task %q is already on %s", t.ID, b.Name())
		}
	}
	if berr != nil {
		return fmt.Errorf("cannot check the new board's ids against an invalid board: %w", berr)
	}
	if err := atomicfile.MkdirAll(Dir(s.Root)); err != nil {
		return err
	}
	return atomicfile.Create(path, data)
}

// TaskText is the task's text exactly as it stands in the board file;
// exact is false when the file's line breaks (a lone carriage return, a
// Unicode line separator) keep it from being cut out, and the text is then
// the task as read, written out afresh. "" for a task not on the board.
func (b *Board) TaskText(id string) (text string, exact bool) {
	i := b.index(id)
	if i < 0 {
		return "", false
	}
	if oddBreaks(b.data) {
		return newTaskText(b.Tasks[i], "\n"), false
	}
	n := b.taskNodes[i]
	src := newSource(b.data)
	first := n.Line
	last := first
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0 {
		bounds := b.keyBounds(src, i)
		last = src.valueEndLine(n.Content[len(n.Content)-2], n.Content[len(n.Content)-1], bounds[len(bounds)-1])
	}
	return string(src.data[src.start[first-1]:src.lineEnd(last)]), true
}
