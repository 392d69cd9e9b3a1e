package projectboard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"gopkg.in/yaml.v3"
)

// An edit of one task is checked in one of two ways. The cheap way parses
// only the task's own text: when the task is a block sequence item that
// starts on its "- " line and the edits stay inside it, the rest of the
// file is the same text read in the same state (a block item leaves no open
// quote, bracket or scalar behind, or its text alone would not parse), so
// everything outside the task decodes as before without reading it again.
// Whatever the cheap way cannot prove (anchors and aliases, which reach
// across tasks; directives; odd layouts; any doubt at all) goes to the full
// check, which parses the whole new text and compares it with the old.

// taskSpan is the byte range of task i's text as a block sequence item:
// from the start of the line holding its "-" to the start of the line that
// ends it (the next task's, the next top-level key's) or the end of the
// file. ok is false when the task is not laid out so that its text alone
// reads as it does in the file.
func (b *Board) taskSpan(src *source, i int) (from, to int, ok bool) {
	if b.seq == nil || b.seq.Style&yaml.FlowStyle != 0 || hasDirective(src.data) {
		return 0, 0, false
	}
	dash := b.seq.Column - 1
	startsItem := func(n *yaml.Node) bool {
		l := src.line(n.Line)
		return indentOf(l) == dash && len(l) > dash+1 && l[dash] == '-' && (l[dash+1] == ' ' || l[dash+1] == '\t')
	}
	n := b.taskNodes[i]
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 || !startsItem(n) || usesAnchors(n) {
		return 0, 0, false
	}
	if i+1 < len(b.taskNodes) && !startsItem(b.taskNodes[i+1]) {
		return 0, 0, false
	}
	return src.start[n.Line-1], src.lineStart(b.taskEndLine(src, i)), true
}

// hasDirective reports a "%YAML" or "%TAG" line: a tag handle in a task
// may mean something else without the directives before it.
func hasDirective(data []byte) bool {
	return bytes.HasPrefix(data, []byte("%")) || bytes.Contains(data, []byte("\n%"))
}

// usesAnchors reports an anchor or alias anywhere under n: both tie the
// node to text outside it.
func usesAnchors(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if usesAnchors(c) {
			return true
		}
	}
	return false
}

// provenLocally reports whether an edit of task i, whose text spans
// data[from:to] before the edit, is proven sound by its text alone: out
// differs from the board only inside that span, the span's new text parses
// as exactly one task that reads back as want, and the task's other keys
// decode as before. It returns the task's new node, its lines counted from
// the span's first, and the task read from it. A nil node means "not
// proven", never "wrong": the full check decides then.
func (b *Board) provenLocally(out []byte, edits []edit, i int, want Task, keys []string, from, to int) (*yaml.Node, Task) {
	for _, e := range edits {
		if e.from < from || e.to > to {
			return nil, Task{}
		}
	}
	end := to + len(out) - len(b.data)
	if end < from || !bytes.Equal(out[:from], b.data[:from]) || !bytes.Equal(out[end:], b.data[to:]) {
		return nil, Task{}
	}
	item, got, ok := b.parseSpan(out, from, end)
	if !ok || !sameTask(got, want) {
		return nil, Task{}
	}
	before, err := decodeNode(b.taskNodes[i])
	if err != nil {
		return nil, Task{}
	}
	after, err := decodeNode(item)
	if err != nil || !sameExcept(before, after, keys) {
		return nil, Task{}
	}
	return item, got
}

// parseSpan parses data[from:end], the text of one task (see taskSpan), on
// its own. ok is false unless it is whole lines that make exactly one block
// item at the board's indentation, with no anchors or aliases and no line
// that could end the document.
func (b *Board) parseSpan(data []byte, from, end int) (item *yaml.Node, t Task, ok bool) {
	if (from > 0 && data[from-1] != '\n') || (end < len(data) && (end == from || data[end-1] != '\n')) {
		return nil, Task{}, false
	}
	text := data[from:end]
	// It must start with its "- " at the column the others have: blank
	// lines before it would belong to the task above when that ends in a
	// "|+" block.
	if dash := b.seq.Column - 1; indentOf(text) != dash || len(text) < dash+2 || text[dash] != '-' || (text[dash+1] != ' ' && text[dash+1] != '\t') {
		return nil, Task{}, false
	}
	if bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) ||
		bytes.Contains(text, []byte("\n---")) || bytes.Contains(text, []byte("\n...")) {
		return nil, Task{}, false
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, Task{}, false
	}
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, Task{}, false
	}
	if len(doc.Content) != 1 {
		return nil, Task{}, false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || seq.Column != b.seq.Column || len(seq.Content) != 1 {
		return nil, Task{}, false
	}
	item = seq.Content[0]
	if item.Kind != yaml.MappingNode || usesAnchors(item) {
		return nil, Task{}, false
	}
	t, err := parseTask(b.Path, item)
	if err != nil {
		return nil, Task{}, false
	}
	return item, t, true
}

