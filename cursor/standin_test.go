//go:build linux

package cursor

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/standinlog"
)

// What the tests of every driver share about the stand-in chats: the
// timing shapes they play and the log their recorders keep.

// shape is how a stand-in model answers in time. Both stand-ins (the Tk
// window and the Chromium page) take the same shapes.
type shape struct {
	name       string
	noEcho     bool    // the user's message is not shown in the transcript
	think      float64 // seconds from Enter to the reply's start
	chunks     int     // the reply arrives in this many pieces
	pause      float64 // seconds between pieces
	longPause  float64 // one pause this long halfway, the model still working
	spinner    bool    // an animated Generating line in the transcript while thinking
	replyBytes int     // the reply is padded to this size
}

// classic is the shape the stand-in always had: echo, think, short chunks.
var classic = shape{name: "classic", think: 0.8, chunks: 3, pause: 0.25}

// shapes are the timing shapes every stand-in must read back exactly.
var shapes = []shape{
	classic,
	{name: "no-echo-late", noEcho: true, think: 0.3, chunks: 4, pause: 0.1},
	{name: "instant", noEcho: true, think: 0, chunks: 1},
	{name: "instant-echo", think: 0, chunks: 1},
	{name: "long-pause", think: 0.3, chunks: 6, pause: 0.1, longPause: 2.5},
	{name: "spinner", think: 1.5, chunks: 3, pause: 0.1, spinner: true},
	{name: "long-think", noEcho: true, think: 6, chunks: 2, pause: 0.1},
	{name: "50KB", think: 0.2, chunks: 10, pause: 0.05, replyBytes: 50 * 1024},
}

// shapePrompt carries what prompts contain: Unicode, emoji, tabs, CRLF,
// trailing spaces and a code fence.
func shapePrompt(s shape) string {
	return fmt.Sprintf("shape %s: héllo 😀\tcol2   \r\nsecond line\n```go\nfunc f() {\n\treturn \"x\"\n}\n```\n", s.name)
}

// pageQuery is the chat page's URL query for a page titled title that
// plays s and ignores the first ignoreSubmits submissions.
func pageQuery(title string, s shape, ignoreSubmits int) url.Values {
	if s.name == "" {
		s = classic
	}
	q := url.Values{"title": {title}}
	q.Set("think", ftoa(s.think))
	q.Set("chunks", itoa(max(s.chunks, 1)))
	q.Set("pause", ftoa(s.pause))
	q.Set("long_pause", ftoa(s.longPause))
	q.Set("reply_bytes", itoa(s.replyBytes))
	q.Set("ignore_submits", itoa(ignoreSubmits))
	if s.noEcho {
		q.Set("no_echo", "1")
	}
	if s.spinner {
		q.Set("spinner", "1")
	}
	return q
}

// recordedEvents reads what a stand-in logged: prompts it received and
// replies it finished, or for a decoy, every key and paste.
func recordedEvents(t testing.TB, path string) []map[string]any {
	t.Helper()
	events, err := standinlog.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// texts are the texts of a stand-in's events of one kind.
func texts(events []map[string]any, kind string) []string { return standinlog.Texts(events, kind) }

func clip(s string) string {
	if len(s) > 300 {
		return s[:150] + " … " + s[len(s)-150:]
	}
	return s
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
