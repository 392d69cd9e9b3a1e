package projectboard

import (
	"bytes"
	"math"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yaml.v3 spends most of a big board's read building tokens and events
// the board never needs, and a command that changes one task pays that on
// every call. Boards are written in a small part of YAML, so fastRead
// reads that part itself, line by line, into the nodes yaml.v3 would build:
// the same Kind, Style, Tag, Value, Anchor, Line, Column and Content, which
// are all the package reads of a node (comments are not kept: nothing here
// reads them). Whatever lies outside that part it declines, and Parse asks
// yaml.v3 as before: anchors, aliases, tags, flow mappings, directives and
// document markers, complex keys, tabs, scalars that go on over several
// lines, unusual indentation, and any text yaml.v3 would refuse. Each rule
// below follows yaml.v3's scanner (scannerc.go) for the cases it accepts;
// the differential tests and fuzz target hold it to that.

// fastLine is one line of a board, without its line break.
type fastLine struct {
	// 32 bits each, so that a big board's lines take less memory to fill:
	// fastRead declines a text of 2 GiB or more.
	off, end int32 // where the line's text starts and ends in the board
	indent   int32 // leading spaces
	brk      bool  // the line ends in a line break (all but maybe the last)
	blank    bool  // only spaces
	note     bool  // a comment line: spaces, then '#'
}

type fastReader struct {
	data  []byte
	lines []fastLine // no pointers, so the collector need not scan them
	i     int        // the next line to read
	str   string     // the board, which values written as they are share
	slab  []yaml.Node
	ptrs  []*yaml.Node // where collections' Content is cut from
	stack []*yaml.Node // the Content of the collections being read

	// each, when set, is handed the items of the top-level "tasks" block
	// list one at a time, with the offset of the line each starts on,
	// instead of their being kept; false stops the read. Their nodes are
	// reused for the next item.
	each      func(item *yaml.Node, off int) bool
	depth     int  // block mappings being read
	eachItems bool // the sequence read next is the one each takes

	buf [3][]byte // blockScalar's
}

// content ends the Content of a collection whose first node is at
// stack[base]: it is cut to size from a slab, as a big board has tens of
// thousands of collections.
func (r *fastReader) content(base int) []*yaml.Node {
	n := len(r.stack) - base
	if n == 0 {
		return nil
	}
	if len(r.ptrs) < n {
		r.ptrs = make([]*yaml.Node, max(n, 4096))
	}
	c := r.ptrs[:n:n]
	r.ptrs = r.ptrs[n:]
	copy(c, r.stack[base:])
	clear(r.stack[base:])
	r.stack = r.stack[:base]
	return c
}

// node allocates nodes a slab at a time: a big board has hundreds of
// thousands.
func (r *fastReader) node(n yaml.Node) *yaml.Node {
	if len(r.slab) == 0 {
		r.slab = make([]yaml.Node, 1024)
	}
	p := &r.slab[0]
	r.slab = r.slab[1:]
	*p = n
	return p
}

// line is line j's text, without its line break.
func (r *fastReader) line(j int) []byte {
	l := &r.lines[j]
	return r.data[l.off:l.end:l.end]
}

// text is bytes from to to of line j as a string.
func (r *fastReader) text(j, from, to int) string {
	off := int(r.lines[j].off)
	return r.str[off+from : off+to]
}

// fastRead returns the top-level mapping of data as yaml.v3 would parse it,
// nil for a text with no content (yaml.v3 finds no document), or ok false
// when data is not in the part of YAML it reads.
func fastRead(data []byte) (root *yaml.Node, ok bool) {
	return fastReadEach(data, nil)
}

// fastReadEach is fastRead handing each item of the top-level "tasks" block
// list to each as it is read, and keeping none: the list's Content is left
// empty. It costs a read of the text, but not a node per value of it.
func fastReadEach(data []byte, each func(item *yaml.Node, off int) bool) (root *yaml.Node, ok bool) {
	if len(data) >= math.MaxInt32 || !fastText(data) {
		return nil, false
	}
	r := &fastReader{data: data, lines: make([]fastLine, 0, bytes.Count(data, []byte("\n"))+1), str: string(data), each: each}
	for rest := data; len(rest) > 0; {
		var text []byte
		l := fastLine{off: int32(len(data) - len(rest))}
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			text, l.brk, rest = bytes.TrimSuffix(rest[:i], []byte("\r")), true, rest[i+1:]
		} else {
			text, rest = rest, nil
		}
		l.end = l.off + int32(len(text))
		l.indent = int32(indentOf(text))
		l.blank = int(l.indent) == len(text)
		l.note = !l.blank && text[l.indent] == '#'
		if len(text) >= 3 && (bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("..."))) {
			return nil, false // a document marker, or near enough to one
		}
		if len(text) > 0 && text[0] == '%' {
			return nil, false // a directive
		}
		r.lines = append(r.lines, l)
	}
	j := r.next()
	if j < 0 {
		return nil, true
	}
	l := r.lines[j]
	if !r.keyAt(j, int(l.indent)) {
		return nil, false
	}
	root, ok = r.mapping(j, int(l.indent))
	if !ok || r.next() >= 0 {
		return nil, false
	}
	return root, true
}

