package projectboard

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"

	"gopkg.in/yaml.v3"
)

// Every change and every look-up reads the boards, and on a big board the
// YAML parse is most of what that costs. So the last board read from each
// file is kept, and a later text of the file that differs from it only
// inside one task's text (an agent's change, a person's edit of one task)
// is read by parsing that task's text alone, on the same grounds as
// provenLocally, and splicing it into a copy of the tree. Any other
// difference gets a full parse. Kept boards are never changed, and callers
// get copies of their tasks, so nothing a caller does can reach them.

// keptBoards is how many files' boards are kept; past it, one is dropped.
const keptBoards = 64

var kept = struct {
	sync.Mutex
	boards map[string]*keptBoardEntry
	seq    uint64 // when each entry was kept, for dropping the oldest
}{boards: map[string]*keptBoardEntry{}}

// keptBoardEntry is a kept board, or how to make it: a command that
// changes one task and exits never reads the board again, and making the
// board of the new text costs a copy of every node below the change.
type keptBoardEntry struct {
	seq  uint64
	once sync.Once
	make func() *Board
	b    *Board
}

func (e *keptBoardEntry) board() *Board {
	e.once.Do(func() {
		if e.make != nil {
			e.b, e.make = e.make(), nil
		}
	})
	return e.b
}

func keptBoard(path string) *Board {
	kept.Lock()
	e := kept.boards[path]
	kept.Unlock()
	if e == nil {
		return nil
	}
	return e.board()
}

// isKept reports a board kept for path, without making it.
func isKept(path string) bool {
	kept.Lock()
	defer kept.Unlock()
	return kept.boards[path] != nil
}

func keepBoard(b *Board) { keep(b.Path, &keptBoardEntry{b: b}) }

// keepBoardLater keeps the board make returns for path, made when it is
// first asked for; make may return nil, for "none".
func keepBoardLater(path string, make func() *Board) {
	keep(path, &keptBoardEntry{make: make})
}

func keep(path string, e *keptBoardEntry) {
	kept.Lock()
	defer kept.Unlock()
	if _, ok := kept.boards[path]; !ok && len(kept.boards) >= keptBoards {
		// The board kept longest ago goes, never one just kept.
		oldest := ""
		for p, k := range kept.boards {
			if oldest == "" || k.seq < kept.boards[oldest].seq {
				oldest = p
			}
		}
		delete(kept.boards, oldest)
	}
	kept.seq++
	e.seq = kept.seq
	kept.boards[path] = e
}

// parseFile is Parse for the text of a board file, using the board last
// read from the same file when the text changed only inside one task.
func parseFile(path string, data []byte) (*Board, error) {
	if prev := keptBoard(path); prev != nil {
		if b := prev.reread(data); b != nil {
			if b != prev {
				keepBoard(b)
			}
			return b.copy(), nil
		}
	}
	b, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	keepBoard(b)
	return b.copy(), nil
}

// reread returns the board of data, a later text of b's file, when data
// differs from b's text only inside one task's text; nil otherwise.
func (b *Board) reread(data []byte) *Board {
	if bytes.Equal(b.data, data) {
		return b
	}
	// Lines are found by number: the parse's count and source's must agree.
	if b.seq == nil || len(b.taskNodes) == 0 || hasDirective(data) || oddBreaks(b.data) || oddBreaks(data) {
		return nil
	}
	n := min(len(b.data), len(data))
	p := 0
	for p < n && b.data[p] == data[p] {
		p++
	}
	s := 0
	for s < n-p && b.data[len(b.data)-1-s] == data[len(data)-1-s] {
		s++
	}
	src := newSource(b.data)
	// The task whose text starts at or before the first difference holds
	// it, or (for text added where one task ends and the next starts) the
	// one before.
	i := sort.Search(len(b.taskNodes), func(i int) bool { return src.start[b.taskNodes[i].Line-1] > p }) - 1
	for _, i := range []int{i, i - 1} {
		if i < 0 {
			continue
		}
		from, to, ok := b.taskSpan(src, i)
		if !ok || p < from || len(b.data)-s > to {
			continue
		}
		end := to + len(data) - len(b.data)
		item, t, ok := b.parseSpan(data, from, end)
		if !ok {
			return nil
		}
		return b.splice(src, data, i, from, to, item, t)
	}
	return nil
}

// splice returns the board of data, which is b's text with task i's text,
// b.data[from:to], replaced by the text item and t were parsed from on
// their own; nil when that cannot be done here: a board with anchors or
// aliases (a copied alias would still point into the old tree), or a task
// id used twice (Parse says why).
func (b *Board) splice(src *source, data []byte, i, from, to int, item *yaml.Node, t Task) *Board {
	if b.anchors {
		return nil
	}
	for j, o := range b.Tasks {
		if j != i && o.ID == t.ID {
			return nil
		}
	}
	end := to + len(data) - len(b.data)
	dl := bytes.Count(data[from:end], []byte("\n")) - bytes.Count(b.data[from:to], []byte("\n"))
	first := b.taskNodes[i].Line
	item = shifted(item, first-1)
	t.Line, t.Board = item.Line, b.Name()

	nb := &Board{Path: b.Path, data: data, tasksKey: b.tasksKey}
	seq := *b.seq
	seq.Content = slices.Clone(b.seq.Content)
	seq.Content[i] = item
	nb.Tasks = slices.Clone(b.Tasks)
	nb.Tasks[i] = t
	for j := i + 1; j < len(seq.Content); j++ {
		seq.Content[j] = shifted(seq.Content[j], dl)
		nb.Tasks[j].Line += dl
	}
	root := *b.root
	root.Content = slices.Clone(b.root.Content)
	for j, k := range root.Content {
		switch {
		case k == b.seq:
			root.Content[j] = &seq
		case k.Line > b.tasksKey.Line && k != b.seq:
			root.Content[j] = shifted(k, dl)
		}
	}
	nb.root, nb.seq, nb.taskNodes = &root, &seq, seq.Content
	return nb
}

