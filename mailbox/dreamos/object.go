package dreamos

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fields is a JSON object being taken apart: each take removes the field,
// so what is left at the end goes to Meta.
type fields map[string]any

// keySeparators is built once: building a Replacer per key was most of
// what decoding a message cost.
var keySeparators = strings.NewReplacer("_", "", "-", "", " ", "")

// normKey makes "messageId", "message_id" and "Message-ID" one key.
func normKey(k string) string {
	return keySeparators.Replace(strings.ToLower(k))
}

// find returns the actual key of the first field present (not null) among
// keys, compared as normKey does.
func (f fields) find(keys ...string) (string, bool) {
	for _, want := range keys {
		if v, ok := f[want]; ok && v != nil {
			return want, true
		}
	}
	actual := make([]string, 0, len(f))
	for k := range f {
		actual = append(actual, k)
	}
	slices.Sort(actual) // the same choice on every read
	for _, want := range keys {
		for _, k := range actual {
			if f[k] != nil && normKey(k) == normKey(want) {
				return k, true
			}
		}
	}
	return "", false
}

// text takes the first present key among keys as a string for field. A
// value of another type, or an unrendered {{placeholder}}, cannot be
// read: it is noted as a fallback and "" returned, so the caller's default
// applies.
func (f fields) text(m *Message, field, used string, keys ...string) string {
	k, ok := f.find(keys...)
	if !ok {
		return ""
	}
	v := f[k]
	delete(f, k)
	switch v := v.(type) {
	case string:
		if isPlaceholder(v) {
			m.fallback(field, v, used, fmt.Sprintf("field %q holds an unrendered template placeholder", k))
			return ""
		}
		return strings.TrimSpace(v)
	case json.Number:
		return v.String() // numbered ids, numeric agent ids: the number as written
	}
	m.fallback(field, v, used, fmt.Sprintf("field %q: want text, got %s", k, jsonKind(v)))
	return ""
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
	case string:
		return "text"
	}
	return fmt.Sprintf("%T", v)
}

// The names Dream.OS gave each field, in order of preference (compared as
// normKey does, so case, "_" and "-" do not matter).
var (
	idKeys      = []string{"id", "message_id", "msg_id", "uuid", "message_uuid"}
	fromKeys    = []string{"from", "sender", "sender_id", "from_agent_id", "from_agent", "source_agent", "source_agent_id", "sender_agent", "sender_agent_id", "sender_name", "author", "origin"}
	toKeys      = []string{"to", "recipient", "recipient_id", "to_agent_id", "to_agent", "target", "target_agent", "target_agent_id", "recipient_agent", "recipient_agent_id", "destination", "dest_agent_id", "agent_id"}
	typeKeys    = []string{"type", "message_type", "kind", "msg_type"}
	subjectKeys = []string{"subject", "topic", "title", "headline"}
	timeKeys    = []string{"created_at", "timestamp", "timestamp_utc_iso", "timestamp_created", "timestamp_utc", "sent_at", "ts", "created", "date", "time"}
	// bodyKeys hold the text itself; their order is their preference.
	bodyKeys = []string{"body", "content", "message", "text", "payload", "summary"}
	// proseKeys hold text when none of bodyKeys does; the longest wins.
	proseKeys = []string{"instructions", "instruction", "intent", "description", "details", "prompt", "request", "question", "directive", "task_description", "msg", "note", "notes", "command", "comment", "update", "report", "response", "result"}
)

func decodeObject(obj map[string]any, raw []byte, src Source) (Message, error) {
	f := fields(obj)
	// A Dream.OS queue entry wraps the message and adds its own bookkeeping.
	if inner, ok := f["message"].(map[string]any); ok && isQueueEntry(f, inner) {
		return decodeQueueEntry(f, inner, raw, src)
	}
	var m Message
	if meta, ok := f["meta"].(map[string]any); ok {
		delete(f, "meta")
		m.Meta = meta
	}
	m.ID = f.text(&m, "id", "an id derived from the content", idKeys...)
	m.From = f.text(&m, "from", "unknown", fromKeys...)
	if m.From == "" {
		m.From = f.agentID(&m, "from", "from", "sender", "source", "origin")
	}
	m.To = f.text(&m, "to", src.Owner, toKeys...)
	if m.To == "" {
		m.To = f.agentID(&m, "to", "to", "recipient", "target", "dest", "destination")
	}
	m.Type = f.text(&m, "type", "message", typeKeys...)
	m.Subject = f.text(&m, "subject", "", subjectKeys...)
	m.ReplyTo = f.text(&m, "reply_to", "", "reply_to", "in_reply_to", "related_message_id")
	m.ThreadID = f.text(&m, "thread_id", "", "thread_id", "conversation_id")
	m.TaskID = f.text(&m, "task_id", "", "task_id")
	m.Priority = f.priority(&m)
	m.CreatedAt = f.time(&m, "created_at", src.ModTime, timeKeys...)
	m.Body = f.body(&m)
	f.lifecycle(&m)
	fromTitle(&m)
	if m.Meta == nil {
		m.Meta = map[string]any{}
	}
	for k, v := range f {
		if k == FallbacksKey {
			continue // ours already; never let the original overwrite it
		}
		m.Meta[k] = v
	}
	return finish(m, raw, src)
}

