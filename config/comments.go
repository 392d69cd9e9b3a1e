package config

import "bytes"

// blankComments empties the lines of data that hold a comment alone,
// keeping every line where it was (yaml's errors name lines). Parse never
// asks for comments, but yaml.v3 reads and keeps every one, and the
// comments of the template 'agentctl init' writes were half of what
// loading agentctl.yaml cost every command.
//
// A line that looks like a comment inside a block scalar (| or >) is
// text, and is kept. From the first line that leaves a quoted string open,
// or is indented with a tab, data is kept as it is.
func blankComments(data []byte) []byte {
	out := make([]byte, 0, len(data))
	block := -1 // the indentation of the line that opened a block scalar
	for rest := data; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest)
		}
		line := rest[:end]
		rest = rest[end:]
		text := bytes.TrimRight(line, "\r\n")
		body := bytes.TrimLeft(text, " ")
		indent := len(text) - len(body)
		if block >= 0 && (len(bytes.TrimSpace(body)) == 0 || indent > block) {
			out = append(out, line...)
			continue
		}
		block = -1
		if len(body) > 0 && body[0] == '#' {
			out = append(out, line[len(text):]...) // the line's end alone
			continue
		}
		content, open := scanLine(body)
		if open || len(body) > 0 && body[0] == '\t' {
			return append(append(out, line...), rest...)
		}
		if opensBlockScalar(content) {
			block = indent
		}
		out = append(out, line...)
	}
	return out
}

// scanLine returns a line's content before its comment, and whether it
// leaves a quoted string open. A quote opens a string where a scalar may
// start (at the start, after ':', '-', '?', ',', '[' or '{' and spaces);
// elsewhere it is a letter of a plain scalar (it's).
func scanLine(line []byte) (content []byte, open bool) {
	var quote byte
	prev := byte(0) // the last character outside a string that is not a space
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			if quote == '\'' && i+1 < len(line) && line[i+1] == '\'' {
				i++ // '' is a quote inside '...'
				continue
			}
			quote, prev = 0, c
		case quote != 0:
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i], false
		case (c == '"' || c == '\'') && bytes.IndexByte([]byte{0, ':', '-', '?', ',', '[', '{'}, prev) >= 0:
			quote = c
		case c != ' ':
			prev = c
		}
	}
	return line, quote != 0
}

// opensBlockScalar says whether a line's content ends in a block scalar's
// header: "|" or ">" and its indicators.
func opensBlockScalar(content []byte) bool {
	content = bytes.TrimRight(content, " \t")
	content = bytes.TrimRight(content, "0123456789+-")
	return len(content) > 0 && (content[len(content)-1] == '|' || content[len(content)-1] == '>')
}
