package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the transport of `agentctl mcp`: newline-delimited JSON-RPC on
// the process's standard input and output. A client may write its calls
// and close its end at once (a script piping requests in); the server
// would then stop at the end of input with those calls dropped or cut
// short. So the end of input is held back until every request read has
// been answered: a call the client made is carried out, whatever it does
// with its end of the pipe. ctx ending lets the end through regardless.
func Stdio(ctx context.Context, in io.Reader, out io.Writer) sdk.Transport {
	p := &pending{ids: map[string]bool{}, ctx: ctx}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		<-ctx.Done()
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	return &sdk.IOTransport{
		Reader: io.NopCloser(&heldEOF{r: bufio.NewReader(in), p: p}),
		Writer: nopCloser{&answers{w: out, p: p}},
	}
}

// pending are the ids of requests read and not yet answered.
type pending struct {
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]bool
	ctx  context.Context
}

// rpc is what the transport looks at in a message: a request has a method
// and an id, a response an id only. It reads the keys exactly as the SDK
// does ("id", not "ID"): encoding/json would match them in any case, and
// wait for an answer the SDK never gives.
type rpc struct {
	ID     json.RawMessage
	Method string
}

func (m *rpc) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	m.ID = fields["id"]
	if method, ok := fields["method"]; ok {
		return json.Unmarshal(method, &m.Method)
	}
	return nil
}

// note records the requests in one line (a message or a batch).
func (p *pending) note(line []byte, request bool) {
	var msgs []rpc
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		json.Unmarshal(line, &msgs)
	} else {
		var m rpc
		if json.Unmarshal(line, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range msgs {
		id, ok := idKey(m.ID)
		if !ok {
			continue
		}
		switch {
		case request && m.Method != "":
			p.ids[id] = true
		case !request && m.Method == "":
			delete(p.ids, id)
		}
	}
	p.cond.Broadcast()
}

// idKey is the id as the SDK takes it (jsonrpc2.MakeID): a number as the
// integer it truncates to, a string as its decoded value, so that a
// request's "1.0" or "\u0061" matches the "1" or "a" of its answer. An id
// the SDK refuses (null, an object) is none: no answer would clear it.
func idKey(raw json.RawMessage) (string, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case float64:
		return "n:" + strconv.FormatInt(int64(v), 10), true
	case string:
		return "s:" + v, true
	}
	return "", false
}

// drained waits until every request read has its answer, or ctx ends.
func (p *pending) drained() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ids) > 0 && p.ctx.Err() == nil {
		p.cond.Wait()
	}
}

// heldEOF reads whole lines, noting the requests among them, and holds
// the end of input back until they are answered.
type heldEOF struct {
	r    *bufio.Reader
	p    *pending
	rest []byte
}

func (h *heldEOF) Read(b []byte) (int, error) {
	if len(h.rest) == 0 {
		line, err := h.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				h.p.drained()
			}
			return 0, err
		}
		h.p.note(line, true)
		h.rest = line
	}
	n := copy(b, h.rest)
	h.rest = h.rest[n:]
	return n, nil
}

// answers passes the server's output on, noting the responses in it. The
// SDK writes one whole message per Write.
type answers struct {
	w io.Writer
	p *pending
}

func (a *answers) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	if err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			a.p.note(line, false)
		}
	}
	return n, err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