// shifted is a copy of the tree under n, dl lines further down.
func shifted(n *yaml.Node, dl int) *yaml.Node {
	if dl == 0 {
		return n
	}
	c := *n
	c.Line += dl
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for k, x := range n.Content {
			c.Content[k] = shifted(x, dl)
		}
	}
	return &c
}

// copy is the board with copies of its tasks, which callers may change
// without reaching the kept board.
func (b *Board) copy() *Board {
	c := *b
	c.Tasks = slices.Clone(b.Tasks)
	for i := range c.Tasks {
		c.Tasks[i].DependsOn = slices.Clone(c.Tasks[i].DependsOn)
		if c.Tasks[i].Extra != nil {
			c.Tasks[i].Extra = copyValue(c.Tasks[i].Extra).(map[string]any)
		}
	}
	return &c
}

// copyValue is a deep copy of a decoded YAML value.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := maps.Clone(v)
		for k, x := range m {
			m[k] = copyValue(x)
		}
		return m
	case map[any]any:
		m := maps.Clone(v)
		for k, x := range m {
			m[k] = copyValue(x)
		}
		return m
	case []any:
		s := slices.Clone(v)
		for k, x := range s {
			s[k] = copyValue(x)
		}
		return s
	}
	return v
}

// appendedLocally returns how to make the board of out, which is b's text
// with a new task's text, out[from:end], inserted where b's last task ends;
// nil unless that is shown without parsing the whole of out. It is shown when the last
// task's text and the new one each parse on their own as one item (the
// last one as it reads now, the new one as t), nothing but blank lines and
// comments no deeper than the dashes follows them (so nothing after could
// join the new task), and the last task holds no "keep" block scalar
// (whose trailing blank lines would move to the new task).
func (b *Board) appendedLocally(src *source, out []byte, from, end int, t Task) func() *Board {
	last := len(b.taskNodes) - 1
	if b.anchors || last < 0 || b.seq == nil || oddBreaks(out) || hasDirective(out) {
		return nil
	}
	lastFrom, _, ok := b.taskSpan(src, last)
	if !ok || from < lastFrom || keepsTrailing(b.data[lastFrom:from]) {
		return nil
	}
	dash := b.seq.Column - 1
	for _, l := range bytes.SplitAfter(out[end:], []byte("\n")) {
		if !isBlank(l) && (!isComment(l) || indentOf(l) > dash) {
			return nil
		}
	}
	_, was, ok := b.parseSpan(b.data, lastFrom, from)
	if !ok || !sameRead(was, b.Tasks[last]) {
		return nil
	}
	item, got, ok := b.parseSpan(out, from, end)
	if !ok || !sameTask(got, t) {
		return nil
	}
	for _, o := range b.Tasks {
		if o.ID == got.ID {
			return nil
		}
	}
	first := bytes.Count(out[:from], []byte("\n")) + 1
	return func() *Board { return b.appended(out, shifted(item, first-1), got) }
}

// appended is the board of out, b's text with a task appended whose node,
// its lines counted from the file's first, is item and which reads as got.
func (b *Board) appended(out []byte, item *yaml.Node, got Task) *Board {
	got.Line, got.Board = item.Line, b.Name()
	nb := &Board{Path: b.Path, data: out, tasksKey: b.tasksKey}
	seq := *b.seq
	seq.Content = append(slices.Clone(b.seq.Content), item)
	nb.Tasks = append(slices.Clone(b.Tasks), got)
	root := *b.root
	root.Content = slices.Clone(b.root.Content)
	for j, k := range root.Content {
		if k == b.seq {
			root.Content[j] = &seq
		}
	}
	nb.root, nb.seq, nb.taskNodes = &root, &seq, seq.Content
	return nb
}

// sameRead reports two reads of one task as equal, wherever they were read.
func sameRead(a, b Task) bool {
	a.Line, a.Board, b.Line, b.Board = 0, "", 0, ""
	return reflect.DeepEqual(a, b)
}

// keepsTrailing reports a block scalar header with the "+" (keep) chomping
// indicator, as in "|+", ">2+" or "|+2".
func keepsTrailing(text []byte) bool {
	for i, c := range text {
		if c != '|' && c != '>' {
			continue
		}
		j := i + 1
		if j < len(text) && text[j] >= '1' && text[j] <= '9' {
			j++
		}
		if j < len(text) && text[j] == '+' {
			return true
		}
	}
	return false
}
