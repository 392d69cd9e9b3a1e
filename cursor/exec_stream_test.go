package cursor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What the real tools printed, recorded against fixtures/fakemodel
// (testdata/agentout), is read into the reply, the session, the usage
// and, for a failed turn, words that name the model API.
func TestReadRecordedAgentOutput(t *testing.T) {
	tests := []struct {
		file, preset   string
		reply, session string
		failed         string
		api            bool
		input, output  int64
		cost           bool
		model          string
	}{
		{file: "claude.jsonl", preset: "claude", reply: `fakemodel turn 1; first prompt: "claude sample"`,
			session: "4d146d99-a6ab-4998-bd3c-a709b7d06ef5", input: 1, output: 1, cost: true, model: "claude-opus-4-8[1m]"},
		{file: "claude-failed.jsonl", preset: "claude", failed: "its model API answered HTTP 529: API Error: 529", api: true},
		{file: "codex.jsonl", preset: "codex", reply: `fakemodel turn 1; first prompt: "codex sample"`,
			session: "01a217cb-ed4c-7ea1-8f8a-efafedfd5438", input: 5003, output: 12},
		{file: "codex-failed.jsonl", preset: "codex", failed: "its turn failed: unexpected status 503", api: true},
		{file: "gemini.jsonl", preset: "gemini", reply: `fakemodel turn 1; first prompt: "gemini sample"`, input: 1, output: 1},
		{file: "gemini.json", preset: "gemini", reply: `fakemodel turn 1; first prompt: "gemini sample"`, input: 1, output: 1, model: "gemini-3.8-flash"},
		{file: "gemini-failed.jsonl", preset: "gemini", failed: "its model API failed: [API Error: fakemodel: HTTP 503]", api: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "agentout", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := readOutput(out, tt.preset, "result", "session_id")
			if err != nil {
				t.Fatal(err)
			}
			if !r.done || r.reply != tt.reply || (tt.session != "" && r.session != tt.session) || r.session == "" {
				t.Errorf("read %+v, want done, reply %q, session %q", r, tt.reply, tt.session)
			}
			if !strings.HasPrefix(r.failed, tt.failed) || (tt.failed == "") != (r.failed == "") || r.apiFailed != tt.api {
				t.Errorf("failed = %q (api %v), want %q… (api %v)", r.failed, r.apiFailed, tt.failed, tt.api)
			}
			if strings.Contains(r.failed, "success") {
				t.Errorf("a failure worded with its subtype success: %q", r.failed)
			}
			if tt.failed != "" {
				return
			}
			u := r.usage
			if !r.hasUsage || u.InputTokens < tt.input || u.OutputTokens < tt.output || (tt.cost && u.CostUSD <= 0) || (tt.model != "" && u.Model != tt.model) {
				t.Errorf("usage = %+v, want at least %d in, %d out, cost %v, model %q", u, tt.input, tt.output, tt.cost, tt.model)
			}
		})
	}
}

// A result line followed by garbage (a crash dump on stdout) is the
// turn's result.
func TestReadResultBeforeGarbage(t *testing.T) {
	out := "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"kept\",\"session_id\":\"s1\"}\n\x00\x01 panic: {\"result\": cut"
	r, err := readOutput([]byte(out), "claude", "result", "session_id")
	if err != nil || r.reply != "kept" || r.session != "s1" {
		t.Fatalf("read %+v, %v; want the reply before the garbage", r, err)
	}
}
