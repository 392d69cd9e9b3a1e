package mcp

import (
	"context"
	"sync"
	"testing"
)

// A request's id is matched with its answer's as the SDK reads both: a
// client's 1.0, 1e0 or "\u0061b" is answered as 1 or "ab", and the end of
// input must not wait for ever on an answer it already has.
func TestAnswersMatchRequestsWrittenAnotherWay(t *testing.T) {
	for request, answer := range map[string]string{
		`1.0`: `1`, `1e0`: `1`, `7`: `7`, `"\u0061b"`: `"ab"`, `"x"`: `"x"`,
	} {
		p := &pending{ids: map[string]bool{}, ctx: context.Background()}
		p.cond = sync.NewCond(&p.mu)
		p.note([]byte(`{"jsonrpc":"2.0","id":`+request+`,"method":"tools/list"}`), true)
		if len(p.ids) != 1 {
			t.Fatalf("request id %s was not noted", request)
		}
		p.note([]byte(`{"jsonrpc":"2.0","id":`+answer+`,"result":{}}`), false)
		if len(p.ids) != 0 {
			t.Errorf("request id %s is still waiting after the answer with id %s", request, answer)
		}
	}
	// Keys the SDK does not read ("ID", "Method") make no request of it.
	p := &pending{ids: map[string]bool{}, ctx: context.Background()}
	p.cond = sync.NewCond(&p.mu)
	p.note([]byte(`{"jsonrpc":"2.0","ID":5,"method":"tools/list"}`), true)
	p.note([]byte(`{"jsonrpc":"2.0","id":7,"Method":"tools/list"}`), true)
	if len(p.ids) != 0 {
		t.Errorf("waiting on requests the SDK does not see: %v", p.ids)
	}
	// Ids the SDK refuses are never waited for: no answer would come.
	p = &pending{ids: map[string]bool{}, ctx: context.Background()}
	p.cond = sync.NewCond(&p.mu)
	for _, id := range []string{`null`, `{"a":1}`, `true`, `[1]`} {
		p.note([]byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`), true)
	}
	if len(p.ids) != 0 {
		t.Errorf("waiting on ids no answer names: %v", p.ids)
	}
}
