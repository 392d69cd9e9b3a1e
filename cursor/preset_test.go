package cursor

import (
	"strings"
	"testing"
)

func TestReadOutput(t *testing.T) {
	tests := []struct {
		name, out           string
		reply, session, bad string
		failed              string
	}{
		{name: "claude json", out: `{"type":"result","subtype":"success","is_error":false,"result":"héllo\n` + "```agentctl\\n{}\\n```" + `","session_id":"0e63-1","total_cost_usd":0.01}` + "\n",
			reply: "héllo\n```agentctl\n{}\n```", session: "0e63-1"},
		{name: "cursor-agent json", out: `{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"result":"","session_id":"c-9","request_id":"r"}`, session: "c-9"},
		{name: "claude verbose array", out: `[{"type":"system","session_id":"s"},{"type":"assistant","message":{}},{"type":"result","result":"done","session_id":"s"}]`,
			reply: "done", session: "s"},
		{name: "stream-json with a banner", out: "Update available!\n{\"type\":\"system\",\"session_id\":\"s\"}\n{\"type\":\"result\",\"result\":\"ok\",\"session_id\":\"s\"}\n",
			reply: "ok", session: "s"},
		{name: "numeric session", out: `{"result":"x","session_id":42}`, reply: "x", session: "42"},
		{name: "no session", out: `{"result":"x"}`, reply: "x"},
		{name: "error object", out: `{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}`, session: "s", failed: "it reported an error (error_max_turns)"},
		{name: "error object with text", out: `{"is_error":true,"result":"budget exceeded"}`, failed: "it reported an error: budget exceeded"},
		{name: "empty", out: " \n", bad: "printed nothing"},
		{name: "text", out: "Hello, I am a model.", bad: "not JSON"},
		{name: "cut off", out: `Warning: x` + "\n" + `{"type": "result", "result": "cut sh`, bad: "not JSON"},
		{name: "no result field", out: `{"type":"result","text":"x"}`, bad: `no JSON object in it has a "result" field`},
		{name: "result not a string", out: `{"result":{"text":"x"}}`, bad: `its "result" is an object, not a string`},
		{name: "session not a string", out: `{"result":"x","session_id":["a"]}`, bad: `its "session_id" is an array`},
		{name: "a bare string", out: `"x"`, bad: "not an object but a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readOutput([]byte(tt.out), "claude", "result", "session_id")
			if tt.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err = %v, want one containing %q", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.reply != tt.reply || got.session != tt.session || got.failed != tt.failed {
				t.Errorf("got %+v, want reply %q session %q failed %q", got, tt.reply, tt.session, tt.failed)
			}
		})
	}
}

// Whatever a command prints, reading it ends in a reply or an error.
func FuzzReadOutput(f *testing.F) {
	for _, seed := range []string{`{"result":"x","session_id":"s"}`, `[{"result":1}]`, "a\n{\"result\":\"x\"}\n{", `{"is_error":true}`, `null`, "[]", "{\"result\":\"\\ud800\"}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, out string) {
		r, err := readOutput([]byte(out), "claude", "result", "session_id")
		if err == nil && r.failed == "" && !strings.Contains(out, "result") {
			t.Errorf("a reply %+v from output without a result field: %q", r, out)
		}
	})
}
