package cursor

import (
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
	"github.com/agentctl/agentctl/internal/layout"
)

// ErrBadOutput is a turn whose command printed something its preset cannot
// read a reply from. What it printed is kept (see Options.Sessions).
var ErrBadOutput = errors.New("agent command's output could not be read")

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
		name := stamp + layout.OutputSuffix
		if n > 0 {
			name = fmt.Sprintf("%s-%d%s", stamp, n, layout.OutputSuffix)
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
