package projectboard

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/sizecap"
)

// A command that changes one task and exits would build every task's nodes
// of a big board only to look at one of them. So while this process has
// kept no board yet, a change checks each board with fastReadEach, which
// holds every task to the checks Parse makes (ids used once, each task a
// mapping with a valid status, and so on) but drops its nodes as soon as it
// is checked. The one task to change, or the last one for an added task, is
// then edited as a board of its own: "tasks:" and the task's text, parsed,
// edited and checked by withTask or withNewTask, and proven by the task's
// text alone (provenLocally, appendedLocally). The new text takes the old
// one's place and every other byte of the file stays as it was; the text
// around a block item reads the same whatever the item holds, which is
// what those proofs rest on. Anything else (a board outside the part of
// YAML fastRead reads, an invalid board, an id on two boards, a change the
// task's text alone cannot prove, a process that keeps boards) goes the
// full way, which also gives the errors.

// scanned is what a change needs of a board that was checked but not kept.
type scanned struct {
	path string
	data []byte
	root *yaml.Node // the top-level mapping, its tasks list left empty
	ids  map[string]struct{}
	// want is the task looked for, last the last task.
	want, last taskText
}

// taskText is a task as it reads, at index at (-1: none), and its text
// data[from:to] when that is a block item as taskSpan takes it (to is 0
// otherwise).
type taskText struct {
	at       int
	task     Task
	from, to int
}

// scanBoard checks data as Parse does and finds the task with id in it and
// the last task. ok is false when Parse must decide.
func scanBoard(path string, data []byte, id string) (*scanned, bool) {
	sc := &scanned{path: path, data: data, want: taskText{at: -1}, last: taskText{at: -1}}
	name := filepath.Base(path)
	// Sized for a task every hundred bytes or so: growing it costs more
	// than the rest of a task's check.
	ids := make(map[string]struct{}, len(data)/100)
	// Where the tasks' texts start and end; -1 for a task that is not a
	// block mapping.
	wantFrom, wantTo, lastFrom, n := 0, 0, 0, 0
	root, ok := fastReadEach(data, func(item *yaml.Node, off int) bool {
		t, err := parseTask(path, item)
		if err != nil {
			return false
		}
		if _, dup := ids[t.ID]; dup {
			return false
		}
		ids[t.ID] = struct{}{}
		t.Board = name
		// Of the node only its layout is kept: the next item reuses it.
		from := off
		if item.Kind != yaml.MappingNode || item.Style&yaml.FlowStyle != 0 {
			from = -1
		}
		if sc.want.at >= 0 && wantTo == 0 {
			wantTo = off
		}
		if t.ID == id {
			sc.want, wantFrom = taskText{at: n, task: t}, from
		}
		sc.last, lastFrom = taskText{at: n, task: t}, from
		n++
		return true
	})
	if !ok || root == nil || root.Kind != yaml.MappingNode || checkKeys(path, root) != nil {
		return nil, false
	}
	sc.root, sc.ids = root, ids
	var seq *yaml.Node
	lastTo := 0
	for i := 0; i < len(root.Content); i += 2 {
		switch k := root.Content[i]; {
		case k.Value == "tasks":
			seq = root.Content[i+1]
		case seq != nil && lastTo == 0:
			lastTo = lineOffset(data, k.Line)
		}
	}
	// A list fastReadEach did not hand out (a flow list, a null) is left
	// to Parse.
	if seq == nil || seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || n == 0 {
		return nil, false
	}
	if lastTo == 0 {
		lastTo = len(data)
	}
	if wantTo == 0 {
		wantTo = lastTo
	}
	if sc.want.at >= 0 && wantFrom >= 0 {
		sc.want.from, sc.want.to = wantFrom, wantTo
	}
	if lastFrom >= 0 {
		sc.last.from, sc.last.to = lastFrom, lastTo
	}
	return sc, true
}

