package cursor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ErrModelAPI is a turn the agent's command ended because its model
// provider failed (overloaded, rate-limited, refused): the command and its
// session are fine, and the same prompt may well succeed later.
var ErrModelAPI = errors.New("the agent's model API failed")

// Usage is what a turn cost, as far as the agent's command reports it;
// zero where it says nothing.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	CostUSD          float64
	// Model is the model the command says it used.
	Model string
}

// streamRead is what a preset's output said, read so far.
type streamRead struct {
	reply   string
	session string
	// done: the output holds the turn's result (or its failure), so the
	// command has nothing more to say.
	done bool
	// failed is the command's own report of an error, in words; apiFailed
	// says the model provider was the cause.
	failed    string
	apiFailed bool
	usage     Usage
	hasUsage  bool
}

// outputReader reads one JSON object of a preset's output at a time.
type outputReader interface {
	object(o map[string]any, r *streamRead) error
	// missing says what output without a result lacks.
	missing() string
}

// newOutputReader is the reader of a preset's output.
func newOutputReader(preset, replyField, sessionField string) outputReader {
	switch preset {
	case "codex":
		return codexReader{}
	case "gemini":
		return &geminiReader{}
	}
	return resultReader{replyField: replyField, sessionField: sessionField}
}

// lineReader takes a command's stdout as it comes, keeps all of it, and
// reads each line that is a JSON object; result is closed once a line
// completed the turn.
type lineReader struct {
	mu      sync.Mutex
	rd      outputReader
	raw     bytes.Buffer // the first maxOutput bytes of it
	rawCut  bool         // more came than raw keeps
	partial []byte
	read    streamRead
	objects int   // JSON objects read
	err     error // a result object that could not be read
	result  chan struct{}
}

func newLineReader(rd outputReader) *lineReader {
	return &lineReader{rd: rd, result: make(chan struct{})}
}

func (l *lineReader) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A long agentic turn prints every tool's output: all of it is read,
	// line by line, but only the head is kept, for a failure's record.
	if keep := maxOutput - int64(l.raw.Len()); int64(len(p)) <= keep {
		l.raw.Write(p)
	} else {
		l.raw.Write(p[:max(keep, 0)])
		l.rawCut = true
	}
	if int64(len(l.partial)+len(p)) > maxOutput {
		// One line this long is no event of a preset's stream.
		l.partial, l.rawCut = l.partial[:0], true
		return len(p), nil
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// line reads one line; text that is not a JSON object (a warning on
// stdout, garbage after the result) is passed over.
func (l *lineReader) line(b []byte) {
	b = bytes.TrimSpace(b)
	if l.read.done || l.err != nil || len(b) == 0 || b[0] != '{' {
		return
	}
	var o map[string]any
	if decodeJSON(b, &o) != nil {
		return
	}
	l.take(o)
}

func (l *lineReader) take(o map[string]any) {
	l.objects++
	if err := l.rd.object(o, &l.read); err != nil {
		l.err = err
	}
	if l.read.done || l.err != nil {
		close(l.result)
	}
}

// finish reads what the command printed once it ended: the last line
// without a newline, or, if no line completed the turn, the whole output
// as one JSON document (an object, or an array of events, printed over
// several lines).
func (l *lineReader) finish() (streamRead, []byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.raw.Bytes())
	if !l.read.done && l.err == nil {
		l.line(l.partial)
	}
	if !l.read.done && l.err == nil && l.rawCut {
		return l.read, out, fmt.Errorf("%w: it printed more than %d bytes without a line that ends the turn", errPastCap, maxOutput)
	}
	if !l.read.done && l.err == nil {
		trimmed := bytes.TrimSpace(out)
		var whole any
		if decodeJSON(trimmed, &whole) == nil {
			switch v := whole.(type) {
			case map[string]any:
				l.take(v)
			case []any:
				for _, e := range v {
					if o, ok := e.(map[string]any); ok && !l.read.done {
						l.take(o)
					}
				}
			default:
				return l.read, out, fmt.Errorf("it printed JSON that is not an object but %s", jsonKind(whole))
			}
		}
	}
	switch {
	case l.err != nil:
		return l.read, out, l.err
	case l.read.done:
		return l.read, out, nil
	case len(bytes.TrimSpace(out)) == 0:
		return l.read, out, errors.New("it printed nothing")
	}
	if l.objects == 0 {
		return l.read, out, errors.New("it is not JSON")
	}
	return l.read, out, errors.New(l.rd.missing())
}

