package mailbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Source says where raw message bytes came from. It names the message in
// errors, gives id-less messages a stable id, and fills in what old formats
// left out.
type Source struct {
	// Name is the file name, or the spool file and index of an entry of
	// inbox.json (".ingest/<spool>.json[3]"), unique to that one taking.
	Name string
	// ModTime stands in for a missing creation time.
	ModTime time.Time
	// Owner is the agent whose mailbox the bytes were found in; it is the
	// recipient when the message names none.
	Owner string
}

// Decode turns the bytes of any message shape agentctl knows into a
// canonical Message: the canonical JSON, every Dream.OS JSON generation
// (sender/recipient, from_agent_id/to_agent_id, body.text, content, payload,
// queue entries wrapping a "message", Agent_Cellphone summary/details) and
// the Markdown format with **From**: headers. Fields with no canonical place
// are kept in Meta. The error says, in words fit for a deadletter reason,
// why the bytes are not a message.
func Decode(data []byte, src Source) (Message, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Message{}, errors.New("the file is empty")
	}
	if !utf8.Valid(data) {
		return Message{}, errors.New("the file is not UTF-8 text (binary?)")
	}
	if strings.EqualFold(filepath.Ext(src.Name), ".md") {
		return decodeMarkdown(data, src)
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return Message{}, fmt.Errorf("not a JSON message object: %s", describeJSONError(data, err))
	}
	if dec.More() || dec.InputOffset() < int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return Message{}, fmt.Errorf("not a JSON message object: unexpected data after byte %d", dec.InputOffset())
	}
	return decodeObject(obj, data, src)
}