// scanBoards checks every board for a change of the task with id, or for
// adding a task (id ""). ok is false when the full way must be taken.
func (s *Store) scanBoards(id string) (boards []*scanned, ok bool) {
	if s.full {
		return nil, false
	}
	entries, err := os.ReadDir(Dir(s.Root))
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || atomicfile.IsTemp(name) || !strings.HasSuffix(name, Suffix) {
			continue
		}
		path := filepath.Join(Dir(s.Root), name)
		if isKept(path) {
			// This process reads the boards again: reading them whole once
			// makes every later read cheap (see cache.go).
			return nil, false
		}
		data, err := sizecap.ReadFile(path)
		if err != nil {
			return nil, false
		}
		sc, ok := scanBoard(path, data, id)
		if !ok {
			return nil, false
		}
		boards = append(boards, sc)
	}
	return boards, true
}

// nlOf is the line break the board's edits are written with (newSource's).
func nlOf(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// lineOffset is the offset of line n (1-based) of data.
func lineOffset(data []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// alone is the board of task text data[from:to] on its own, when it reads
// there as want.
func alone(path string, data []byte, from, to int, want Task) (b *Board, header int, ok bool) {
	head := "tasks:" + nlOf(data)
	b, err := parse(path, append([]byte(head), data[from:to]...))
	if err != nil || len(b.Tasks) != 1 || !sameRead(b.Tasks[0], want) {
		return nil, 0, false
	}
	return b, len(head), true
}

// quickUpdate is update's one attempt without building the boards' nodes.
// done is false when the full way must decide.
func (s *Store) quickUpdate(id string, change func(*Task) error) (t Task, done bool, err error) {
	boards, ok := s.scanBoards(id)
	if !ok {
		return Task{}, false, nil
	}
	var sc *scanned
	for _, b := range boards {
		if b.want.at >= 0 {
			if sc != nil {
				return Task{}, false, nil // on two boards: the full way says so
			}
			sc = b
		}
	}
	if sc == nil || sc.want.to == 0 {
		return Task{}, false, nil
	}
	was := sc.want.task
	mb, header, ok := alone(sc.path, sc.data, sc.want.from, sc.want.to, was)
	if !ok {
		return Task{}, false, nil
	}
	t = mb.copy().Tasks[0]
	t.Line, t.Board = was.Line, was.Board
	if err := change(&t); err != nil {
		return Task{}, true, &changeError{err}
	}
	if t.ID != id {
		return Task{}, true, &changeError{fmt.Errorf("task %q: a task's id cannot be changed", id)}
	}
	if keys, _ := changedKeys(was, t); len(keys) == 0 {
		return was, true, nil
	}
	t.UpdatedAt = s.now().UTC().Format(time.RFC3339)
	out, next, err := mb.withTask(0, t)
	if err != nil || next == nil {
		return Task{}, false, nil
	}
	written, err := s.quickWrite(sc, sc.want, out[header:])
	if err != nil || !written {
		return Task{}, err != nil, err
	}
	return t, true, nil
}

// quickAdd is Add's one attempt without building the boards' nodes, for a
// board that exists and ends with its tasks list. boards are every board
// as scanBoards gave them for t's id, or, for an id chosen from them, for
// none.
func (s *Store) quickAdd(path string, t Task, boards []*scanned) (done bool, err error) {
	var sc *scanned
	for _, b := range boards {
		if b.want.at >= 0 {
			return false, nil // the full way says so
		}
		if b.path == path {
			sc = b
		}
	}
	if sc == nil || sc.last.to != len(sc.data) {
		return false, nil
	}
	mb, header, ok := alone(sc.path, sc.data, sc.last.from, sc.last.to, sc.last.task)
	if !ok {
		return false, nil
	}
	out, next, err := mb.withNewTask(t)
	if err != nil || next == nil {
		return false, nil
	}
	written, err := s.quickWrite(sc, sc.last, out[header:])
	return err != nil || written, err
}

// quickWrite puts text in place of task tt's text and writes the board as
// replace does; false when the file changed since it was read.
func (s *Store) quickWrite(sc *scanned, tt taskText, text []byte) (bool, error) {
	out := make([]byte, 0, len(sc.data)-(tt.to-tt.from)+len(text))
	out = append(append(append(out, sc.data[:tt.from]...), text...), sc.data[tt.to:]...)
	written, err := s.replace(&Board{Path: sc.path, data: sc.data, root: sc.root}, out)
	if written {
		quickEdits.Add(1)
	}
	return written, err
}

// quickEdits counts the changes written the quick way, so tests can tell
// which way a change went.
var quickEdits atomic.Int64