// fastText reports text yaml.v3's reader takes as it is and whose lines
// fastRead can count: valid UTF-8 without a byte order mark, tabs, control
// characters or line breaks other than "\n" and "\r\n".
func fastText(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || (c >= 0x20 && c < 0x7f):
			case c == '\r' && i+1 < len(data) && data[i+1] == '\n':
			default:
				return false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return false
		case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff:
			return false
		case r >= 0xd800 && r <= 0xdfff, r > 0xfffd && r < 0x10000:
			return false
		}
		i += w
	}
	return true
}

// next is the index of the next line that is neither blank nor a comment,
// or -1; the lines before it are consumed.
func (r *fastReader) next() int {
	for r.i < len(r.lines) && (r.lines[r.i].blank || r.lines[r.i].note) {
		r.i++
	}
	if r.i == len(r.lines) {
		return -1
	}
	return r.i
}

// column is yaml.v3's column (1-based, in characters) of byte at of line j.
func (r *fastReader) column(j, at int) int {
	return utf8.RuneCount(r.line(j)[:at]) + 1
}

// plainStart reports whether a plain scalar may start at text[at] in block
// context; indicators, anchors, aliases, tags and the like are declined.
func plainStart(text []byte, at int) bool {
	if at >= len(text) {
		return false
	}
	switch text[at] {
	case '-', '?', ':':
		return at+1 < len(text) && text[at+1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// keyAt reports whether line j holds a simple key at byte at.
func (r *fastReader) keyAt(j, at int) bool {
	_, _, ok := r.scanKey(j, at, false)
	return ok
}

// key reads the simple key at byte at of line j: its node, and the offset
// just past its ':'.
func (r *fastReader) key(j, at int) (*yaml.Node, int, bool) {
	return r.scanKey(j, at, true)
}

// scanKey is key, building the node only when asked.
func (r *fastReader) scanKey(j, at int, build bool) (*yaml.Node, int, bool) {
	t := r.line(j)
	var k *yaml.Node
	end := 0
	switch {
	case at < len(t) && (t[at] == '"' || t[at] == '\''):
		v, e, ok := r.quoted(j, at)
		if !ok {
			return nil, 0, false
		}
		style := yaml.DoubleQuotedStyle
		if t[at] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		if build {
			k = r.node(yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: v})
		}
		for e < len(t) && t[e] == ' ' {
			e++
		}
		if e >= len(t) || t[e] != ':' || (e+1 < len(t) && t[e+1] != ' ') {
			return nil, 0, false
		}
		end = e
	case plainStart(t, at):
		e := at
		for e < len(t) && !(t[e] == ':' && (e+1 == len(t) || t[e+1] == ' ')) {
			if t[e] == '#' && t[e-1] == ' ' {
				return nil, 0, false
			}
			e++
		}
		if e == len(t) {
			return nil, 0, false
		}
		v := r.text(j, at, at+len(bytes.TrimRight(t[at:e], " ")))
		if v == "<<" {
			return nil, 0, false // a merge key
		}
		if build {
			k = r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(v), Value: v})
		}
		end = e
	default:
		return nil, 0, false
	}
	// yaml.v3 looks no further than 1024 characters for a simple key's ':'.
	if end-at > 1000 {
		return nil, 0, false
	}
	if build {
		k.Line, k.Column = j+1, r.column(j, at)
	}
	return k, end + 1, true
}

