package cursor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// ErrBadOutput is a turn whose command printed something its preset cannot
// read a reply from. What it printed is kept (see Options.Sessions).
var ErrBadOutput = errors.New("agent command's output could not be read")

// agentOutput is the result object a preset's command printed, read.
type agentOutput struct {
	reply   string
	session string
	// failed is the command's own report of an error (is_error), in words.
	failed string
}

// readOutput finds the result in what a preset's command printed: one JSON
// object (claude -p and cursor-agent -p with --output-format json), a JSON
// array of events (claude with --verbose), or one JSON object per line
// (stream-json), where the last object holding the reply field, or
// reporting an error, is the result. Lines that are not JSON around it (a
// warning printed to stdout) are passed over.
func readOutput(out []byte, replyField, sessionField string) (agentOutput, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return agentOutput{}, errors.New("it printed nothing")
	}
	var whole any
	wholeErr := decodeJSON(trimmed, &whole)
	var candidates []map[string]any
	switch v := whole.(type) {
	case map[string]any:
		candidates = []map[string]any{v}
	case []any:
		for _, e := range v {
			if o, ok := e.(map[string]any); ok {
				candidates = append(candidates, o)
			}
		}
	default:
		if wholeErr == nil {
			return agentOutput{}, fmt.Errorf("it printed JSON that is not an object but %s", jsonKind(whole))
		}
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(nil, len(trimmed)+1)
		for sc.Scan() {
			var o map[string]any
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] == '{' && decodeJSON(line, &o) == nil {
				candidates = append(candidates, o)
			}
		}
	}
	for i := len(candidates) - 1; i >= 0; i-- {
		o := candidates[i]
		_, hasReply := o[replyField]
		if !hasReply && o["is_error"] != true {
			continue
		}
		return resultOf(o, replyField, sessionField)
	}
	if wholeErr != nil && len(candidates) == 0 {
		return agentOutput{}, fmt.Errorf("it is not JSON: %v", wholeErr)
	}
	return agentOutput{}, fmt.Errorf("no JSON object in it has a %q field", replyField)
}

// resultOf reads the result object o.
func resultOf(o map[string]any, replyField, sessionField string) (agentOutput, error) {
	var r agentOutput
	switch s := o[sessionField].(type) {
	case nil:
	case string:
		r.session = s
	case json.Number:
		r.session = s.String()
	default:
		return r, fmt.Errorf("its %q is %s, not a string", sessionField, jsonKind(s))
	}
	reply, isString := o[replyField].(string)
	if o["is_error"] == true {
		r.failed = "it reported an error"
		// Claude Code says "success" of a turn the API refused.
		if sub, ok := o["subtype"].(string); ok && sub != "" && sub != "success" {
			r.failed += " (" + sub + ")"
		}
		if reply != "" {
			r.failed += ": " + reply
		}
		return r, nil
	}
	if !isString {
		return r, fmt.Errorf("its %q is %s, not a string", replyField, jsonKind(o[replyField]))
	}
	r.reply = reply
	return r, nil
}

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more follows the first JSON value")
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// excerptMax bounds how much of a command's output an error quotes.
const excerptMax = 300

// excerpt quotes the start of out for an error message.
func excerpt(out []byte) string {
	if len(out) <= excerptMax {
		return strconv.Quote(string(out))
	}
	return strconv.Quote(string(out[:excerptMax])) + fmt.Sprintf("… (%d bytes)", len(out))
}

// keepOutput saves out in dir under a name of its own and returns the
// file's path: what a command printed in a turn that gave no reply is
// never thrown away.
func keepOutput(dir string, out []byte, now time.Time) (string, error) {
	if err := atomicfile.MkdirAll(dir); err != nil {
		return "", err
	}
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	for n := 0; ; n++ {
		name := stamp + ".txt"
		if n > 0 {
			name = fmt.Sprintf("%s-%d.txt", stamp, n)
		}
		path := filepath.Join(dir, name)
		err := atomicfile.Create(path, out)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return "", err
		}
	}
}

// withOutput adds to err what the command printed: where it is kept, or,
// when it cannot be kept, its start.
func withOutput(err error, keepDir string, out []byte) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return err
	}
	if keepDir == "" {
		return fmt.Errorf("%w; it printed %s", err, excerpt(out))
	}
	path, kerr := keepOutput(keepDir, out, time.Now())
	if kerr != nil {
		return fmt.Errorf("%w; it printed %s, which could not be kept: %v", err, excerpt(out), kerr)
	}
	return fmt.Errorf("%w; what it printed is kept in %s", err, path)
}

// substituteSession puts the session id into the resume arguments.
func substituteSession(resume []string, session string) []string {
	out := make([]string, len(resume))
	for i, a := range resume {
		out[i] = strings.ReplaceAll(a, SessionPlaceholder, session)
	}
	return out
}
