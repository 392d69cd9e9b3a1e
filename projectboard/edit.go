package projectboard

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// An edit replaces data[from:to] with text. Edits are computed against the
// text as read and applied from the end so offsets stay valid.
type edit struct {
	from, to int
	text     string
}

// source is a board's text split into lines, each keeping its terminator.
type source struct {
	data  []byte
	start []int // start[i] is the offset of line i+1
	nl    string
}

func newSource(data []byte) *source {
	s := &source{data: data, nl: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		s.nl = "\r\n"
	}
	s.start = append(s.start, 0)
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			s.start = append(s.start, i+1)
		}
	}
	return s
}

func (s *source) lines() int { return len(s.start) }

// oddBreaks reports line breaks YAML counts and source does not: a carriage
// return without a line feed, or a Unicode next-line or line or paragraph
// separator. Line numbers from the parse do not match source's then.
func oddBreaks(data []byte) bool {
	for rest := data; ; {
		i := bytes.IndexByte(rest, '\r')
		if i < 0 {
			break
		}
		if i+1 == len(rest) || rest[i+1] != '\n' {
			return true
		}
		rest = rest[i+2:]
	}
	return bytes.Contains(data, []byte("\u0085")) || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}

// editable refuses a board whose line breaks agentctl cannot follow.
func (b *Board) editable() error {
	if oddBreaks(b.data) {
		return fmt.Errorf("%s has line breaks agentctl does not edit (a carriage return without a line feed, or a Unicode line separator); save it with ordinary line ends", b.Name())
	}
	return nil
}

// line returns line n (1-based) with its terminator.
func (s *source) line(n int) []byte {
	if n < 1 || n > len(s.start) {
		return nil
	}
	end := len(s.data)
	if n < len(s.start) {
		end = s.start[n]
	}
	return s.data[s.start[n-1]:end]
}

// lineEnd is the offset just past line n's terminator.
func (s *source) lineEnd(n int) int {
	if n >= len(s.start) {
		return len(s.data)
	}
	return s.start[n]
}

// lineStart is the offset of line n, or the end of the text for the line
// after the last.
func (s *source) lineStart(n int) int {
	if n > len(s.start) {
		return len(s.data)
	}
	return s.start[n-1]
}

// offset turns a yaml.v3 position (1-based line, 1-based rune column) into
// a byte offset.
func (s *source) offset(line, col int) int {
	l := s.line(line)
	b := 0
	for c := 1; c < col && b < len(l); c++ {
		_, w := utf8.DecodeRune(l[b:])
		b += w
	}
	return s.start[line-1] + b
}

func trimEOL(l []byte) []byte { return bytes.TrimRight(l, "\r\n") }

func indentOf(l []byte) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

func isBlank(l []byte) bool   { return len(bytes.TrimSpace(l)) == 0 }
func isComment(l []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) }

// scalarEnd finds where a scalar or flow collection that starts at offset
// `at` ends, if it ends on the same line. It returns false for anything that
// spans lines.
func (s *source) scalarEnd(at int, n *yaml.Node) (int, bool) {
	lineEnd := at
	for lineEnd < len(s.data) && s.data[lineEnd] != '\n' {
		lineEnd++
	}
	l := s.data[at:lineEnd]
	switch {
	case n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0:
		for i := 1; i < len(l); i++ {
			switch l[i] {
			case '\\':
				i++
			case '"':
				return at + i + 1, true
			}
		}
	case n.Kind == yaml.ScalarNode && n.Style&yaml.SingleQuotedStyle != 0:
		for i := 1; i < len(l); i++ {
			if l[i] == '\'' {
				if i+1 < len(l) && l[i+1] == '\'' {
					i++
					continue
				}
				return at + i + 1, true
			}
		}
	case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
	case n.Kind == yaml.ScalarNode:
		end := len(l)
		for i := 1; i < len(l); i++ {
			if l[i] == '#' && (l[i-1] == ' ' || l[i-1] == '\t') {
				end = i
				break
			}
		}
		text := strings.TrimRight(string(l[:end]), " \t\r")
		if text == n.Value {
			return at + len(text), true
		}
	case n.Style&yaml.FlowStyle != 0:
		depth, quote := 0, byte(0)
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case quote == '"' && c == '\\':
				i++
			case quote != 0 && c == quote:
				quote = 0
			case quote != 0:
			case c == '"' || c == '\'':
				quote = c
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				depth--
				if depth == 0 {
					return at + i + 1, true
				}
			}
		}
	}
	return 0, false
}

