package projectboard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sameAsYAML checks fastRead against yaml.v3 on data: either fastRead
// declines, or yaml.v3 accepts data too and builds the same nodes, field
// by field for every field the package reads. It reports whether fastRead
// read the text.
func sameAsYAML(t *testing.T, data []byte) bool {
	t.Helper()
	root, ok := fastRead(data)
	if !ok {
		return false
	}
	want, err := yamlRoot("x.yaml", data)
	if err != nil {
		t.Fatalf("fastRead read a text yaml.v3 refuses (%v):\n%q", err, data)
	}
	if err := sameTree(root, want, "root"); err != nil {
		t.Fatalf("fastRead differs from yaml.v3: %v\n%q", err, data)
	}
	sameEach(t, data, want)
	return true
}

// sameEach checks fastReadEach on data, which fastRead read as want: it
// must hand out the items of the top-level tasks list, each as yaml.v3
// builds it, and read the rest as fastRead does.
func sameEach(t *testing.T, data []byte, want *yaml.Node) {
	t.Helper()
	var items []*yaml.Node
	for i := 0; want != nil && i+1 < len(want.Content); i += 2 {
		if v := want.Content[i+1]; want.Content[i].Value == "tasks" && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 {
			items = append(items, v.Content...)
		}
	}
	n := 0
	root, ok := fastReadEach(data, func(item *yaml.Node, off int) bool {
		if n >= len(items) {
			t.Fatalf("fastReadEach handed out more than the %d items of the tasks list:\n%q", len(items), data)
		}
		if err := sameTree(item, items[n], fmt.Sprintf("item %d", n)); err != nil {
			t.Fatalf("fastReadEach differs from yaml.v3: %v\n%q", err, data)
		}
		if off != lineOffset(data, item.Line) {
			t.Fatalf("fastReadEach gave item %d the offset %d, not its line's", n, off)
		}
		n++
		return true
	})
	if !ok || n != len(items) {
		t.Fatalf("fastReadEach read %v and handed out %d items, fastRead read the text with %d:\n%q", ok, n, len(items), data)
	}
	if (root == nil) != (want == nil) || (root != nil && len(root.Content) != len(want.Content)) {
		t.Fatalf("fastReadEach read another top-level mapping:\n%q", data)
	}
}

// sameTree compares two node trees in every field the package reads.
func sameTree(got, want *yaml.Node, at string) error {
	if (got == nil) != (want == nil) {
		return fmt.Errorf("%s: got node %v, yaml.v3 %v", at, got != nil, want != nil)
	}
	if got == nil {
		return nil
	}
	type fields struct {
		Kind          yaml.Kind
		Style         yaml.Style
		Tag, Value    string
		Anchor        string
		Alias         bool
		Line, Column  int
		Content       int
		ContentIsNil  bool
		ShortTag      string
		IndicatedText bool
	}
	f := func(n *yaml.Node) fields {
		return fields{n.Kind, n.Style, n.Tag, n.Value, n.Anchor, n.Alias != nil, n.Line, n.Column, len(n.Content), n.Content == nil, n.ShortTag(), n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0}
	}
	if g, w := f(got), f(want); g != w {
		return fmt.Errorf("%s:\n got %+v\nwant %+v", at, g, w)
	}
	for i := range got.Content {
		if err := sameTree(got.Content[i], want.Content[i], fmt.Sprintf("%s/%d(%q)", at, i, want.Content[i].Value)); err != nil {
			return err
		}
	}
	return nil
}

