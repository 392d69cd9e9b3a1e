package dreamos

import (
	"regexp"
	"strings"
	"sync"
)

// Header lines in every style the old writers used, any case:
//
//	**From**: Agent-2     **From:** Agent-2     __From__: Agent-2
//	- **From**: Agent-2   From: Agent-2         > **From**: Agent-2
var (
	boldHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-*>]\s+)?(?:\*\*|__|\*)([A-Za-z][A-Za-z _-]{0,30}?)(?::\s*(?:\*\*|__|\*)|(?:\*\*|__|\*)\s*:)\s*(.*)$`)
	})
	plainHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-*>]\s+)?([A-Za-z][A-Za-z _-]{0,30}?)\s*:\s*(.*)$`)
	})
	// [A2A] AGENT-7 → AGENT-6: subject, and the same without the tag.
	bracketHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:\[([A-Za-z0-9_ -]{1,20})\]\s*)?([A-Za-z][\w.-]{0,40}(?: [A-Za-z][\w.-]{0,40})?)\s*(?:→|->|=>|⇒|⟶)\s*([A-Za-z][\w.-]{0,40})\s*(?:[:|—-]\s*(.*))?$`)
	})
	// "Message from Agent-2 to Agent-1" in a title.
	titleFromTo = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\bfrom\s+([A-Za-z][\w.-]{0,40})(?:\s+to\s+([A-Za-z][\w.-]{0,40}))?`)
	})
	separator = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:-{3,}|\*{3,}|_{3,}|={3,}|[━─═]{3,})$`) })
	// A signature line of the fixed framing: one italic line.
	signature = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:\*[^*].*[^*]\*|_[^_].*[^_]_|\*[^*]\*)$`) })
)

// knownHeaders are the header keys that a plain "Key: value" line may
// carry; other plain lines are text. Bold headers may carry any key.
var knownHeaders = map[string]bool{
	"from": true, "sender": true, "sender id": true, "from agent": true, "to": true, "recipient": true,
	"recipient id": true, "to agent": true, "assigned to": true, "priority": true, "urgency": true, "prio": true, "message id": true, "msg id": true, "id": true,
	"message type": true, "type": true, "timestamp": true, "created": true, "created at": true, "date": true,
	"sent": true, "subject": true, "title": true, "topic": true, "task": true, "task id": true,
	"reply to": true, "in reply to": true, "thread": true, "thread id": true, "tags": true,
}

// header reads one header line; key is lower case with single spaces.
func header(line string, plainToo bool) (key, value string, ok bool) {
	parts := boldHeader().FindStringSubmatch(line)
	if parts == nil && plainToo {
		parts = plainHeader().FindStringSubmatch(line)
		if parts != nil && !knownHeaders[canonHeader(parts[1])] {
			parts = nil
		}
	}
	if parts == nil {
		return "", "", false
	}
	return canonHeader(parts[1]), strings.TrimSpace(parts[2]), true
}

// headerSeparators and emphasis are built once, not per line read.
var (
	headerSeparators = strings.NewReplacer("_", " ", "-", " ")
	emphasis         = strings.NewReplacer("**", "", "__", "")
)

func canonHeader(k string) string {
	k = headerSeparators.Replace(strings.ToLower(strings.TrimSpace(k)))
	return strings.Join(strings.Fields(k), " ")
}

func isTitle(line string) bool { return strings.HasPrefix(line, "#") }

// decodeText reads a Markdown or plain-text message: an optional "# title",
// header lines in any style (or one bracketed "[TAG] A → B" line), an
// optional separator, then the body. Text without any header is a message
// too, from an unknown sender. The writer's fixed framing (separator
// lines, an italic signature footer) is left out of the body; the rest of
// the body, reply instructions included, is kept whole.
func decodeText(text, raw []byte, src Source) (Message, error) {
	m := Message{Meta: map[string]any{"format": "dreamos-markdown"}}
	lines := strings.Split(string(text), "\n")
	i, headers := 0, 0
	for ; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case line == "":
		case isTitle(line) && m.Subject == "" && headers == 0:
			m.Subject = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case separator().MatchString(line):
			if headers > 0 {
				i++
				goto body
			}
		default:
			if key, value, ok := header(line, true); ok {
				setHeader(&m, key, value, src)
				headers++
				continue
			}
			if headers == 0 && m.From == "" {
				if p := bracketHeader().FindStringSubmatch(line); p != nil {
					setBracketHeader(&m, p)
					headers++
					continue
				}
			}
			// A banner right above the headers ("[HEADER] S2A CONTROL",
			// "🔄 **COORDINATION REQUEST**") is the title.
			if headers == 0 && m.Subject == "" && nextIsHeader(lines[i+1:]) {
				m.Subject = strings.TrimSpace(emphasis.Replace(line))
				continue
			}
			goto body
		}
	}