// plainTag is the tag yaml.v3 resolves a plain scalar to.
func plainTag(v string) string {
	// A plain scalar whose first character is none of these is a string
	// to yaml.v3 (resolve's hint table): only the others need its look-up.
	if v == "" {
		return "!!null"
	}
	switch v[0] {
	case '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		// These it only looks up in its table of words.
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL":
		default:
			return "!!str"
		}
	default:
		return "!!str"
	}
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag()
}

// dashAt reports a block sequence entry, "- " or a lone "-", at byte at.
func dashAt(t []byte, at int) bool {
	return at < len(t) && t[at] == '-' && (at+1 == len(t) || t[at+1] == ' ')
}

// mapping reads the block mapping whose first key is at byte n of line j,
// n being also the indentation of its other keys.
func (r *fastReader) mapping(j, n int) (*yaml.Node, bool) {
	m := r.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: j + 1, Column: r.column(j, n)})
	at := n
	base := len(r.stack)
	r.depth++
	r.eachItems = false
	for {
		k, v, ok := r.entry(j, at, n)
		if !ok {
			return nil, false
		}
		r.stack = append(r.stack, k, v)
		j = r.next()
		if j < 0 || int(r.lines[j].indent) < n {
			m.Content = r.content(base)
			r.depth--
			return m, true
		}
		if int(r.lines[j].indent) > n || dashAt(r.line(j), n) {
			return nil, false
		}
		at = n
	}
}

// entry reads one key and its value, the key at byte at of line j in a
// mapping indented by n.
func (r *fastReader) entry(j, at, n int) (k, v *yaml.Node, ok bool) {
	k, p, ok := r.key(j, at)
	if !ok {
		return nil, nil, false
	}
	colon := p
	t := r.line(j)
	for p < len(t) && t[p] == ' ' {
		p++
	}
	r.i = j + 1
	if p == len(t) || t[p] == '#' {
		// Only the top-level mapping's "tasks" list goes to each.
		r.eachItems = r.each != nil && r.depth == 1 && k.Value == "tasks"
		v, ok = r.blockValue(j, colon, n)
		r.eachItems = false
		return k, v, ok
	}
	if t[p] == '|' || t[p] == '>' {
		v, ok = r.blockScalar(j, p, n)
		return k, v, ok
	}
	v, ok = r.inline(j, p, n)
	return k, v, ok
}

// blockValue reads the value of a key with nothing after its ':' on line
// j: a block collection on the lines below, or null.
func (r *fastReader) blockValue(j, colon, n int) (*yaml.Node, bool) {
	if k := r.next(); k >= 0 {
		in := int(r.lines[k].indent)
		switch {
		case in > n && dashAt(r.line(k), in):
			return r.sequence(k, in, false)
		case in > n:
			return r.mapping(k, in)
		case in == n && dashAt(r.line(k), n):
			return r.sequence(k, n, true)
		}
	}
	return r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: j + 1, Column: r.column(j, colon)}), true
}

