package config

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// editAgentKeys returns data with keys of the named agents' entries set to
// the given values, changing only the lines that must change: a setting
// whose value is unchanged keeps its line as written (quotes, spacing, its
// comment), a changed scalar keeps its line's comment and its alignment,
// and everything else in the file (comments, blank lines, other agents)
// stays byte for byte. A person's hand-edited agentctl.yaml then reads the
// same after calibration, and its diff shows only what calibration did.
func editAgentKeys(data []byte, agentKeys map[string][]keyValue) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	agents := mapValue(doc.Content[0], "agents")
	if agents == nil || agents.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("no agents list")
	}
	e := &lineEditor{lines: splitLines(data)}
	for name, kvs := range agentKeys {
		var entry *yaml.Node
		for _, a := range agents.Content {
			if n := mapValue(a, "name"); n != nil && strings.EqualFold(n.Value, name) {
				entry = a
			}
		}
		if entry == nil {
			return nil, fmt.Errorf("agent %s is not listed", name)
		}
		if entry.Style&yaml.FlowStyle != 0 {
			return nil, fmt.Errorf("agent %s is written on one line ({...}); write it as a block to calibrate it", name)
		}
		for _, kv := range kvs {
			var value yaml.Node
			if err := value.Encode(kv.value); err != nil {
				return nil, fmt.Errorf("cannot encode the %s of %s: %w", kv.key, name, err)
			}
			if err := e.set(entry, kv.key, &value); err != nil {
				return nil, fmt.Errorf("cannot set the %s of %s: %w", kv.key, name, err)
			}
		}
	}
	out := e.apply()
	// Prove the edit: the file must now hold exactly the values asked for.
	var check yaml.Node
	if err := yaml.Unmarshal(out, &check); err != nil {
		return nil, fmt.Errorf("the edited file is not YAML: %w", err)
	}
	for name, kvs := range agentKeys {
		for _, a := range mapValue(check.Content[0], "agents").Content {
			if n := mapValue(a, "name"); n == nil || !strings.EqualFold(n.Value, name) {
				continue
			}
			for _, kv := range kvs {
				got := mapValue(a, kv.key)
				if got == nil {
					return nil, fmt.Errorf("the edit lost the %s of %s", kv.key, name)
				}
				want := reflect.New(reflect.TypeOf(kv.value))
				if err := got.Decode(want.Interface()); err != nil || !reflect.DeepEqual(want.Elem().Interface(), kv.value) {
					return nil, fmt.Errorf("the edit did not give %s the %s asked for", name, kv.key)
				}
			}
		}
	}
	return out, nil
}

// lineEditor collects edits of whole lines (0-based, end exclusive) and
// applies them at once, so that every edit is placed by the line numbers of
// the document as read.
type lineEditor struct {
	lines []string // each with its line end
	edits []lineEdit
}

type lineEdit struct {
	from, to int // lines replaced; from == to inserts before from
	text     []string
	order    int
	indent   int // of inserted lines: at one place, a nested block's go first
}

func splitLines(data []byte) []string {
	var lines []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, string(data))
			break
		}
		lines = append(lines, string(data[:i+1]))
		data = data[i+1:]
	}
	return lines
}

func (e *lineEditor) replace(from, to int, text []string) {
	indent := 0
	if len(text) > 0 {
		indent = len(text[0]) - len(strings.TrimLeft(text[0], " "))
	}
	e.edits = append(e.edits, lineEdit{from, to, text, len(e.edits), indent})
}

func (e *lineEditor) apply() []byte {
	sort.SliceStable(e.edits, func(i, j int) bool {
		a, b := e.edits[i], e.edits[j]
		if a.from != b.from {
			return a.from > b.from
		}
		// Lines inserted at one place end up in the reverse order of
		// application: the outer block's first, so a nested block's own
		// lines stay right under it, and in the order they were asked.
		if a.indent != b.indent {
			return a.indent < b.indent
		}
		return a.order > b.order
	})
	lines := e.lines
	for _, ed := range e.edits {
		next := append([]string{}, lines[:ed.from]...)
		next = append(next, ed.text...)
		lines = append(next, lines[ed.to:]...)
	}
	return []byte(strings.Join(lines, ""))
}

