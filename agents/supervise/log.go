package supervise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

// tailLines is how many of a child's last lines a crash notice quotes.
const tailLines = 10

// maxLine bounds one log line, so that a child writing without newlines
// cannot grow the supervisor's memory.
const maxLine = 64 * 1024

// combined is the one log every seat writes to; whole lines only, so lines
// from different children never interleave. As text, every line follows
// its agent's name; as JSON (the runners' --log-format json), the
// runners' objects pass as they are, since they name their agent, and
// anything else becomes an object that does.
type combined struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	json  bool
	// Clock stamps the supervisor's own JSON lines; clock.System when nil.
	Clock clock.Clock
}

// line is a line a runner wrote.
func (c *combined) line(agent, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.json:
		fmt.Fprintf(c.w, "%-*s | %s\n", c.width, agent, text)
	case json.Valid([]byte(text)) && strings.HasPrefix(text, "{"):
		fmt.Fprintln(c.w, text)
	default:
		c.object(map[string]any{"agent": agent, "event": "output", "message": text})
	}
}

// say is a line of the supervisor's own about agent.
func (c *combined) say(agent, text string) {
	if !c.json {
		c.line(agent, "up: "+text)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.object(map[string]any{"agent": agent, "event": "up", "message": text})
}

func (c *combined) object(fields map[string]any) {
	fields["level"], fields["time"] = "info", clock.Or(c.Clock).Now().UTC().Format(time.RFC3339)
	data, _ := json.Marshal(fields) // strings and a time: cannot fail
	fmt.Fprintf(c.w, "%s\n", data)
}

func (c *combined) writer(agent string) *lineWriter {
	return &lineWriter{out: c, agent: agent}
}

// lineWriter cuts a child's output into lines for the combined log and
// keeps the last few for a crash notice. Stdout and stderr share one.
type lineWriter struct {
	mu    sync.Mutex
	out   *combined
	agent string
	buf   []byte
	last  []string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) >= maxLine {
				i = maxLine
			} else {
				return len(p), nil
			}
		}
		w.emit(string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[min(i+1, len(w.buf)):]
	}
}

func (w *lineWriter) emit(s string) {
	w.out.line(w.agent, s)
	w.last = append(w.last, s)
	if len(w.last) > tailLines {
		w.last = w.last[1:]
	}
}

// flush writes a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}

func (w *lineWriter) tail() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.last...)
}
