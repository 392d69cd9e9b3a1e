package dreamos

// inbox.json is where Dream.OS writers put their messages: a JSON array of
// them, one message object, or a container object holding the list under
// one of a few keys. This file reads every such shape, one entry at a time,
// and says what the file holds once its messages are taken out.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// NotInboxJSONError says why a file is not an inbox.json: not a JSON array
// of messages nor one message object, or broken off. It is the reason such
// a file is dead-lettered whole.
type NotInboxJSONError struct{ msg string }

func (e *NotInboxJSONError) Error() string { return e.msg }

// WalkInboxJSON reads an inbox.json from r one entry at a time, so memory
// holds one entry, never the file: each is called with every entry of the
// array in turn (or with the one message object), and may be nil to check
// the file only. tail is the offset of anything but white space after the
// array, or 0. A file of white space only has no entries. Errors that
// make r no inbox.json are *NotInboxJSONError; an entry's own problems are
// for each to judge.
func WalkInboxJSON(r io.ReadSeeker, each func(i int, raw json.RawMessage) error) (entries int, tail int64, err error) {
	base, err := skipBOM(r)
	if err != nil {
		return 0, 0, err
	}
	dec := json.NewDecoder(r)
	dec.UseNumber() // a number too large for a float64 is no error here, just no inbox.json
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, streamError(err)
	}
	switch tok {
	case json.Delim('['):
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return entries, 0, streamError(err)
			}
			if each != nil {
				if err := each(entries, raw); err != nil {
					return entries, 0, err
				}
			}
			entries++
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
			return entries, 0, streamError(err)
		}
	case json.Delim('{'):
		// One message object, or a container of them: read it again whole.
		if _, err := r.Seek(base, io.SeekStart); err != nil {
			return 0, 0, err
		}
		dec = json.NewDecoder(r)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, streamError(err)
		}
		list := []json.RawMessage{raw}
		if _, inner, ok := containerList(raw); ok {
			list = inner
		} else if HoldsNothing(raw) {
			list = nil // "{}", the empty shape given back to one-object writers
		}
		for _, raw := range list {
			if each != nil {
				if err := each(entries, raw); err != nil {
					return entries, 0, err
				}
			}
			entries++
		}
	default:
		return 0, 0, &NotInboxJSONError{"neither a JSON array of messages nor one message object"}
	}
	end := base + dec.InputOffset()
	more, err := nonSpaceFollows(io.MultiReader(dec.Buffered(), r))
	if err != nil {
		return entries, 0, err
	}
	if more {
		tail = end
	}
	return entries, tail, nil
}

// skipBOM leaves r after a UTF-8 byte order mark (PowerShell writes one),
// or at the start, and says where that is.
func skipBOM(r io.ReadSeeker) (int64, error) {
	var bom [3]byte
	n, _ := io.ReadFull(r, bom[:])
	base := int64(0)
	if n == 3 && bom == [3]byte{0xEF, 0xBB, 0xBF} {
		base = 3
	}
	_, err := r.Seek(base, io.SeekStart)
	return base, err
}

// containerKeys are the keys under which Dream.OS writers kept the list of
// messages in an inbox.json that is an object: {"messages": [...],
// "metadata": {...}}.
var containerKeys = []string{"messages", "inbox", "queue", "pending"}

// containerList finds the message list of a container object: its key and
// its entries. A message object is no container.
func containerList(raw json.RawMessage) (key string, list []json.RawMessage, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", nil, false
	}
	for _, k := range containerKeys {
		if v, present := obj[k]; present && json.Unmarshal(v, &list) == nil && list != nil {
			return k, list, true
		}
	}
	return "", nil, false
}

// EmptyShape is what inbox.json holds once its messages are taken out, in
// the shape its writer uses: the container object with its list emptied
// and every other key kept, "{}" where the writer wrote one message
// object (or a broken object), "[]" otherwise.
func EmptyShape(data []byte) []byte {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}))
	if len(data) == 0 || data[0] != '{' {
		return []byte("[]\n")
	}
	var first json.RawMessage // a stale tail after it is no part of the shape
	if json.NewDecoder(bytes.NewReader(data)).Decode(&first) != nil {
		return []byte("{}\n")
	}
	key, _, ok := containerList(first)
	if !ok {
		return []byte("{}\n")
	}
	var obj map[string]json.RawMessage
	json.Unmarshal(first, &obj) // containerList read it
	obj[key] = json.RawMessage("[]")
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return []byte("{}\n")
	}
	return append(out, '\n')
}

// HoldsNothing reports an inbox.json without messages: blank, "[]", "{}"
// or a container whose list is empty.
func HoldsNothing(data []byte) bool {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}))
	switch string(data) {
	case "", "[]", "{}":
		return true
	}
	_, list, ok := containerList(data)
	return ok && len(list) == 0
}

// streamError turns what json.Decoder says about a broken file into a
// NotInboxJSONError; a failure to read is returned as it is.
func streamError(err error) error {
	var syn *json.SyntaxError
	switch {
	case err == nil: // a closing token other than the one expected
		return &NotInboxJSONError{"not valid JSON: the array is not closed properly"}
	case errors.As(err, &syn):
		return &NotInboxJSONError{fmt.Sprintf("not valid JSON: %v (byte %d)", syn, syn.Offset)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &NotInboxJSONError{"not valid JSON: it ends early (truncated?)"}
	}
	return err
}

// nonSpaceFollows reads r to its end, or to its first byte that is not JSON
// white space.
func nonSpaceFollows(r io.Reader) (bool, error) {
	br := bufio.NewReader(r)
	for {
		b, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			return true, nil
		}
	}
}

// InboxJSONEntries reads the entries of an inbox.json or a queue file held
// in memory, in any shape its writers used (an array, a container object,
// one message). tail is the offset of a stale end left by a rewrite in
// place, or 0.
func InboxJSONEntries(data []byte) (entries []json.RawMessage, tail int, err error) {
	_, end, err := WalkInboxJSON(bytes.NewReader(data), func(_ int, raw json.RawMessage) error {
		entries = append(entries, raw)
		return nil
	})
	return entries, int(end), err
}