// sequence reads the block sequence whose first "-" is at byte s of line
// j. An indentless one (at its key's indentation) ends at a line that is
// not an entry; any other is followed by less indented lines only.
func (r *fastReader) sequence(j, s int, indentless bool) (*yaml.Node, bool) {
	seq := r.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: j + 1, Column: s + 1})
	base := len(r.stack)
	each := r.eachItems
	r.eachItems = false
	for {
		var slab []yaml.Node
		var ptrs []*yaml.Node
		if each {
			// The item's nodes come from space the next item reuses.
			if len(r.slab) < 64 {
				r.slab = make([]yaml.Node, 1024)
			}
			if len(r.ptrs) < 64 {
				r.ptrs = make([]*yaml.Node, 4096)
			}
			slab, ptrs = r.slab, r.ptrs
		}
		t := r.line(j)
		p := s + 1
		for p < len(t) && t[p] == ' ' {
			p++
		}
		if p == len(t) || t[p] == '#' || dashAt(t, p) || t[p] == '|' || t[p] == '>' {
			return nil, false // an empty, nested or block scalar entry
		}
		r.i = j + 1
		var item *yaml.Node
		var ok bool
		if r.keyAt(j, p) {
			item, ok = r.mapping(j, p)
		} else {
			item, ok = r.inline(j, p, s)
		}
		if !ok {
			return nil, false
		}
		if each {
			if !r.each(item, int(r.lines[item.Line-1].off)) {
				return nil, false
			}
			r.slab, r.ptrs = slab, ptrs
		} else {
			r.stack = append(r.stack, item)
		}
		j = r.next()
		if j < 0 || int(r.lines[j].indent) < s {
			seq.Content = r.content(base)
			return seq, true
		}
		if int(r.lines[j].indent) > s {
			return nil, false
		}
		if !dashAt(r.line(j), s) {
			if indentless {
				seq.Content = r.content(base)
				return seq, true
			}
			return nil, false
		}
	}
}

// inline reads a value that starts at byte p of line j and ends on it: a
// plain or quoted scalar, or a flow sequence of such scalars. n is the
// indentation a following line must not pass, or it would go on with the
// scalar (yaml.v3's parser.indent).
func (r *fastReader) inline(j, p, n int) (*yaml.Node, bool) {
	t := r.line(j)
	var v *yaml.Node
	end := 0
	switch t[p] {
	case '"', '\'':
		s, e, ok := r.quoted(j, p)
		if !ok {
			return nil, false
		}
		style := yaml.DoubleQuotedStyle
		if t[p] == '\'' {
			style = yaml.SingleQuotedStyle
		}
		v, end = r.node(yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: s}), e
	case '[', '{':
		seq, e, ok := r.flowCollection(j, p)
		if !ok {
			return nil, false
		}
		v, end = seq, e
	default:
		if !plainStart(t, p) {
			return nil, false
		}
		e := p
		for e < len(t) && !(t[e] == '#' && t[e-1] == ' ') {
			if t[e] == ':' && (e+1 == len(t) || t[e+1] == ' ') {
				return nil, false // "mapping values are not allowed in this context"
			}
			e++
		}
		s := r.text(j, p, p+len(bytes.TrimRight(t[p:e], " ")))
		if s == "<<" {
			return nil, false
		}
		// What follows e is a comment, if anything.
		v, end = r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(s), Value: s}), len(t)
		// A plain scalar goes on over the next non-blank line when that is
		// indented past n and is not a comment.
		for k := j + 1; k < len(r.lines); k++ {
			if l := r.lines[k]; !l.blank {
				if int(l.indent) > n && !l.note {
					return nil, false
				}
				break
			}
		}
	}
	if !restIsComment(t, end) {
		return nil, false
	}
	if v.Line == 0 {
		v.Line, v.Column = j+1, r.column(j, p)
	}
	return v, true
}

// restIsComment reports that text[at:] is spaces, then perhaps a comment.
func restIsComment(t []byte, at int) bool {
	p := at
	for p < len(t) && t[p] == ' ' {
		p++
	}
	return p == len(t) || (t[p] == '#' && p > at)
}

// quoted reads a single- or double-quoted scalar that starts at t[at] and
// ends on the same line: its value and the offset past its closing quote.
func (r *fastReader) quoted(j, at int) (string, int, bool) {
	t := r.line(j)
	q := t[at]
	// Most quoted text has no escapes: it is a part of the board as it is.
	for i := at + 1; i < len(t) && t[i] != '\\'; i++ {
		if t[i] == q {
			if q == '\'' && i+1 < len(t) && t[i+1] == '\'' {
				break
			}
			return r.text(j, at+1, i), i + 1, true
		}
	}
	var s []byte
	for i := at + 1; i < len(t); i++ {
		c := t[i]
		switch {
		case c == q && q == '\'' && i+1 < len(t) && t[i+1] == '\'':
			s = append(s, '\'')
			i++
		case c == q:
			return string(s), i + 1, true
		case c == '\\' && q == '"':
			if i+1 == len(t) {
				return "", 0, false // an escaped line break
			}
			i++
			var ok bool
			if s, i, ok = escape(s, t, i); !ok {
				return "", 0, false
			}
		default:
			s = append(s, c)
		}
	}
	return "", 0, false
}

