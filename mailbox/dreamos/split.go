package dreamos

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// nameLike matches a sender's name: "Agent-7", "Captain Agent-4", "THEA".
var nameLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,2}$`) })

// Part is one message inside a file that a writer appends messages to:
// the bytes data[Start:End].
type Part struct{ Start, End int }

// Split cuts text to which Markdown messages were appended one after
// another into its messages. A message begins at its sender's header line
// ("**From**: X" in any style, or "[TAG] X → Y"), together with the title,
// separator, blank and header lines right above it; text before the first
// such line belongs to the first message. The last part may still be being
// written: callers take it only once the file has settled.
//
// Offsets are into data as given (byte order mark and CRLF included), so a
// caller can remember how far it has read.
func Split(data []byte) []Part {
	type line struct {
		start, end int
		text       string
	}
	var lines []line
	for off := 0; off < len(data); {
		n := bytes.IndexByte(data[off:], '\n')
		end := off + n + 1
		if n < 0 {
			end = len(data)
		}
		text := strings.TrimSpace(string(bytes.TrimPrefix(data[off:end], []byte{0xEF, 0xBB, 0xBF})))
		lines = append(lines, line{off, end, text})
		off = end
	}
	isFrom := func(s string) bool {
		if k, v, ok := header(s, true); ok {
			switch k {
			case "from", "sender", "sender id", "from agent":
				// A plain "From: ..." line in prose is no header: only a
				// bold one, or a plain one naming someone, starts a message.
				_, _, bold := header(s, false)
				return bold || nameLike().MatchString(v)
			}
		}
		// Only a tagged bracket line: "A → B" alone is too common in prose.
		return strings.HasPrefix(s, "[") && bracketHeader().MatchString(s)
	}
	framing := func(s string) bool { return s == "" || isTitle(s) || separator().MatchString(s) }
	aboveHeader := func(s string) bool {
		_, _, ok := header(s, false)
		return ok || framing(s)
	}
	var starts []int
	bodySeen := false
	for i, l := range lines {
		// A line still being written starts nothing yet: "From: t" may
		// become "From: the docs, ..." of a body.
		complete := l.end > l.start && data[l.end-1] == '\n'
		if complete && isFrom(l.text) {
			if len(starts) == 0 || bodySeen {
				// Up over the headers above the sender's, then over the
				// title and separators; never into the previous body.
				j, inFrame := i, false
				for j > 0 && (len(starts) == 0 || j-1 > starts[len(starts)-1]) {
					t := lines[j-1].text
					if framing(t) && t != "" {
						inFrame = true
					} else if !(t == "" || !inFrame && aboveHeader(t)) {
						break
					}
					j--
				}
				if len(starts) == 0 {
					j = 0
				}
				starts = append(starts, j)
				bodySeen = false
			}
			continue
		}
		if len(starts) > 0 && !aboveHeader(l.text) {
			if _, _, ok := header(l.text, true); !ok {
				bodySeen = true
			}
		}
	}
	if len(starts) == 0 {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		return []Part{{0, len(data)}}
	}
	parts := make([]Part, len(starts))
	for k, s := range starts {
		end := len(data)
		if k+1 < len(starts) {
			end = lines[starts[k+1]].start
		}
		parts[k] = Part{lines[s].start, end}
	}
	return parts
}