// afterColon is the offset just past the ':' that follows key k.
func (s *source) afterColon(k *yaml.Node) (int, error) {
	at := s.offset(k.Line, k.Column)
	end, ok := at+len(k.Value), k.Style == 0
	if !ok {
		end, ok = s.scalarEnd(at, k)
	}
	if !ok || end > len(s.data) {
		return 0, fmt.Errorf("line %d: cannot find the end of key %q", k.Line, k.Value)
	}
	for end < len(s.data) && (s.data[end] == ' ' || s.data[end] == '\t') {
		end++
	}
	if end >= len(s.data) || s.data[end] != ':' {
		return 0, fmt.Errorf("line %d: cannot find the ':' after key %q", k.Line, k.Value)
	}
	return end + 1, nil
}

// valueEndLine is the last line that belongs to the value of key k, looking
// no further than line bound-1. Blank lines and comments after the value are
// left to whatever follows.
func (s *source) valueEndLine(k, v *yaml.Node, bound int) int {
	keyIndent := k.Column - 1
	blockSeq := v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0
	blockScalar := v.Kind == yaml.ScalarNode && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	last := k.Line
	for l := k.Line + 1; l < bound && l <= s.lines(); l++ {
		line := trimEOL(s.line(l))
		if isBlank(line) {
			continue
		}
		ind := indentOf(line)
		if ind > keyIndent || (blockSeq && ind == keyIndent && bytes.HasPrefix(line[ind:], []byte("-"))) {
			if !blockScalar && isComment(line) {
				continue
			}
			last = l
			continue
		}
		break
	}
	return last
}

// taskEdit computes the edits that set keys of the task at index i to the
// given values (string or []string), adding keys the task lacks.
func (b *Board) taskEdit(src *source, i int, keys []string, values map[string]any) ([]edit, error) {
	n := b.taskNodes[i]
	if n.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("task %q on line %d is written as a {...} flow mapping, which agentctl does not edit; write it as a block mapping", b.Tasks[i].ID, n.Line)
	}
	bounds := b.keyBounds(src, i)
	var edits []edit
	var added []string
	for _, key := range keys {
		ki := -1
		for j := 0; j < len(n.Content); j += 2 {
			if n.Content[j].Value == key {
				ki = j
			}
		}
		if ki < 0 {
			added = append(added, key)
			continue
		}
		k, v := n.Content[ki], n.Content[ki+1]
		if v.Anchor != "" || v.Kind == yaml.AliasNode || v.Style&yaml.TaggedStyle != 0 {
			return nil, fmt.Errorf("line %d: %s uses a YAML anchor, alias or tag, which agentctl does not edit", v.Line, key)
		}
		indent := k.Column - 1
		text, multi := render(key, values[key], v, indent, src.nl)
		colon, err := b.colon(src, k)
		if err != nil {
			return nil, err
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" {
			if multi {
				edits = append(edits, edit{colon, src.lineEnd(src.valueEndLine(k, v, bounds[ki/2])), " " + text})
			} else {
				edits = append(edits, edit{colon, colon, " " + text})
			}
			continue
		}
		if !multi && v.Line == k.Line {
			at := src.offset(v.Line, v.Column)
			if end, ok := src.scalarEnd(at, v); ok {
				edits = append(edits, edit{at, end, text})
				continue
			}
		}
		last := src.valueEndLine(k, v, bounds[ki/2])
		end := src.lineEnd(last)
		repl := " " + text
		if bytes.HasSuffix(src.data[:end], []byte("\n")) && !multi {
			repl += src.nl
		} else if multi && !bytes.HasSuffix(src.data[:end], []byte("\n")) {
			repl = strings.TrimSuffix(repl, src.nl)
		}
		edits = append(edits, edit{colon, end, repl})
	}
	if len(added) > 0 {
		lastKey := len(n.Content) - 2
		k, v := n.Content[lastKey], n.Content[lastKey+1]
		at := src.lineEnd(src.valueEndLine(k, v, bounds[lastKey/2]))
		indent := n.Content[0].Column - 1
		var sb strings.Builder
		if at == len(src.data) && !bytes.HasSuffix(src.data, []byte("\n")) {
			sb.WriteString(src.nl)
		}
		for _, key := range added {
			text, multi := render(key, values[key], nil, indent, src.nl)
			sb.WriteString(strings.Repeat(" ", indent) + key + ": " + text)
			if !multi {
				sb.WriteString(src.nl)
			}
		}
		edits = append(edits, edit{at, at, sb.String()})
	}
	return edits, nil
}

