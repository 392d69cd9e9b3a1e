package dreamos

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode turns the bytes of one message file into a Message: agentctl's
// canonical JSON, every Dream.OS JSON generation, and Markdown or plain
// text with headers in any of the styles the old writers used. JSON is
// recognised by its content, not by the file's name, so a Markdown message
// saved as .json or a JSON one saved as .msg is read all the same.
//
// The error says, in words fit for a deadletter reason, why the bytes are
// not a message: they are empty, binary, broken JSON, or hold no text.
func Decode(data []byte, src Source) (Message, error) {
	text, err := normalize(data)
	if err != nil {
		return Message{}, err
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return Message{}, errors.New("the file is empty")
	}
	if looksLikeJSON(text) {
		obj, err := decodeJSONObject(text)
		if err != nil {
			return Message{}, err
		}
		return decodeObject(obj, data, src)
	}
	return decodeText(text, data, src)
}

// normalize strips byte order marks (PowerShell writes them), turns UTF-16
// into UTF-8 and CRLF into LF. Anything that is still not UTF-8 is binary.
func normalize(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF):
		data = fromUTF16(data[2:], data[0] == 0xFE)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("the file is not UTF-8 text (binary?)")
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), nil
}

func fromUTF16(b []byte, bigEndian bool) []byte {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return []byte(string(utf16.Decode(u)))
}

// looksLikeJSON tells JSON from text by content. "[A2A] Agent-7 → Agent-6"
// opens with a bracket too, so an array must open like one.
func looksLikeJSON(text []byte) bool {
	t := bytes.TrimLeft(text, " \t\n")
	switch {
	case len(t) == 0:
		return false
	case t[0] == '{' || json.Valid(t):
		return true
	case t[0] == '[':
		rest := bytes.TrimLeft(t[1:], " \t\n")
		return len(rest) == 0 || bytes.IndexByte([]byte(`{["]-0123456789`), rest[0]) >= 0
	}
	return false
}

// IsCompleteJSON reports whether data holds exactly one whole JSON value
// (after a byte order mark). A file still being written never does,
// because every proper prefix of a JSON object or array is invalid.
func IsCompleteJSON(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	return json.Valid(data) && len(bytes.TrimSpace(data)) > 0
}

func decodeJSONObject(text []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("not a JSON message object: %s", describeJSONError(text, err))
	}
	if dec.More() || dec.InputOffset() < int64(len(bytes.TrimRight(text, " \t\r\n"))) {
		return nil, fmt.Errorf("not a JSON message object: unexpected data after byte %d", dec.InputOffset())
	}
	if obj == nil {
		obj = map[string]any{} // null: no text, said as such by finish
	}
	return obj, nil
}

func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := 1 + bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("%v (line %d, byte %d)", syn, line, syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Sprintf("the top level is a JSON %s, not an object", typ.Value)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends early (truncated?)"
	}
	return err.Error()
}

// finish fills what the source left out and checks that some text was found.
func finish(m Message, raw []byte, src Source) (Message, error) {
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	if m.ID == "" {
		m.ID = DerivedID(raw, src.Name)
	}
	m.To, m.From = m.roleAgent("to", m.To), m.roleAgent("from", m.From)
	switch {
	case m.To == "":
		m.To = src.Owner
	case isEveryone(m.To):
		// In an agent's mailbox a broadcast is that agent's copy; found
		// where no agent owns it, it stays "all" for the caller to spread.
		m.To = src.Owner
		if src.Owner == "" {
			m.To = "all"
		}
	}
	if m.From == "" {
		m.From = "unknown"
	}
	m.Type = strings.ToLower(m.Type)
	if m.Type == "" {
		m.Type = "message"
	}
	if m.Priority == "" {
		// No field or header gave one: the title may ("🚨 URGENT ...").
		m.Priority = cmp.Or(PriorityInTitle(m.Subject), Normal)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = src.ModTime.UTC()
	}
	if strings.TrimSpace(m.Body) == "" && m.Subject == "" {
		return Message{}, errors.New("no text found: the message has neither a body nor a subject in any field agentctl knows")
	}
	return m, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isPlaceholder(s string) bool {
	i := strings.Index(s, "{{")
	return i >= 0 && strings.Contains(s[i:], "}}")
}

// isEveryone reports whether a recipient is every agent, in the words the
// old writers used for a broadcast.
func isEveryone(to string) bool {
	switch strings.Join(strings.Fields(headerSeparators.Replace(strings.ToLower(to))), " ") {
	case "all", "all agents", "everyone", "broadcast":
		return true
	}
	return false
}
