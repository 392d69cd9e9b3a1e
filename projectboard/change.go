package projectboard

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// changedKeys lists the keys whose values differ between two versions of a
// task, with the new values.
func changedKeys(old, new Task) ([]string, map[string]any) {
	var keys []string
	values := map[string]any{}
	set := func(key string, changed bool, v any) {
		if changed {
			keys = append(keys, key)
			values[key] = v
		}
	}
	set(keyTitle, old.Title != new.Title, new.Title)
	set(keyStatus, old.Status != new.Status, string(new.Status))
	set(keyOwner, old.Owner != new.Owner, new.Owner)
	set(keyPriority, old.Priority != new.Priority, new.Priority)
	set(keyDependsOn, !slices.Equal(old.DependsOn, new.DependsOn), append([]string{}, new.DependsOn...))
	set(keyNotes, old.Notes != new.Notes, new.Notes)
	set(keyUpdatedAt, old.UpdatedAt != new.UpdatedAt, new.UpdatedAt)
	return keys, values
}

// checkTask refuses values a board must never be given: everything of a
// new task, and what a change sets (checkChange).
func checkTask(t Task) error {
	if strings.TrimSpace(t.ID) == "" || strings.ContainsAny(t.ID, " \t\r\n") {
		return fmt.Errorf("task id %q must be a non-empty single word", t.ID)
	}
	if strings.TrimSpace(t.Title) == "" {
		return fmt.Errorf("task %q needs a title", t.ID)
	}
	return checkChange(Task{}, t)
}

// checkChange refuses the values a change of old to t sets that a board
// must never be given. What it leaves as it was is not held against it: a
// board written by hand or by an older tool may hold an id with spaces or
// an empty title, and its task must still take a change of status.
func checkChange(old, t Task) error {
	if _, err := ParseStatus(string(t.Status)); err != nil {
		return err
	}
	if t.Title != old.Title && strings.TrimSpace(t.Title) == "" {
		return fmt.Errorf("task %q needs a title", t.ID)
	}
	for _, v := range [][2]string{{old.Owner, t.Owner}, {old.Priority, t.Priority}, {old.UpdatedAt, t.UpdatedAt}} {
		if v[0] != v[1] && strings.ContainsAny(v[1], "\r\n") {
			return fmt.Errorf("owner, priority and updated_at must be single lines")
		}
	}
	if !slices.Equal(old.DependsOn, t.DependsOn) {
		for _, d := range t.DependsOn {
			if strings.TrimSpace(d) == "" || strings.ContainsAny(d, "\r\n") {
				return fmt.Errorf("depends_on must list task ids")
			}
		}
	}
	return nil
}

// withTask returns the board's text with task i changed to t, touching only
// the lines of the keys that changed, after checking the result. next makes
// the board of that text when the check showed it without a full parse; it
// is nil otherwise.
func (b *Board) withTask(i int, t Task) (out []byte, next func() *Board, err error) {
	if err := checkChange(b.Tasks[i], t); err != nil {
		return nil, nil, err
	}
	if t.ID != b.Tasks[i].ID {
		return nil, nil, fmt.Errorf("a task's id cannot be changed")
	}
	if err := b.editable(); err != nil {
		return nil, nil, err
	}
	keys, values := changedKeys(b.Tasks[i], t)
	if len(keys) == 0 {
		return b.data, func() *Board { return b }, nil
	}
	src := newSource(b.data)
	edits, err := b.taskEdit(src, i, keys, values)
	if err != nil {
		return nil, nil, err
	}
	out = apply(b.data, edits)
	if from, to, ok := b.taskSpan(src, i); ok {
		if item, got := b.provenLocally(out, edits, i, t, keys, from, to); item != nil {
			return out, func() *Board { return b.splice(src, out, i, from, to, item, got) }, nil
		}
	}
	if err := b.verify(out, i, t, keys, false); err != nil {
		return nil, nil, err
	}
	return out, nil, nil
}

// withNewTask returns the board's text with t appended to its tasks. next
// makes the board of that text when it was shown without a full parse; it
// is nil otherwise.
func (b *Board) withNewTask(t Task) (out []byte, next func() *Board, err error) {
	if err := checkTask(t); err != nil {
		return nil, nil, err
	}
	if err := b.editable(); err != nil {
		return nil, nil, err
	}
	src := newSource(b.data)
	item := newTaskText(t, src.nl)
	switch {
	case b.root == nil:
		out = append(append([]byte{}, b.data...), []byte(ensureNL(b.data, src.nl)+"tasks:"+src.nl+indentLines(item, "  "))...)
	case b.seq == nil || len(b.seq.Content) == 0:
		if b.seq != nil && b.seq.Style&yaml.FlowStyle == 0 {
			return nil, nil, fmt.Errorf("%s: cannot find where to add a task", b.Name())
		}
		colon, err := b.colon(src, b.tasksKey)
		if err != nil {
			return nil, nil, err
		}
		// Replace "tasks:" / "tasks: []" / "tasks: ~" and whatever value
		// follows on that line with a block list.
		end := src.lineEnd(b.tasksKey.Line)
		indent := strings.Repeat(" ", b.tasksKey.Column-1+2)
		out = apply(b.data, []edit{{colon, end, src.nl + indentLines(item, indent)}})
	default:
		if b.seq.Style&yaml.FlowStyle != 0 {
			return nil, nil, fmt.Errorf("%s: tasks: is written as a [...] flow list, which agentctl does not edit; write it as a block list", b.Name())
		}
		last := len(b.taskNodes) - 1
		n := b.taskNodes[last]
		if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 || len(n.Content) == 0 {
			return nil, nil, fmt.Errorf("%s: the last task is not a block mapping, cannot add after it", b.Name())
		}
		bounds := b.keyBounds(src, last)
		k, v := n.Content[len(n.Content)-2], n.Content[len(n.Content)-1]
		at := src.lineEnd(src.valueEndLine(k, v, bounds[len(bounds)-1]))
		first := src.line(n.Line)
		dash := strings.Repeat(" ", strings.IndexByte(string(first), '-'))
		if strings.IndexByte(string(first), '-') < 0 {
			return nil, nil, fmt.Errorf("%s: cannot find the '-' of the last task", b.Name())
		}
		text := ensureNL(b.data[:at], src.nl) + indentLines(item, dash)
		out = apply(b.data, []edit{{at, at, text}})
		if next := b.appendedLocally(src, out, at, at+len(text), t); next != nil {
			return out, next, nil
		}
	}
	if err := b.verify(out, len(b.Tasks), t, nil, true); err != nil {
		return nil, nil, err
	}
	return out, nil, nil
}

func ensureNL(data []byte, nl string) string {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return ""
	}
	return nl
}

// newTaskText is a new task as a "- id: ..." item at indentation zero.
func newTaskText(t Task, nl string) string {
	var sb strings.Builder
	line := func(key string, v any) {
		text, multi := render(key, v, nil, 2, nl)
		sb.WriteString("  " + key + ": " + text)
		if !multi {
			sb.WriteString(nl)
		}
	}
	line(keyID, t.ID)
	line(keyTitle, t.Title)
	line(keyStatus, string(t.Status))
	line(keyOwner, t.Owner)
	if t.Priority != "" {
		line(keyPriority, t.Priority)
	}
	if len(t.DependsOn) > 0 {
		line(keyDependsOn, t.DependsOn)
	}
	if t.Notes != "" {
		line(keyNotes, t.Notes)
	}
	if t.UpdatedAt != "" {
		line(keyUpdatedAt, t.UpdatedAt)
	}
	s := sb.String()
	return "- " + s[2:]
}

func indentLines(s, pad string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}
