package mailbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// notInboxJSONError says why a file is not an inbox.json: not a JSON array
// of messages nor one message object, or broken off. It is the reason such
// a file is dead-lettered whole.
type notInboxJSONError struct{ msg string }

func (e *notInboxJSONError) Error() string { return e.msg }

// walkInboxJSON reads an inbox.json from r one entry at a time, so memory
// holds one entry, never the file: each is called with every entry of the
// array in turn (or with the one message object), and may be nil to check
// the file only. tail is the offset of anything but white space after the
// array, or 0. A file of white space only has no entries. Errors that
// make r no inbox.json are *notInboxJSONError; an entry's own problems are
// for each to judge.
func walkInboxJSON(r io.ReadSeeker, each func(i int, raw json.RawMessage) error) (entries int, tail int64, err error) {
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
		// One message object: read it again whole.
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return 0, 0, err
		}
		dec = json.NewDecoder(r)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, streamError(err)
		}
		if each != nil {
			if err := each(0, raw); err != nil {
				return 0, 0, err
			}
		}
		entries = 1
	default:
		return 0, 0, &notInboxJSONError{"neither a JSON array of messages nor one message object"}
	}
	end := dec.InputOffset()
	more, err := nonSpaceFollows(io.MultiReader(dec.Buffered(), r))
	if err != nil {
		return entries, 0, err
	}
	if more {
		tail = end
	}
	return entries, tail, nil
}

// streamError turns what json.Decoder says about a broken file into a
// notInboxJSONError; a failure to read is returned as it is.
func streamError(err error) error {
	var syn *json.SyntaxError
	switch {
	case err == nil: // a closing token other than the one expected
		return &notInboxJSONError{"not valid JSON: the array is not closed properly"}
	case errors.As(err, &syn):
		return &notInboxJSONError{fmt.Sprintf("not valid JSON: %v (byte %d)", syn, syn.Offset)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &notInboxJSONError{"not valid JSON: it ends early (truncated?)"}
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