// fastCases are texts in the part of YAML fastRead reads, and some just
// outside it, each with whether fastRead must read it.
var fastCases = []struct {
	text string
	read bool
}{
	{"", true},
	{"# only a comment\n\n", true},
	{"tasks:\n", true},
	{"tasks: ~\n", true},
	{"tasks: []\n", true},
	{"tasks:\n- id: A\n  title: a\n  status: todo\n", true},
	{"tasks:\n  - id: A   # first\n    title: \"T \\\"q\\\" \\u00e9\\x41\\t\"\n    status: todo\n    owner:\n    notes: |\n      one\n\n      two\n\n  - id: B\n    title: 'it''s'\n    status: done\n", true},
	{"tasks:\r\n  - id: A\r\n    title: a b  c\r\n    status: todo\r\n    notes: >-\r\n      folded\r\n      text\r\n\r\n       more\r\n", true},
	{"project: x\nmeta:\n  a: 1\n  b: [x, \"y\", 'z']\n  c: 2026-01-02\ntasks:\n  - id: 1\n    title: 0x1F\n    status: todo\n    depends_on: [A-1, B-2]\n    priority: 3.5\nafter: true\n", true},
	{"tasks:\n  - id: A\n    title: a\n    status: todo\n    depends_on:\n    - B\n    - 'C'\n    extra:\n      deep:\n        - x: 1\n          y: null\n", true},
	{"tasks:\n  - id: A\n    title: é日本\n    status: todo\n    notes: |2-\n        indented\n      less\n    n2: |+\n      keep\n\n\nafter: 1\n", true},
	{"tasks:\n  - id: A\n    title: a\n    status: todo\n    notes: |\n      no newline at end", true},
	{"tasks:\n  - id: A\n    title: a\n    status: todo\n    notes: >\n      a\n       b\n      c\n\n      d\n", true},
	{"tasks:\n  - id: A\n    title: a:b#c\n    status: todo\n    owner: http://x.y/z?q=1\n", true},
	{"\"tasks\":\n  - 'id': A\n    title: -1\n    status: todo\n", true},
	{"tasks:\n  - id: A\n    title: |\n    status: todo\n", true},
	// Outside the part fastRead reads.
	{"tasks:\n  - id: A\n    title: two\n      lines\n    status: todo\n", false},
	{"tasks:\n  - id: &a A\n    title: *a\n", false},
	{"tasks:\n  - {id: A, title: a, status: todo}\n", true},
	{"tasks:\n  - id: A\n    labels: {a: 1, \"b\": 'c', d: [x]}\n", false},
	{"tasks:\n  - id: A\n    labels: {a: 1, b: }\n", false},
	{"---\ntasks: []\n", false},
	{"%YAML 1.2\n---\ntasks: []\n", false},
	{"tasks:\n\t- id: A\n", false},
	{"tasks:\n  - id: A\n    title: \"open\n      quote\"\n", false},
	{"tasks:\n  - id: A\n    title: a: b\n", false},
	{"tasks:\n  - id: A\n    <<: {x: 1}\n", false},
	{"tasks:\n  - id: A\n    title: !!str 1\n", false},
	{"? complex\n: key\n", false},
	{"tasks:\n  - id: A\n   title: odd\n", false},
	{"tasks:\n  - id: A\n    title: a\r    status: todo\n", false},
	{"\ufefftasks: []\n", false},
	{"- a\n- b\n", false},
	{"tasks: [a, b,]\n", false},
}

func TestFastReadMatchesYAML(t *testing.T) {
	for _, c := range fastCases {
		if got := sameAsYAML(t, []byte(c.text)); got != c.read {
			t.Errorf("fastRead read %q: %v, want %v", c.text, got, c.read)
		}
	}
}

// TestFastReadBoards holds fastRead to yaml.v3 on every board and board-like
// file the tests have, and to reading the hand-formatted ones itself (or
// the speed-up would reach no real board).
func TestFastReadBoards(t *testing.T) {
	var files []string
	for _, g := range []string{"../fixtures/boards/*.yaml", "testdata/golden/*.yaml", "testdata/import/*", "../fixtures/*/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d files", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		read := sameAsYAML(t, data)
		if strings.Contains(name, "fixtures/boards") || strings.Contains(name, "golden") {
			if !read {
				t.Errorf("fastRead declined %s", name)
			}
		}
		t.Logf("%s: read %v", name, read)
	}
	for _, n := range []int{0, 1, 3, 50} {
		if !sameAsYAML(t, bigBoard(n)) {
			t.Errorf("fastRead declined bigBoard(%d)", n)
		}
	}
}

// FuzzFastRead holds fastRead to yaml.v3 on any text: it declines, or
// builds the same nodes.
func FuzzFastRead(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.text))
	}
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "boards", "*.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(bigBoard(2))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsYAML(t, data)
	})
}