// readOutput reads a preset's whole output at once.
func readOutput(out []byte, preset, replyField, sessionField string) (streamRead, error) {
	l := newLineReader(newOutputReader(preset, replyField, sessionField))
	l.Write(out)
	r, _, err := l.finish()
	return r, err
}

// resultReader reads the result object of claude -p and cursor-agent -p
// (and a generic preset's): the object holding the reply field, or
// reporting is_error. With stream-json the system init line names the
// session first.
type resultReader struct{ replyField, sessionField string }

func (rr resultReader) missing() string {
	return fmt.Sprintf("no JSON object in it has a %q field", rr.replyField)
}

func (rr resultReader) object(o map[string]any, r *streamRead) error {
	if s, ok := o[rr.sessionField].(string); ok && s != "" && r.session == "" {
		r.session = s
	}
	if m, ok := o["model"].(string); ok && o["type"] == "system" {
		r.usage.Model = m
	}
	_, hasReply := o[rr.replyField]
	if !hasReply && o["is_error"] != true {
		return nil
	}
	r.done = true
	switch s := o[rr.sessionField].(type) {
	case nil:
	case string:
		r.session = s
	case json.Number:
		r.session = s.String()
	default:
		return fmt.Errorf("its %q is %s, not a string", rr.sessionField, jsonKind(s))
	}
	rr.usage(o, r)
	reply, isString := o[rr.replyField].(string)
	if o["is_error"] == true {
		r.failed = "it reported an error"
		if status, ok := o["api_error_status"].(json.Number); ok {
			r.apiFailed = true
			r.failed = "its model API answered HTTP " + status.String()
		} else if sub, ok := o["subtype"].(string); ok && sub != "" && sub != "success" {
			r.failed += " (" + sub + ")"
		}
		if reply != "" {
			r.failed += ": " + reply
		}
		return nil
	}
	if !isString {
		return fmt.Errorf("its %q is %s, not a string", rr.replyField, jsonKind(o[rr.replyField]))
	}
	r.reply = reply
	return nil
}

// usage reads Claude Code's usage and total_cost_usd, and the model from
// modelUsage.
func (resultReader) usage(o map[string]any, r *streamRead) {
	u, ok := o["usage"].(map[string]any)
	if !ok {
		return
	}
	r.hasUsage = true
	r.usage.InputTokens = num(u["input_tokens"])
	r.usage.OutputTokens = num(u["output_tokens"])
	r.usage.CacheReadTokens = num(u["cache_read_input_tokens"])
	r.usage.CacheWriteTokens = num(u["cache_creation_input_tokens"])
	if c, ok := o["total_cost_usd"].(json.Number); ok {
		r.usage.CostUSD, _ = c.Float64()
	}
	if mu, ok := o["modelUsage"].(map[string]any); ok && len(mu) == 1 {
		for m := range mu {
			r.usage.Model = m
		}
	}
}

// codexReader reads codex exec --json: thread.started names the session,
// each item.completed of an agent_message is the reply so far (the last
// one is the turn's), and turn.completed or turn.failed ends the turn.
type codexReader struct{}

func (codexReader) missing() string { return "it has no turn.completed or turn.failed event" }

func (codexReader) object(o map[string]any, r *streamRead) error {
	switch o["type"] {
	case "thread.started":
		if id, ok := o["thread_id"].(string); ok {
			r.session = id
		}
	case "item.completed":
		item, _ := o["item"].(map[string]any)
		if item["type"] == "agent_message" {
			text, ok := item["text"].(string)
			if !ok {
				return fmt.Errorf("an agent_message's text is %s, not a string", jsonKind(item["text"]))
			}
			r.reply = text
		}
	case "turn.completed":
		r.done = true
		if u, ok := o["usage"].(map[string]any); ok {
			r.hasUsage = true
			r.usage.InputTokens = num(u["input_tokens"])
			r.usage.OutputTokens = num(u["output_tokens"])
			r.usage.CacheReadTokens = num(u["cached_input_tokens"])
			r.usage.CacheWriteTokens = num(u["cache_write_input_tokens"])
		}
	case "turn.failed":
		// Codex fails a turn when its model stream fails for good (its
		// own retries spent); a tool's failure is the model's to handle.
		r.done, r.apiFailed = true, true
		r.failed = "its turn failed"
		if e, ok := o["error"].(map[string]any); ok {
			if m, ok := e["message"].(string); ok {
				r.failed += ": " + m
			}
		}
	}
	return nil
}

