package projectboard

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"
)

// Status is where a task stands.
type Status string

// The statuses a task may have, in the order work moves through them.
const (
	Todo       Status = "todo"
	InProgress Status = "in_progress"
	Review     Status = "review"
	Blocked    Status = "blocked"
	Done       Status = "done"
)

// Statuses lists every valid status.
var Statuses = []Status{Todo, InProgress, Review, Blocked, Done}

// ParseStatus checks s against the valid statuses.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("status %q is not one of %s", s, statusList())
}

func statusList() string {
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Task is one task as read from a board. Values are the scalars' text as
// written; an absent or null key reads as "".
type Task struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	Status    Status         `json:"status"`
	Owner     string         `json:"owner"`
	Priority  string         `json:"priority,omitempty"`
	DependsOn []string       `json:"depends_on,omitempty"`
	Notes     string         `json:"notes,omitempty"`
	UpdatedAt string         `json:"updated_at,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
	// Board is the file name of the board holding the task, Line the line
	// its mapping starts on (0, and left out, for a task just added, whose
	// line is not read back).
	Board string `json:"board"`
	Line  int    `json:"line,omitempty"`
}

// The keys agentctl reads and writes; any other key of a task is kept.
const (
	keyID        = "id"
	keyTitle     = "title"
	keyStatus    = "status"
	keyOwner     = "owner"
	keyPriority  = "priority"
	keyDependsOn = "depends_on"
	keyNotes     = "notes"
	keyUpdatedAt = "updated_at"
)

var knownKeys = [...]string{keyID, keyTitle, keyStatus, keyOwner, keyPriority, keyDependsOn, keyNotes, keyUpdatedAt}

// ParseError is a board that cannot be used, with where and why.
type ParseError struct {
	File   string
	Line   int // 0 when unknown
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// Board is one parsed board file.
type Board struct {
	Path  string
	Tasks []Task

	data      []byte
	root      *yaml.Node // the top-level mapping; nil for an empty file
	tasksKey  *yaml.Node // the "tasks" key; nil when absent
	seq       *yaml.Node // the tasks sequence; nil when absent or null
	taskNodes []*yaml.Node
	anchors   bool // some node has an anchor or is an alias
}

// Name is the board's file name.
func (b *Board) Name() string { return filepath.Base(b.Path) }

// Data is the board's text as read.
func (b *Board) Data() []byte { return b.data }

// parses counts the boards parsed, so tests can hold a change to one parse
// of each board: on a big board the parse is most of a change's cost.
var parses atomic.Int64

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// Parse reads a board; path is used in errors and as the board's Path. An
// empty file (or one with only comments) is a board with no tasks.
func Parse(path string, data []byte) (*Board, error) {
	parses.Add(1)
	return parse(path, data)
}

// parse is Parse, uncounted: for a task's text parsed as a board of its own.
func parse(path string, data []byte) (*Board, error) {
	b := &Board{Path: path, data: data}
	fail := func(line int, format string, args ...any) error {
		return &ParseError{File: path, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	root, fast := fastRead(data)
	if !fast {
		var err error
		if root, err = yamlRoot(path, data); err != nil {
			return nil, err
		}
	}
	if root == nil {
		return b, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "a board is a mapping with a top-level tasks: list")
	}
	if err := checkKeys(path, root); err != nil {
		return nil, err
	}
	b.root = root
	b.anchors = !fast && usesAnchors(root) // fastRead declines anchors and aliases
	for i := 0; i < len(root.Content); i += 2 {
		if root.Content[i].Value == "tasks" {
			b.tasksKey, b.seq = root.Content[i], root.Content[i+1]
		}
	}
	if b.tasksKey == nil {
		return nil, fail(root.Line, "no top-level tasks: list")
	}
	if b.seq.Kind == yaml.ScalarNode && b.seq.Tag == "!!null" {
		b.seq = nil
		return b, nil
	}
	if b.seq.Kind != yaml.SequenceNode {
		return nil, fail(b.seq.Line, "tasks: must be a list of tasks")
	}
	ids := make(map[string]int, len(b.seq.Content))
	if len(b.seq.Content) > 0 { // a board with no tasks keeps nil ones
		b.Tasks = make([]Task, 0, len(b.seq.Content))
		b.taskNodes = make([]*yaml.Node, 0, len(b.seq.Content))
	}
	for _, n := range b.seq.Content {
		t, err := parseTask(path, n)
		if err != nil {
			return nil, err
		}
		if prev, ok := ids[t.ID]; ok {
			return nil, fail(n.Line, "task id %q is used twice (first on line %d)", t.ID, prev)
		}
		ids[t.ID] = n.Line
		t.Board = b.Name()
		b.Tasks = append(b.Tasks, t)
		b.taskNodes = append(b.taskNodes, n)
	}
	return b, nil
}

// yamlRoot parses data with yaml.v3: the top-level node of its one
// document, or nil when it holds none.
func yamlRoot(path string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return nil, nil
		}
		return nil, yamlError(path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ParseError{File: path, Line: extra.Line, Reason: "a board holds one YAML document, this is a second one"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// yamlError turns a yaml.v3 error into a ParseError with its line.
func yamlError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
	}
	msg = strings.Join(strings.Fields(msg), " ")
	return &ParseError{File: path, Line: line, Reason: "not valid YAML: " + msg}
}

// checkKeys refuses duplicate and non-scalar keys in a mapping, which
// yaml.v3 nodes let through.
func checkKeys(path string, m *yaml.Node) error {
	// A task has a handful of keys: comparing them pairwise is cheaper than
	// a map for each of thousands of tasks.
	var seen map[string]int
	if len(m.Content) > 2*smallMapping {
		seen = map[string]int{}
	}
	for i := 0; i < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			return &ParseError{File: path, Line: k.Line, Reason: "keys must be plain words"}
		}
		prev, dup := seen[k.Value]
		if seen == nil {
			if j := keyIndex(m.Content[:i], k.Value); j >= 0 {
				prev, dup = m.Content[j].Line, true
			}
		}
		if dup {
			return &ParseError{File: path, Line: k.Line, Reason: fmt.Sprintf("key %q is given twice (first on line %d)", k.Value, prev)}
		}
		if seen != nil {
			seen[k.Value] = k.Line
		}
	}
	return nil
}

// smallMapping is how many keys checkKeys compares pairwise.
const smallMapping = 16

// keyIndex is the index in a mapping's Content of key, or -1.
func keyIndex(content []*yaml.Node, key string) int {
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Value == key {
			return i
		}
	}
	return -1
}

func parseTask(path string, n *yaml.Node) (Task, error) {
	fail := func(line int, format string, args ...any) (Task, error) {
		return Task{}, &ParseError{File: path, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	if n.Kind != yaml.MappingNode {
		return fail(n.Line, "each task must be a mapping with id, title, status and owner")
	}
	if err := checkKeys(path, n); err != nil {
		return Task{}, err
	}
	t := Task{Line: n.Line}
	// checkKeys made every key unique.
	// One pass finds the known keys' values, rather than a search for
	// each: a big board has tens of thousands of tasks.
	var known [len(knownKeys)]*yaml.Node
	extra := false
	for i := 0; i < len(n.Content); i += 2 {
		if k := knownIndex(n.Content[i].Value); k >= 0 {
			known[k] = n.Content[i+1]
		} else {
			extra = true
		}
	}
	value := func(key string) *yaml.Node { return known[knownIndex(key)] }
	scalar := func(key string, required bool) (string, error) {
		v := value(key)
		if v == nil {
			if required {
				return "", &ParseError{File: path, Line: n.Line, Reason: fmt.Sprintf("task has no %s", key)}
			}
			return "", nil
		}
		if v.Kind == yaml.AliasNode {
			return "", &ParseError{File: path, Line: v.Line, Reason: fmt.Sprintf("%s: aliases are not supported in tasks", key)}
		}
		if v.Kind != yaml.ScalarNode {
			return "", &ParseError{File: path, Line: v.Line, Reason: fmt.Sprintf("%s must be a single value", key)}
		}
		if v.Tag == "!!null" {
			if required && key != keyOwner {
				return "", &ParseError{File: path, Line: v.Line, Reason: fmt.Sprintf("%s is empty", key)}
			}
			return "", nil
		}
		return v.Value, nil
	}
	var err error
	if t.ID, err = scalar(keyID, true); err != nil {
		return Task{}, err
	}
	if strings.TrimSpace(t.ID) == "" || strings.ContainsAny(t.ID, "\n\r\t") {
		return fail(n.Line, "task id %q must be a non-empty single word", t.ID)
	}
	if t.Title, err = scalar(keyTitle, true); err != nil {
		return Task{}, err
	}
	st, err := scalar(keyStatus, true)
	if err != nil {
		return Task{}, err
	}
	if t.Status, err = ParseStatus(st); err != nil {
		return fail(value(keyStatus).Line, "task %q: %v", t.ID, err)
	}
	// One by one rather than through pointers into t, which would move t
	// to the heap: a big board has tens of thousands of tasks.
	if t.Owner, err = scalar(keyOwner, false); err != nil {
		return Task{}, err
	}
	if t.Priority, err = scalar(keyPriority, false); err != nil {
		return Task{}, err
	}
	if t.Notes, err = scalar(keyNotes, false); err != nil {
		return Task{}, err
	}
	if t.UpdatedAt, err = scalar(keyUpdatedAt, false); err != nil {
		return Task{}, err
	}
	if v := value(keyDependsOn); v != nil && v.Tag != "!!null" {
		if v.Kind != yaml.SequenceNode {
			return fail(v.Line, "task %q: depends_on must be a list of task ids", t.ID)
		}
		for _, d := range v.Content {
			if d.Kind != yaml.ScalarNode {
				return fail(d.Line, "task %q: depends_on must be a list of task ids", t.ID)
			}
			t.DependsOn = append(t.DependsOn, d.Value)
		}
	}
	for i := 0; extra && i < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if isKnown(k) {
			continue
		}
		var v any
		if err := n.Content[i+1].Decode(&v); err != nil {
			return fail(n.Content[i+1].Line, "task %q: %s: %v", t.ID, k, err)
		}
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		t.Extra[k] = v
	}
	return t, nil
}

func isKnown(key string) bool { return knownIndex(key) >= 0 }

// knownIndex is key's index in knownKeys, or -1.
func knownIndex(key string) int {
	switch key {
	case keyID:
		return 0
	case keyTitle:
		return 1
	case keyStatus:
		return 2
	case keyOwner:
		return 3
	case keyPriority:
		return 4
	case keyDependsOn:
		return 5
	case keyNotes:
		return 6
	case keyUpdatedAt:
		return 7
	}
	return -1
}

// Task returns the task with id on this board.
func (b *Board) Task(id string) (Task, bool) {
	for _, t := range b.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

func (b *Board) index(id string) int {
	for i, t := range b.Tasks {
		if t.ID == id {
			return i
		}
	}
	return -1
}
