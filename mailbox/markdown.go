package mailbox

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// mdHeader matches the Dream.OS Markdown header lines: **From**: Captain Agent-4
var mdHeader = regexp.MustCompile(`^\*\*([A-Za-z][A-Za-z ]*)\*\*:\s*(.*)$`)

// decodeMarkdown reads the Dream.OS Markdown message: a "# title" line,
// "**Key**: value" headers, a "---" line, then the body. Unknown headers go
// to Meta; the body is kept whole, footer included, because the agent may
// need its reply instructions.
func decodeMarkdown(data []byte, src Source) (Message, error) {
	var m Message
	m.Meta = map[string]any{"format": "dreamos-markdown"}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), len(data)+1)
	headers := 0
	offset := 0
	bodyStart := -1
	for sc.Scan() {
		line := sc.Text()
		lineLen := len(sc.Bytes()) + 1
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "# ") && m.Subject == "" && headers == 0:
			m.Subject = strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
		case mdHeader.MatchString(trimmed):
			parts := mdHeader.FindStringSubmatch(trimmed)
			if err := setMarkdownHeader(&m, strings.ToLower(parts[1]), strings.TrimSpace(parts[2])); err != nil {
				return Message{}, err
			}
			headers++
		case trimmed == "---" && headers > 0:
			bodyStart = offset + lineLen
		case trimmed == "":
		default:
			if headers == 0 {
				return Message{}, fmt.Errorf("not a Dream.OS Markdown message: no **From**: style headers before %q", clip(trimmed, 40))
			}
			bodyStart = offset
		}
		if bodyStart >= 0 {
			break
		}
		offset += lineLen
	}
	if headers == 0 {
		return Message{}, fmt.Errorf("not a Dream.OS Markdown message: no **From**: style headers")
	}
	if bodyStart >= 0 && bodyStart <= len(data) {
		m.Body = strings.TrimSpace(string(data[bodyStart:]))
	}
	return finish(m, data, src)
}

func setMarkdownHeader(m *Message, key, value string) error {
	if strings.Contains(value, "{{") && strings.Contains(value, "}}") {
		return fmt.Errorf("header %q holds an unrendered template placeholder: %q", key, clip(value, 80))
	}
	var err error
	switch key {
	case "from", "sender":
		m.From = value
	case "to", "recipient":
		m.To = value
	case "priority":
		m.Priority, err = ParsePriority(value)
	case "message id", "id":
		m.ID = value
	case "message type", "type":
		m.Type = value
	case "timestamp", "created", "date":
		m.CreatedAt, err = parseTime(value)
	case "subject":
		m.Subject = value
	case "task", "task id":
		m.TaskID = value
	case "reply to", "in reply to":
		m.ReplyTo = value
	default:
		m.Meta[strings.ReplaceAll(key, " ", "_")] = value
	}
	if err != nil {
		return fmt.Errorf("header %q: %w", key, err)
	}
	return nil
}