// geminiReader reads gemini -p with --output-format stream-json (init,
// message deltas, result) or json (one object with session_id, response,
// stats and, on failure, error).
type geminiReader struct {
	streamed bool
	text     strings.Builder // the assistant's message, its deltas joined
}

func (g *geminiReader) missing() string {
	return "it has neither a result event nor an object with a response"
}

func (g *geminiReader) object(o map[string]any, r *streamRead) error {
	switch o["type"] {
	case "init":
		g.streamed = true
		if id, ok := o["session_id"].(string); ok {
			r.session = id
		}
		if m, ok := o["model"].(string); ok {
			r.usage.Model = m
		}
		return nil
	case "message":
		if o["role"] == "assistant" {
			text, _ := o["content"].(string)
			if o["delta"] != true {
				g.text.Reset()
			}
			if int64(g.text.Len()+len(text)) > maxOutput {
				return fmt.Errorf("%w: its reply passed %d bytes", errPastCap, maxOutput)
			}
			g.text.WriteString(text)
			r.reply = "" // set whole at the result, not rebuilt at every delta
		}
		return nil
	case "result":
		r.done = true
		if g.text.Len() > 0 {
			r.reply = g.text.String()
		}
		if st, ok := o["stats"].(map[string]any); ok {
			r.hasUsage = true
			r.usage.InputTokens = num(st["input_tokens"])
			r.usage.OutputTokens = num(st["output_tokens"])
			r.usage.CacheReadTokens = num(st["cached"])
		}
		if o["status"] != "success" {
			r.failed = "it reported an error"
			if e, ok := o["error"].(map[string]any); ok {
				r.failed, r.apiFailed = geminiError(e)
			}
		}
		return nil
	}
	if g.streamed {
		return nil
	}
	// The json format: one object.
	if id, ok := o["session_id"].(string); ok {
		r.session = id
	}
	if e, ok := o["error"].(map[string]any); ok {
		r.done = true
		r.failed, r.apiFailed = geminiError(e)
		return nil
	}
	resp, ok := o["response"]
	if !ok {
		return nil
	}
	r.done = true
	text, ok := resp.(string)
	if !ok {
		return fmt.Errorf("its %q is %s, not a string", "response", jsonKind(resp))
	}
	r.reply = text
	geminiStats(o, r)
	return nil
}

// geminiError words Gemini CLI's error object; a code that is an HTTP
// status of the provider makes it an API failure (the json format's).
// The stream-json format gives no code, but marks the provider's errors
// in the message.
func geminiError(e map[string]any) (string, bool) {
	msg, _ := e["message"].(string)
	code := num(e["code"])
	words := "it reported an error"
	api := false
	switch {
	case code >= 400 && code < 600:
		words, api = fmt.Sprintf("its model API answered HTTP %d", code), true
	case strings.HasPrefix(msg, "[API Error"):
		words, api = "its model API failed", true
	}
	if msg != "" {
		words += ": " + strings.TrimSpace(msg)
	}
	return words, api
}

// geminiStats adds up the json format's tokens over its models; the
// model playing the main role is the turn's.
func geminiStats(o map[string]any, r *streamRead) {
	st, _ := o["stats"].(map[string]any)
	models, _ := st["models"].(map[string]any)
	for name, v := range models {
		m, _ := v.(map[string]any)
		tok, _ := m["tokens"].(map[string]any)
		r.hasUsage = true
		r.usage.InputTokens += num(tok["prompt"])
		r.usage.OutputTokens += num(tok["candidates"])
		r.usage.CacheReadTokens += num(tok["cached"])
		if roles, ok := m["roles"].(map[string]any); ok && roles["main"] != nil {
			r.usage.Model = name
		}
	}
}

// num reads a JSON number as an integer; anything else is 0.
func num(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return int64(f)
}