func (b *Board) colon(src *source, k *yaml.Node) (int, error) {
	c, err := src.afterColon(k)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return c, nil
}

// taskEndLine is the first line that cannot be part of task i: the next
// task's, the next top-level key's, or one past the last line.
func (b *Board) taskEndLine(src *source, i int) int {
	if i+1 < len(b.taskNodes) {
		return b.taskNodes[i+1].Line
	}
	for j := 0; j < len(b.root.Content); j += 2 {
		if k := b.root.Content[j]; k.Line > b.tasksKey.Line {
			return k.Line
		}
	}
	return src.lines() + 1
}

// keyBounds gives, for each key of task i, the first line that cannot be
// part of its value: the next key, the next task, the next top-level key.
func (b *Board) keyBounds(src *source, i int) []int {
	n := b.taskNodes[i]
	after := b.taskEndLine(src, i)
	bounds := make([]int, len(n.Content)/2)
	for j := range bounds {
		bounds[j] = after
		if 2*j+2 < len(n.Content) {
			bounds[j] = n.Content[2*j+2].Line
		}
	}
	return bounds
}

func apply(data []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := append([]byte(nil), data...)
	for _, e := range edits {
		out = append(out[:e.from], append([]byte(e.text), out[e.to:]...)...)
	}
	return out
}

var rfc3339 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
})

// render writes a value the way a careful human would: in the old value's
// quoting where there was one, plain where YAML reads it back unchanged,
// double-quoted otherwise, and multi-line text as a literal block. multi
// reports a block that already ends in a line break.
func render(key string, value any, old *yaml.Node, indent int, nl string) (text string, multi bool) {
	if list, ok := value.([]string); ok {
		items := make([]string, len(list))
		for i, s := range list {
			items[i], _ = render("", s, nil, indent, nl)
		}
		return "[" + strings.Join(items, ", ") + "]", false
	}
	v, _ := value.(string)
	if key == keyUpdatedAt && rfc3339().MatchString(v) {
		return v, false
	}
	if strings.Contains(v, "\n") {
		if block, ok := literalBlock(v, indent+2, nl); ok {
			return block, true
		}
		return strconv.Quote(v), false
	}
	if old != nil && old.Style&yaml.DoubleQuotedStyle != 0 {
		return strconv.Quote(v), false
	}
	if old != nil && old.Style&yaml.SingleQuotedStyle != 0 && printable(v) {
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", false
	}
	if plainSafe(v, old) {
		return v, false
	}
	return strconv.Quote(v), false
}

func printable(v string) bool {
	for _, r := range v {
		if r != '\t' && !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(v)
}

// plainSafe reports whether v may be written unquoted: YAML must read it
// back as the same text, as a string (or as the same kind of value the old
// plain scalar was, so "priority: 1" may become "priority: 2").
func plainSafe(v string, old *yaml.Node) bool {
	if v == "" || v != strings.TrimSpace(v) || !printable(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "y", "yes", "n", "no", "on", "off": // booleans to YAML 1.1 readers
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("k: "+v+"\n"), &doc); err != nil || len(doc.Content) != 1 {
		return false
	}
	m := doc.Content[0]
	if len(m.Content) != 2 {
		return false
	}
	n := m.Content[1]
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Value != v {
		return false
	}
	return n.Tag == "!!str" || (old != nil && old.Kind == yaml.ScalarNode && old.Style == 0 && old.Tag == n.Tag)
}

// literalBlock writes v as a "|" block indented by indent spaces, when that
// keeps it exactly.
func literalBlock(v string, indent int, nl string) (string, bool) {
	if !printable(strings.ReplaceAll(v, "\n", "")) || strings.HasPrefix(v, " ") || strings.HasSuffix(v, "\n\n") {
		return "", false
	}
	header := "|-"
	if strings.HasSuffix(v, "\n") {
		header = "|"
		v = strings.TrimSuffix(v, "\n")
	}
	var sb strings.Builder
	sb.WriteString(header + nl)
	pad := strings.Repeat(" ", indent)
	for _, l := range strings.Split(v, "\n") {
		if l != "" {
			sb.WriteString(pad + l)
		}
		sb.WriteString(nl)
	}
	return sb.String(), true
}