// sameTask compares the values a task reads back with the ones asked for.
func sameTask(got, want Task) bool {
	got.Line, got.Board, got.Extra, want.Extra, want.Line, want.Board = 0, "", nil, nil, 0, ""
	if len(got.DependsOn) == 0 && len(want.DependsOn) == 0 {
		got.DependsOn, want.DependsOn = nil, nil
	}
	return reflect.DeepEqual(got, want)
}

// sameExcept compares two decoded tasks, leaving out the keys changed.
func sameExcept(before, after any, keys []string) bool {
	for _, m := range []any{before, after} {
		if m, ok := m.(map[string]any); ok {
			for _, k := range keys {
				delete(m, k)
			}
		}
	}
	return reflect.DeepEqual(before, after)
}

// verify checks an edit before it is written: the new text parses as a
// board, task i reads back as want, and everything else decodes exactly as
// before. A failure here means agentctl could not express the change without
// touching something else, so nothing is written.
func (b *Board) verify(out []byte, i int, want Task, keys []string, added bool) error {
	fail := func(why string) error {
		return fmt.Errorf("%s: cannot apply the change to task %q without disturbing the rest of the board (%s); board left unchanged", b.Name(), want.ID, why)
	}
	nb, err := Parse(b.Path, out)
	if err != nil {
		return fail(err.Error())
	}
	if i >= len(nb.Tasks) || nb.Tasks[i].ID != want.ID {
		return fail("the task moved")
	}
	if got := nb.Tasks[i]; !sameTask(got, want) {
		return fail(fmt.Sprintf("it would read back as %+v", got))
	}
	// Decode the nodes both parses already built rather than parse again:
	// on a big board the parse is most of an update's cost.
	before, err := decodeNode(b.root)
	if err != nil {
		return fail(err.Error())
	}
	after, err := decodeNode(nb.root)
	if err != nil {
		return fail(err.Error())
	}
	tasksAfter := tasksOf(after)
	if added {
		if len(tasksAfter) != len(tasksOf(before))+1 {
			return fail("the number of tasks is wrong")
		}
		setTasks(after, tasksAfter[:len(tasksAfter)-1])
		if tasksOf(before) == nil {
			setTasks(before, tasksAfter[:0])
		}
	} else {
		tasksBefore := tasksOf(before)
		if i >= len(tasksBefore) || i >= len(tasksAfter) {
			return fail("the task moved")
		}
		sameExcept(tasksBefore[i], tasksAfter[i], keys)
	}
	if before == nil { // the board was empty: only "tasks" may have appeared
		before = map[string]any{"tasks": []any{}}
	}
	if !reflect.DeepEqual(before, after) {
		return fail("other values would change")
	}
	return nil
}

// tasksOf and setTasks reach the tasks of a decoded board, which is a
// map[any]any when some top-level key is not a string ("0:").
func tasksOf(doc any) []any {
	var t any
	switch m := doc.(type) {
	case map[string]any:
		t = m["tasks"]
	case map[any]any:
		t = m["tasks"]
	}
	tasks, _ := t.([]any)
	return tasks
}

func setTasks(doc any, tasks []any) {
	switch m := doc.(type) {
	case map[string]any:
		m["tasks"] = tasks
	case map[any]any:
		m["tasks"] = tasks
	}
}

func decodeNode(n *yaml.Node) (any, error) {
	if n == nil {
		return nil, nil
	}
	var v any
	err := n.Decode(&v)
	return v, err
}