// IsCompleteJSON reports whether data holds exactly one whole JSON value.
// A file still being written never does, because every proper prefix of a
// JSON object or array is invalid.
func IsCompleteJSON(data []byte) bool {
	return json.Valid(data) && len(bytes.TrimSpace(data)) > 0
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

// fields is a JSON object being taken apart: each take removes the field, so
// what is left at the end goes to Meta.
type fields map[string]any

// str takes the first present key among keys as a string. A present key of
// another type is an error, so `"from": 42` is refused rather than guessed.
func (f fields) str(keys ...string) (string, error) {
	for _, k := range keys {
		v, ok := f[k]
		if !ok || v == nil {
			delete(f, k)
			continue
		}
		delete(f, k)
		switch v := v.(type) {
		case string:
			if strings.Contains(v, "{{") && strings.Contains(v, "}}") {
				return "", fmt.Errorf("field %q holds an unrendered template placeholder: %q", k, clip(v, 80))
			}
			return strings.TrimSpace(v), nil
		default:
			return "", fmt.Errorf("field %q: want a string, got %s", k, jsonKind(v))
		}
	}
	return "", nil
}

// idKeys are the names Dream.OS gave a message's id, in order of preference.
var idKeys = []string{"id", "message_id", "msg_id", "uuid"}

// idsAsText turns numeric ids into their decimal text. Some Dream.OS
// writers numbered their messages; an id given up for a fresh one would let
// the same message in twice.
func (f fields) idsAsText(keys ...string) {
	for _, k := range keys {
		n, ok := f[k].(json.Number)
		if !ok {
			continue
		}
		if i, err := n.Int64(); err == nil {
			f[k] = strconv.FormatInt(i, 10)
		} else {
			f[k] = n.String() // beyond int64 or not whole: the number as written
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case json.Number:
		return "a number"
	case bool:
		return "true/false"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func decodeObject(obj map[string]any, raw []byte, src Source) (Message, error) {
	f := fields(obj)
	// A Dream.OS queue entry wraps the message and adds its own bookkeeping.
	if inner, ok := f["message"].(map[string]any); ok {
		delete(f, "message")
		f.idsAsText("queue_id")
		queueID, _ := f.str("queue_id")
		m, err := decodeObject(inner, raw, src)
		if err != nil {
			return Message{}, err
		}
		if m.ID == derivedID(raw, src) && queueID != "" {
			m.ID = queueID
		}
		if p, ok := f["priority_score"].(json.Number); ok && inner["priority"] == nil {
			if v, err := p.Float64(); err == nil {
				m.Priority = priorityFromScore(v)
			}
			delete(f, "priority_score")
		}
		if len(f) > 0 {
			m.Meta["queue"] = map[string]any(f)
		}
		return m, nil
	}

	var m Message
	var err error
	take := func(dst *string, keys ...string) {
		if err == nil {
			*dst, err = f.str(keys...)
		}
	}
	f.idsAsText(idKeys...)
	take(&m.ID, idKeys...)
	take(&m.From, "from", "sender", "from_agent_id", "from_agent", "source_agent")
	take(&m.To, "to", "recipient", "to_agent_id", "to_agent", "target")
	take(&m.Type, "type", "message_type", "kind")
	take(&m.Subject, "subject", "topic", "title")
	take(&m.ReplyTo, "reply_to", "in_reply_to", "related_message_id")
	take(&m.ThreadID, "thread_id", "conversation_id")
	take(&m.TaskID, "task_id")
	if err != nil {
		return Message{}, err
	}
	if m.Priority, err = takePriority(f); err != nil {
		return Message{}, err
	}
	if m.CreatedAt, err = takeTime(f, "created_at", "timestamp", "timestamp_utc_iso", "timestamp_created", "timestamp_utc", "sent_at", "ts", "created"); err != nil {
		return Message{}, err
	}
	if m.Body, err = takeBody(f, &m); err != nil {
		return Message{}, err
	}
	if err := takeLifecycle(f, &m); err != nil {
		return Message{}, err
	}
	if meta, ok := f["meta"].(map[string]any); ok {
		delete(f, "meta")
		m.Meta = meta
	}
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	for k, v := range f {
		m.Meta[k] = v
	}
	return finish(m, raw, src)
}

// takeBody finds the message text in any of the places Dream.OS put it.
func takeBody(f fields, m *Message) (string, error) {
	for _, k := range []string{"body", "content", "message", "text", "payload", "summary"} {
		v, ok := f[k]
		if !ok || v == nil {
			continue
		}
		delete(f, k)
		switch v := v.(type) {
		case string:
			if k == "summary" {
				if details, ok := f["details"].(map[string]any); ok {
					if m.TaskID == "" {
						m.TaskID, _ = details["task_id"].(string)
					}
					delete(f, "details")
					return v + "\n\n" + indentJSON(details), nil
				}
			}
			return v, nil
		case map[string]any:
			return bodyFromObject(k, fields(v), f, m)
		case []any:
			return indentJSON(v), nil
		default:
			return "", fmt.Errorf("field %q: want text or an object, got %s", k, jsonKind(v))
		}
	}
	return "", nil
}

// bodyFromObject handles {"body": {"text": ...}} and THEA-style payloads
// {"subject", "body", "data"}; any other object is shown to the agent as
// indented JSON, which it reads as well as prose.
func bodyFromObject(key string, obj, outer fields, m *Message) (string, error) {
	if m.Subject == "" {
		s, err := obj.str("subject")
		if err != nil {
			return "", err
		}
		m.Subject = s
	}
	for _, k := range []string{"text", "body", "raw", "content"} {
		if s, ok := obj[k].(string); ok {
			delete(obj, k)
			if len(obj) > 0 {
				outer["_"+key] = map[string]any(obj)
			}
			return s, nil
		}
	}
	return indentJSON(map[string]any(obj)), nil
}

func indentJSON(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

func takePriority(f fields) (Priority, error) {
	v, ok := f["priority"]
	delete(f, "priority")
	if score, ok := f["priority_score"].(json.Number); ok && v == nil {
		delete(f, "priority_score")
		s, _ := score.Float64()
		return priorityFromScore(s), nil
	}
	switch v := v.(type) {
	case nil:
		return Normal, nil
	case string:
		return ParsePriority(v)
	case json.Number:
		n, err := v.Float64()
		if err != nil {
			return "", fmt.Errorf("field \"priority\": %v", err)
		}
		if n != math.Trunc(n) {
			return priorityFromScore(n), nil
		}
		return priorityFromLevel(n), nil
	}
	if !ok {
		return Normal, nil
	}
	return "", fmt.Errorf("field \"priority\": want a word or a number, got %s", jsonKind(v))
}

// timeLayouts are the timestamp spellings found in Dream.OS files. Those
// without a zone are read as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02",
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return inRange(t)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp agentctl can read", s)
}

// inRange refuses times that JSON cannot carry (years before 1 or after
// 9999), which would otherwise make the canonical message unwritable.
func inRange(t time.Time) (time.Time, error) {
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%s is outside the years 1 to 9999", t.Format(time.RFC3339))
	}
	return t, nil
}

func takeTime(f fields, keys ...string) (time.Time, error) {
	for _, k := range keys {
		v, ok := f[k]
		if !ok || v == nil {
			continue
		}
		delete(f, k)
		switch v := v.(type) {
		case string:
			if strings.Contains(v, "{{") {
				return time.Time{}, fmt.Errorf("field %q holds an unrendered template placeholder: %q", k, v)
			}
			t, err := parseTime(v)
			if err != nil {
				return time.Time{}, fmt.Errorf("field %q: %w", k, err)
			}
			return t, nil
		case json.Number:
			n, err := v.Float64()
			if err != nil || n < 0 {
				return time.Time{}, fmt.Errorf("field %q: %s is not a Unix time", k, v)
			}
			if n > 1e15 {
				return time.Time{}, fmt.Errorf("field %q: %s is not a Unix time", k, v)
			}
			if n > 1e12 { // milliseconds
				return inRange(time.UnixMilli(int64(n)))
			}
			return inRange(time.Unix(int64(n), 0))
		default:
			return time.Time{}, fmt.Errorf("field %q: want a timestamp, got %s", k, jsonKind(v))
		}
	}
	return time.Time{}, nil
}

// takeLifecycle reads the fields agentctl itself adds while a message waits
// for a retry, and the Dream.OS acknowledgement flag.
func takeLifecycle(f fields, m *Message) error {
	for _, k := range []string{"requires_ack", "ack"} {
		switch v := f[k].(type) {
		case nil:
		case bool:
			m.RequiresAck = m.RequiresAck || v
			delete(f, k)
		default:
			return fmt.Errorf("field %q: want true or false, got %s", k, jsonKind(v))
		}
	}
	for _, t := range []struct {
		key string
		dst **time.Time
	}{{"deliver_after", &m.DeliverAfter}, {"expires_at", &m.ExpiresAt}} {
		v, err := takeTime(f, t.key)
		if err != nil {
			return err
		}
		if !v.IsZero() {
			*t.dst = &v
		}
	}
	if v, ok := f["attempts"].(json.Number); ok {
		n, err := v.Int64()
		if err != nil || n < 0 {
			return fmt.Errorf("field \"attempts\": %s is not a count", v)
		}
		m.Attempts = int(n)
		delete(f, "attempts")
	}
	var err error
	m.LastError, err = f.str("last_error")
	return err
}

// finish fills what the source left out and checks what every message needs.
func finish(m Message, raw []byte, src Source) (Message, error) {
	if m.ID == "" {
		m.ID = derivedID(raw, src)
	}
	if m.To == "" || strings.EqualFold(m.To, "all") {
		m.To = src.Owner
	}
	if m.From == "" {
		m.From = "unknown"
	}
	m.Type = strings.ToLower(m.Type)
	if m.Type == "" {
		m.Type = "message"
	}
	if m.Priority == "" {
		m.Priority = Normal
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = src.ModTime.UTC()
	}
	if strings.TrimSpace(m.Body) == "" && m.Subject == "" {
		return Message{}, errors.New("the message has neither a body nor a subject")
	}
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	return m, nil
}

// derivedID names a message that came without an id. It depends only on the
// bytes and where they were found, so reading the same file twice gives the
// same id and the second delivery is recognised as a duplicate.
func derivedID(raw []byte, src Source) string {
	h := sha256.New()
	h.Write([]byte(src.Name))
	h.Write([]byte{0})
	h.Write(raw)
	return "drop_" + hex.EncodeToString(h.Sum(nil))[:20]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