// isQueueEntry tells a queue entry wrapping a message from a message whose
// body is an object under "message": the wrapped message names its sender
// or recipient, or the entry names neither.
func isQueueEntry(outer fields, inner map[string]any) bool {
	if _, ok := outer["queue_id"]; ok {
		return true
	}
	_, from := fields(inner).find(fromKeys...)
	_, to := fields(inner).find(toKeys...)
	if from || to {
		return true
	}
	_, from = outer.find(fromKeys...)
	_, to = outer.find(toKeys...)
	return !from && !to
}

func decodeQueueEntry(f fields, inner map[string]any, raw []byte, src Source) (Message, error) {
	delete(f, "message")
	var scratch Message
	queueID := f.text(&scratch, "queue_id", "", "queue_id")
	// The entry's time is the message's when the message has none.
	if _, has := fields(inner).find(timeKeys...); !has {
		if k, ok := f.find(timeKeys...); ok {
			inner[k] = f[k]
			delete(f, k)
		}
	}
	m, err := decodeObject(inner, raw, src)
	if err != nil {
		return Message{}, err
	}
	if m.ID == DerivedID(raw, src.Name) && queueID != "" {
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

// agentID finds the *_agent_id spellings not listed: any key that starts
// with one of prefixes and ends in agent_id or agent.
func (f fields) agentID(m *Message, field string, prefixes ...string) string {
	var keys []string
	for k := range f {
		n := normKey(k)
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) && (strings.HasSuffix(n, "agentid") || strings.HasSuffix(n, "agent") || strings.HasSuffix(n, "agentname")) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return ""
	}
	return f.text(m, field, "", keys[0])
}

func (f fields) priority(m *Message) string {
	k, ok := f.find("priority", "prio", "urgency")
	if !ok {
		if score, ok := f["priority_score"].(json.Number); ok {
			delete(f, "priority_score")
			if s, err := score.Float64(); err == nil {
				return priorityFromScore(s)
			}
		}
		return "" // none given: finish reads the title
	}
	v := f[k]
	delete(f, k)
	switch v := v.(type) {
	case string:
		p, err := ParsePriority(v)
		if err != nil {
			m.fallback("priority", v, Normal, err.Error())
			return Normal
		}
		return p
	case json.Number:
		n, err := v.Float64()
		switch {
		case err != nil || math.IsInf(n, 0) || math.IsNaN(n):
			m.fallback("priority", v, Normal, fmt.Sprintf("field %q: %s is not a priority", k, v))
			return Normal
		case n != math.Trunc(n):
			return priorityFromScore(n)
		}
		return priorityFromLevel(n)
	}
	m.fallback("priority", v, Normal, fmt.Sprintf("field %q: want a word or a number, got %s", k, jsonKind(v)))
	return Normal
}

// time takes the first timestamp among keys; one that cannot be read falls
// back to def (the file's time) and is noted.
func (f fields) time(m *Message, field string, def time.Time, keys ...string) time.Time {
	k, ok := f.find(keys...)
	if !ok {
		return time.Time{}
	}
	v := f[k]
	delete(f, k)
	t, err := parseAnyTime(v)
	if err != nil {
		used := "the file's time"
		if field != "created_at" {
			used = "none"
		}
		m.fallback(field, v, used, fmt.Sprintf("field %q: %v", k, err))
		return time.Time{}
	}
	return t
}

func parseAnyTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case string:
		if isPlaceholder(v) {
			return time.Time{}, fmt.Errorf("%q is an unrendered template placeholder", clip(v, 80))
		}
		return parseTime(v)
	case json.Number:
		n, err := v.Float64()
		if err != nil || n < 0 || n > 1e15 {
			return time.Time{}, fmt.Errorf("%s is not a Unix time", v)
		}
		if n > 1e12 { // milliseconds
			return inRange(time.UnixMilli(int64(n)))
		}
		return inRange(time.Unix(int64(n), 0))
	}
	return time.Time{}, fmt.Errorf("want a timestamp, got %s", jsonKind(v))
}

// timeLayouts are the timestamp spellings found in Dream.OS files. Those
// without a zone are read as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02T15-04-05",
	"20060102T150405Z",
	"2006-01-02 15:04",
	"2006-01-02",
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return inRange(t)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp agentctl can read", clip(s, 80))
}