// escape appends the character of the escape sequence whose letter is t[i]
// and returns the index of its last byte, as yaml.v3 reads it.
func escape(s, t []byte, i int) ([]byte, int, bool) {
	size := 0
	switch t[i] {
	case '0':
		s = append(s, 0)
	case 'a':
		s = append(s, '\a')
	case 'b':
		s = append(s, '\b')
	case 't':
		s = append(s, '\t')
	case 'n':
		s = append(s, '\n')
	case 'v':
		s = append(s, '\v')
	case 'f':
		s = append(s, '\f')
	case 'r':
		s = append(s, '\r')
	case 'e':
		s = append(s, 0x1b)
	case ' ', '"', '\'', '\\':
		s = append(s, t[i])
	case 'N':
		s = append(s, "\u0085"...)
	case '_':
		s = append(s, "\u00a0"...)
	case 'L':
		s = append(s, "\u2028"...)
	case 'P':
		s = append(s, "\u2029"...)
	case 'x':
		size = 2
	case 'u':
		size = 4
	case 'U':
		size = 8
	default:
		return nil, 0, false
	}
	if size == 0 {
		return s, i, true
	}
	if i+size >= len(t) {
		return nil, 0, false
	}
	v := 0
	for _, c := range t[i+1 : i+1+size] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 + int(c-'A'+10)
		default:
			return nil, 0, false
		}
	}
	if (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff {
		return nil, 0, false
	}
	return utf8.AppendRune(s, rune(v)), i + size, true
}

// flowCollection reads a flow sequence, or a flow mapping, of plain and
// quoted scalars that starts at t[at] ('[' or '{') and ends on the same
// line, and the offset past it.
func (r *fastReader) flowCollection(j, at int) (*yaml.Node, int, bool) {
	t := r.line(j)
	n := r.node(yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!!seq", Line: j + 1, Column: r.column(j, at)})
	closing := byte(']')
	if t[at] == '{' {
		n.Kind, n.Tag, closing = yaml.MappingNode, "!!map", '}'
	}
	p := at + 1
	skip := func() {
		for p < len(t) && t[p] == ' ' {
			p++
		}
	}
	skip()
	if p < len(t) && t[p] == closing {
		return n, p + 1, true
	}
	for {
		item, e, ok := r.flowScalar(j, p)
		if !ok {
			return nil, 0, false
		}
		n.Content = append(n.Content, item)
		p = e
		skip()
		if n.Kind == yaml.MappingNode {
			if p+1 >= len(t) || t[p] != ':' || t[p+1] != ' ' {
				return nil, 0, false
			}
			p += 2
			skip()
			if item, p, ok = r.flowScalar(j, p); !ok {
				return nil, 0, false
			}
			n.Content = append(n.Content, item)
			skip()
		}
		if p >= len(t) {
			return nil, 0, false
		}
		switch t[p] {
		case closing:
			return n, p + 1, true
		case ',':
			p++
			skip()
			if p < len(t) && t[p] == closing {
				return nil, 0, false // a trailing comma
			}
		default:
			return nil, 0, false
		}
	}
}

// flowScalar reads a plain or quoted scalar in a flow collection that
// starts at t[p], and the offset past it.
func (r *fastReader) flowScalar(j, p int) (*yaml.Node, int, bool) {
	t := r.line(j)
	if p >= len(t) {
		return nil, 0, false
	}
	switch c := t[p]; {
	case c == '"' || c == '\'':
		s, e, ok := r.quoted(j, p)
		if !ok {
			return nil, 0, false
		}
		style := yaml.DoubleQuotedStyle
		if c == '\'' {
			style = yaml.SingleQuotedStyle
		}
		return r.node(yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: s, Line: j + 1, Column: r.column(j, p)}), e, true
	case flowPlain(c) && c != ' ' && c != '-' && c != '~':
		e := p
		for e < len(t) && flowPlain(t[e]) {
			e++
		}
		s := r.text(j, p, p+len(bytes.TrimRight(t[p:e], " ")))
		return r.node(yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(s), Value: s, Line: j + 1, Column: r.column(j, p)}), e, true
	}
	return nil, 0, false
}

