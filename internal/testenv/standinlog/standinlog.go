// Package standinlog reads the event logs that the stand-in chats in
// fixtures/ write (the Tk window, the Chromium page's recorder and the
// Win32 window): one JSON object per line, a prompt received or a reply
// finished, or for a decoy, every key and paste it got. Tests on both sides
// of the Wine boundary read them the same way.
//
// It owns only the reading; it never starts a stand-in.
package standinlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// maxLine bounds one logged event: a 50 KB prompt, escaped, fits many
// times over.
const maxLine = 4 << 20

// Read returns the logged events in order; a log not written yet holds
// none.
func Read(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("bad log line %q in %s: %w", sc.Text(), path, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Texts are the texts of the events of one kind ("prompt", "replied").
func Texts(events []map[string]any, kind string) []string {
	var out []string
	for _, e := range events {
		if e["event"] == kind {
			text, _ := e["text"].(string)
			out = append(out, text)
		}
	}
	return out
}