// eol is the file's line end, so added lines match the others.
func (e *lineEditor) eol() string {
	if len(e.lines) > 0 && strings.HasSuffix(e.lines[0], "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// set gives key the value in the block mapping m: a new key goes after m's
// last line, at the indentation of m's keys.
func (e *lineEditor) set(m *yaml.Node, key string, value *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return e.merge(m.Content[i], m.Content[i+1], value)
		}
	}
	if isEmptyValue(value) {
		return nil
	}
	at := lastLine(m)
	rendered, err := e.render(key, value, m.Content[0].Column-1)
	if err != nil {
		return err
	}
	e.replace(at, at, rendered)
	return nil
}

// merge turns the old value of key into value, touching as few lines as it
// can.
func (e *lineEditor) merge(key, old, value *yaml.Node) error {
	switch {
	case sameValue(old, value):
		return nil
	case old.Kind == yaml.MappingNode && value.Kind == yaml.MappingNode && old.Style&yaml.FlowStyle == 0 && len(old.Content) > 0:
		for i := 0; i+1 < len(value.Content); i += 2 {
			if err := e.set(old, value.Content[i].Value, value.Content[i+1]); err != nil {
				return err
			}
		}
		for i := 0; i+1 < len(old.Content); i += 2 {
			if mapValue(value, old.Content[i].Value) == nil {
				e.replace(old.Content[i].Line-1, lastLine(old.Content[i+1]), nil)
			}
		}
		return nil
	case old.Line == key.Line && lastLine(old) == key.Line && old.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0:
		line := e.lines[key.Line-1]
		rendered, err := e.render(key.Value, value, key.Column-1)
		if err != nil || len(rendered) != 1 {
			break
		}
		// Keep the line's comment where it was, and the spaces before it.
		if comment := lineComment(key, old); comment != "" {
			if i := strings.LastIndex(line, comment); i >= 0 {
				body := strings.TrimRight(rendered[0], "\r\n")
				gap := line[:i]
				pad := len(strings.TrimRight(gap, " \t"))
				spaces := gap[pad:]
				if w := len(gap) - len(body); w > len(spaces) {
					spaces = strings.Repeat(" ", w)
				} else if spaces == "" {
					spaces = " "
				}
				rendered[0] = body + spaces + line[i:]
			}
		}
		e.replace(key.Line-1, key.Line, rendered)
		return nil
	}
	rendered, err := e.render(key.Value, value, key.Column-1)
	if err != nil {
		return err
	}
	e.replace(key.Line-1, lastLine(old), rendered)
	return nil
}

// lineComment is the comment at the end of a one-line key: value, which
// the parser gives to the key, the value or the value's last item.
func lineComment(key, value *yaml.Node) string {
	for _, n := range []*yaml.Node{value, key} {
		if n.LineComment != "" {
			return n.LineComment
		}
	}
	if len(value.Content) > 0 {
		return lineComment(value.Content[len(value.Content)-1], value.Content[len(value.Content)-1])
	}
	return ""
}

// render writes key: value as lines indented by indent spaces.
func (e *lineEditor) render(key string, value *yaml.Node, indent int) ([]string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	m := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: key}, value}}
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	enc.Close()
	pad := strings.Repeat(" ", indent)
	var out []string
	for _, l := range splitLines(buf.Bytes()) {
		out = append(out, pad+strings.TrimRight(l, "\n")+e.eol())
	}
	return out, nil
}

// lastLine is the 1-based line of the last line a node's text takes, which
// is the 0-based index of the line after it.
func lastLine(n *yaml.Node) int {
	end := n.Line
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		end += strings.Count(strings.TrimRight(n.Value, "\n"), "\n") + 1
	}
	for _, c := range n.Content {
		if l := lastLine(c); l > end {
			end = l
		}
	}
	return end
}

// sameValue reports whether two nodes hold the same data, however written.
func sameValue(a, b *yaml.Node) bool {
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func isEmptyValue(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) == 0 ||
		n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