// flowPlain reports a byte a plain scalar in a flow sequence may hold here:
// none that ends it or starts anything else.
func flowPlain(c byte) bool {
	switch c {
	case ',', '[', ']', '{', '}', ':', '?', '#', '"', '\'', '&', '*', '!', '|', '>', '%', '@', '`':
		return false
	}
	return true
}

// blockScalar reads the literal or folded scalar whose indicator is at
// byte p of line j, the value of a key in a mapping indented by n, as
// yaml.v3's yaml_parser_scan_block_scalar does.
func (r *fastReader) blockScalar(j, p, n int) (*yaml.Node, bool) {
	t := r.line(j)
	literal := t[p] == '|'
	chomping, increment := 0, 0
	q := p + 1
	sign := func() {
		if q < len(t) && (t[q] == '+' || t[q] == '-') {
			chomping = 1
			if t[q] == '-' {
				chomping = -1
			}
			q++
		}
	}
	digit := func() bool {
		if q < len(t) && t[q] >= '0' && t[q] <= '9' {
			if t[q] == '0' {
				return false
			}
			increment = int(t[q] - '0')
			q++
		}
		return true
	}
	if q < len(t) && (t[q] == '+' || t[q] == '-') {
		sign()
		if !digit() {
			return nil, false
		}
	} else {
		if !digit() {
			return nil, false
		}
		sign()
	}
	if !restIsComment(t, q) {
		return nil, false
	}
	indent := 0
	if increment > 0 {
		indent = n + increment
	}
	// The scan's position: line k, byte col (all spaces before it).
	k, col := j+1, 0
	// The buffers are the reader's, reused: a board has a block scalar
	// in most of its tasks.
	s, leadingBreak, trailingBreaks := r.buf[0][:0], r.buf[1][:0], r.buf[2][:0]
	defer func() { r.buf = [3][]byte{s, leadingBreak, trailingBreaks} }()
	// breaks eats indentation and empty lines, as
	// yaml_parser_scan_block_scalar_breaks does.
	breaks := func() {
		maxIndent := 0
		for k < len(r.lines) {
			l := r.line(k)
			col = 0
			for (indent == 0 || col < indent) && col < len(l) && l[col] == ' ' {
				col++
			}
			maxIndent = max(maxIndent, col)
			if col < len(l) || !r.lines[k].brk {
				break
			}
			trailingBreaks = append(trailingBreaks, '\n')
			k++
			col = 0
		}
		if indent == 0 {
			indent = max(maxIndent, n+1, 1)
		}
	}
	atEnd := func() bool {
		return k >= len(r.lines) || (col == len(r.line(k)) && !r.lines[k].brk)
	}
	breaks()
	leadingBlank := false
	for !atEnd() && col == indent {
		l := r.line(k)
		trailingBlank := l[col] == ' '
		if !literal && !leadingBlank && !trailingBlank && len(leadingBreak) > 0 && leadingBreak[0] == '\n' {
			if len(trailingBreaks) == 0 {
				s = append(s, ' ')
			}
		} else {
			s = append(s, leadingBreak...)
		}
		leadingBreak = leadingBreak[:0]
		s = append(s, trailingBreaks...)
		trailingBreaks = trailingBreaks[:0]
		leadingBlank = l[col] == ' '
		s = append(s, l[col:]...)
		if !r.lines[k].brk {
			k, col = len(r.lines), 0
			break
		}
		leadingBreak = append(leadingBreak, '\n')
		k, col = k+1, 0
		breaks()
	}
	if chomping != -1 {
		s = append(s, leadingBreak...)
	}
	if chomping == 1 {
		s = append(s, trailingBreaks...)
	}
	style := yaml.LiteralStyle
	if !literal {
		style = yaml.FoldedStyle
	}
	r.i = k
	return r.node(yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: "!!str", Value: string(s), Line: j + 1, Column: r.column(j, p)}), true
}