body:
	rest := lines[min(i, len(lines)):]
	// "{content}\n\nPriority: {priority}": a writer that put the priority last.
	if n := lastNonBlank(rest); n > 0 && m.Priority == "" {
		if key, value, ok := header(strings.TrimSpace(rest[n]), true); ok && key == "priority" && strings.TrimSpace(rest[n-1]) == "" {
			setHeader(&m, key, value, src)
			rest = rest[:n]
		}
	}
	m.Body = stripFraming(rest)
	if headers == 0 && m.Body == "" && m.Subject != "" {
		m.Body, m.Subject = m.Subject, "" // a lone title is the text itself
	}
	fromTitle(&m)
	return finish(m, raw, src)
}

func lastNonBlank(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i
		}
	}
	return -1
}

// nextIsHeader reports whether the next line that is not blank is a header.
func nextIsHeader(lines []string) bool {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			_, _, ok := header(l, true)
			return ok
		}
	}
	return false
}

func setBracketHeader(m *Message, p []string) {
	if p[1] != "" {
		m.Meta["tag"] = p[1]
		// "[URGENT] Agent-4 → Agent-1": the tag is the priority.
		if pr, err := ParsePriority(p[1]); err == nil && strings.TrimSpace(p[1]) != "" && m.Priority == "" {
			m.Priority = pr
		}
	}
	m.From, m.To = p[2], p[3]
	if p[4] != "" && m.Subject == "" {
		m.Subject = strings.TrimSpace(p[4])
	}
}

func setHeader(m *Message, key, value string, src Source) {
	if isPlaceholder(value) {
		m.fallback(key, value, "", "header holds an unrendered template placeholder")
		return
	}
	switch key {
	case "from", "sender", "sender id", "from agent":
		m.From = value
	case "to", "recipient", "recipient id", "to agent", "assigned to":
		m.To = value
	case "priority", "urgency", "prio":
		p, err := ParsePriority(value)
		if err != nil {
			m.fallback("priority", value, Normal, err.Error())
			p = Normal
		}
		m.Priority = p
	case "message id", "msg id", "id":
		m.ID = value
	case "message type", "type":
		m.Type = value
	case "timestamp", "created", "created at", "date", "sent":
		t, err := parseTime(value)
		if err != nil {
			m.fallback("created_at", value, "the file's time", err.Error())
		}
		m.CreatedAt = t
	case "subject", "title", "topic":
		m.Subject = value
	case "task", "task id":
		m.TaskID = value
	case "reply to", "in reply to":
		m.ReplyTo = value
	case "thread", "thread id":
		m.ThreadID = value
	default:
		m.Meta[strings.ReplaceAll(key, " ", "_")] = value
	}
}

// fromTitle takes the sender and recipient from a subject such as
// "Message from Agent-2 to Agent-1" when no field named them.
func fromTitle(m *Message) {
	if m.From != "" && m.To != "" {
		return
	}
	p := titleFromTo().FindStringSubmatch(m.Subject)
	if p == nil {
		return
	}
	if m.From == "" {
		m.From = p[1]
	}
	if m.To == "" && p[2] != "" {
		m.To = p[2]
	}
}

// stripFraming drops the separator lines that open or close a body, and a
// closing block of italic signature lines after a separator (the writer's
// "*Message delivered via ...*" footer), with the blank lines around them.
func stripFraming(lines []string) string {
	blankOrSep := func(s string) bool {
		s = strings.TrimSpace(s)
		return s == "" || separator().MatchString(s)
	}
	start, end := 0, len(lines)
	for start < end && blankOrSep(lines[start]) {
		start++
	}
	for {
		for end > start && blankOrSep(lines[end-1]) {
			end--
		}
		j := end
		for j > start && (strings.TrimSpace(lines[j-1]) == "" || signature().MatchString(strings.TrimSpace(lines[j-1]))) {
			j--
		}
		if j == end || j == start || !separator().MatchString(strings.TrimSpace(lines[j-1])) {
			break
		}
		end = j - 1
	}
	return strings.TrimSpace(strings.Join(lines[start:end], "\n"))
}