// inRange refuses times that JSON cannot carry (years before 1 or after
// 9999), which would make the canonical message unwritable.
func inRange(t time.Time) (time.Time, error) {
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%s is outside the years 1 to 9999", t.Format(time.RFC3339))
	}
	return t, nil
}

// body finds the message text in any of the places Dream.OS put it: the
// usual body fields first, in order; then the longest of the prose fields
// (instructions, intent, description, ...); then the longest text of any
// other field that reads like a sentence.
func (f fields) body(m *Message) string {
	for _, want := range bodyKeys {
		k, ok := f.find(want)
		if !ok {
			continue
		}
		switch v := f[k].(type) {
		case string:
			delete(f, k)
			if normKey(k) == "summary" {
				if details, ok := f["details"].(map[string]any); ok {
					if m.TaskID == "" {
						m.TaskID, _ = details["task_id"].(string)
					}
					delete(f, "details")
					return v + "\n\n" + indentJSON(details)
				}
			}
			return v
		case map[string]any:
			delete(f, k)
			return bodyFromObject(k, fields(v), f, m)
		case []any:
			delete(f, k)
			return indentJSON(v)
		}
		// A number or true/false is no text: leave it to Meta and look on.
	}
	if k := f.longest(proseKeys, false); k != "" {
		s := f[k].(string)
		delete(f, k)
		return s
	}
	if k := f.longest(nil, true); k != "" {
		s := f[k].(string)
		delete(f, k)
		m.fallback("body", k, "the text of field "+strconv.Quote(k), "no field agentctl knows holds text; the longest sentence-like field was taken")
		return s
	}
	return ""
}

// longest names the field holding the longest text among keys, or among
// all fields that read like a sentence (a space, not a timestamp) when
// anyField is set.
func (f fields) longest(keys []string, anyField bool) string {
	best, bestLen := "", 0
	consider := func(k string) {
		s, ok := f[k].(string)
		if !ok || isPlaceholder(s) && !strings.Contains(strings.TrimSpace(s), " ") {
			return
		}
		if anyField {
			if !strings.Contains(strings.TrimSpace(s), " ") || len(s) < 12 {
				return
			}
			if _, err := parseTime(s); err == nil {
				return
			}
		}
		if len(s) > bestLen || len(s) == bestLen && k < best {
			best, bestLen = k, len(s)
		}
	}
	if anyField {
		for k := range f {
			consider(k)
		}
	} else {
		for _, want := range keys {
			if k, ok := f.find(want); ok {
				consider(k)
			}
		}
	}
	if strings.TrimSpace(best) == "" {
		return ""
	}
	return best
}

// bodyFromObject handles {"body": {"text": ...}} and THEA-style payloads
// {"subject", "body", "data"}; any other object is shown to the agent as
// indented JSON, which it reads as well as prose.
func bodyFromObject(key string, obj, outer fields, m *Message) string {
	if m.Subject == "" {
		m.Subject = obj.text(m, "subject", "", "subject", "title")
	}
	for _, k := range []string{"text", "body", "raw", "content", "message", "description", "instructions"} {
		if s, ok := obj[k].(string); ok {
			delete(obj, k)
			if len(obj) > 0 {
				outer["_"+key] = map[string]any(obj)
			}
			return s
		}
	}
	if len(obj) == 0 {
		return ""
	}
	return indentJSON(map[string]any(obj))
}

func indentJSON(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

// lifecycle reads the fields agentctl itself adds while a message waits
// for a retry, and the Dream.OS acknowledgement flag.
func (f fields) lifecycle(m *Message) {
	for _, k := range []string{"requires_ack", "ack"} {
		switch v := f[k].(type) {
		case nil:
		case bool:
			m.RequiresAck = m.RequiresAck || v
			delete(f, k)
		case string:
			delete(f, k)
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				m.fallback(k, v, "false", "want true or false")
			}
			m.RequiresAck = m.RequiresAck || b
		default:
			delete(f, k)
			m.fallback(k, v, "false", "want true or false, got "+jsonKind(v))
		}
	}
	for _, t := range []struct {
		key string
		dst **time.Time
	}{{"deliver_after", &m.DeliverAfter}, {"expires_at", &m.ExpiresAt}} {
		if v := f.time(m, t.key, time.Time{}, t.key); !v.IsZero() {
			*t.dst = &v
		}
	}
	if v, ok := f["attempts"]; ok {
		delete(f, "attempts")
		n, isNum := v.(json.Number)
		i, err := n.Int64()
		if !isNum || err != nil || i < 0 || i > math.MaxInt32 {
			m.fallback("attempts", v, "0", "not a count")
		} else {
			m.Attempts = int(i)
		}
	}
	m.LastError = f.text(m, "last_error", "", "last_error")
}
