package cursor

import (
	"context"
	"errors"

	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fixtures under testdata/apierrors are what the real tools printed
// against a model API answering 429, 529 or 503, 401, or nothing
// (connection refused): Claude Code 2.1.197 (-p --output-format json),
// Codex 0.169 (exec --json) and Gemini CLI 0.61 (-p -o json); the
// -stream- ones are what the claude and gemini presets print (their
// stream-json) against fakemodel's 429 naming 7 s and its outage, the
// tools' own retries off, as agents/realcli_failures_test.go runs them.
// Each goes
// through a real turn of a stand-in command printing it, so that what the
// driver keeps of stderr is what is classified.
func TestExecClassifiesTheToolsAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		fixture    string
		kind       FailureKind
		status     int
		retryAfter time.Duration
	}{
		{"claude-429", FailureRateLimited, 429, 0},
		{"claude-529", FailureOutage, 529, 0},
		{"claude-401", FailureAuth, 401, 0},
		{"claude-refused", FailureOutage, 0, 0},
		{"codex-429", FailureRateLimited, 429, 0},
		{"codex-503", FailureOutage, 503, 0},
		{"codex-401", FailureAuth, 401, 0},
		{"codex-refused", FailureOutage, 0, 0},
		{"gemini-429", FailureRateLimited, 429, 30 * time.Second},
		{"gemini-503", FailureOutage, 503, 0},
		{"gemini-401", FailureAuth, 401, 0},
		{"gemini-refused", FailureOutage, 0, 0},
		// Claude Code passes on the server's message, not its retry-after.
		{"claude-stream-429", FailureRateLimited, 429, 0},
		{"gemini-stream-429", FailureRateLimited, 429, 7 * time.Second},
		{"gemini-stream-503", FailureOutage, 503, 0},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			base, err := filepath.Abs(filepath.Join("testdata", "apierrors", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `cat >/dev/null; cat "$1.stdout" 2>/dev/null; cat "$1.stderr" >&2 2>/dev/null; exit 1`, "sh", base}})
			_, err = d.Run(context.Background(), Turn{Prompt: "x"})
			if !errors.Is(err, ErrExecFailed) {
				t.Fatalf("err = %v, want a failed command", err)
			}
			f := FailureOf(err)
			if f.Kind != tc.kind || f.Status != tc.status || f.RetryAfter != tc.retryAfter {
				t.Errorf("FailureOf = %+v (%s), want %s, status %d, retry after %s", f, f.Kind, tc.kind, tc.status, tc.retryAfter)
			}
		})
	}
}

// With the claude preset, an API error reads as what it is: no
// "(success)", Claude Code's subtype of such a result.
func TestExecSaysAnAPIErrorPlainly(t *testing.T) {
	base, _ := filepath.Abs(filepath.Join("testdata", "apierrors", "claude-529"))
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `cat >/dev/null; cat "$1.stdout"; exit 1`, "sh", base},
		Preset: "claude", ReplyField: "result", SessionField: "session_id"})
	_, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if err == nil || strings.Contains(err.Error(), "(success)") || !strings.Contains(err.Error(), "model API answered HTTP 529: API Error: 529 Overloaded") {
		t.Errorf("err = %v", err)
	}
	if FailureOf(err).Kind != FailureOutage {
		t.Errorf("FailureOf = %+v", FailureOf(err))
	}
}

func TestClassifyExec(t *testing.T) {
	reset := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, stdout, stderr string
		want                 Failure
	}{
		{"nothing known", "", "error: no such file", Failure{}},
		{"a tool error in Claude Code's result", `{"type":"result","subtype":"error_max_turns","is_error":true,"api_error_status":null,"result":"stopped"}`, "", Failure{}},
		{"Anthropic error type", "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Failure{Kind: FailureOutage}},
		{"retry-after header", "", "HTTP 429 Too Many Requests\nretry-after: 12", Failure{Kind: FailureRateLimited, Status: 429, RetryAfter: 12 * time.Second}},
		{"try again in minutes", "", "Error: rate limit reached; try again in 2 minutes", Failure{Kind: FailureRateLimited, RetryAfter: 2 * time.Minute}},
		{"Claude subscription limit", `{"type":"result","is_error":true,"result":"Claude AI usage limit reached|1796310000"}`, "", Failure{Kind: FailureRateLimited, ResetAt: time.Unix(1796310000, 0).UTC()}},
		{"quota reset time", "", "quota exceeded; resets at " + reset.Format(time.RFC3339), Failure{Kind: FailureRateLimited, ResetAt: reset}},
		{"forbidden", "", "API Error: 403 {\"type\":\"error\",\"error\":{\"type\":\"permission_error\"}}", Failure{Kind: FailureAuth, Status: 403}},
		{"bad gateway", "", "API Error: 502 Bad Gateway", Failure{Kind: FailureOutage, Status: 502}},
	} {
		if got := ClassifyExec([]byte(tc.stdout), []byte(tc.stderr)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Output a preset cannot read is classified as such, so that the runner
// does not pay for the turn again.
func TestExecClassifiesUnreadableOutput(t *testing.T) {
	d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", "cat >/dev/null; echo not json"}, Preset: "claude", ReplyField: "result", SessionField: "session_id"})
	_, err := d.Run(context.Background(), Turn{Prompt: "x"})
	if !errors.Is(err, ErrBadOutput) || FailureOf(err).Kind != FailureBadOutput {
		t.Errorf("err = %v, FailureOf = %+v", err, FailureOf(err))
	}
}

// A plain command whose own work failed (its registry refused it, its
// database was down) is an ordinary failure: it neither stops the runner
// for credentials nor parks the seat as an API outage. The same words from
// a tool that speaks of its model API still do.
func TestExecPlainCommandsOwnFailureIsNoAPIFailure(t *testing.T) {
	for _, c := range []struct {
		stderr string
		want   FailureKind
	}{
		{"Error response from daemon: unauthorized: authentication required", FailureOther},
		{"psycopg2.OperationalError: connection refused", FailureOther},
		{"curl: (22) The requested URL returned error: 502 Bad Gateway", FailureOther},
		{"openai.AuthenticationError: Error code: 401 - invalid api key", FailureAuth},
		{"litellm: connection refused calling http://127.0.0.1:4000/v1/chat/completions", FailureOutage},
		{"HTTP 429 Too Many Requests", FailureRateLimited},
	} {
		d, _ := NewExec(ExecSettings{Command: []string{"sh", "-c", `cat >/dev/null; echo "$1" >&2; exit 1`, "sh", c.stderr}})
		_, err := d.Run(context.Background(), Turn{Prompt: "x"})
		if !errors.Is(err, ErrExecFailed) {
			t.Fatalf("%q: err = %v, want a failed command", c.stderr, err)
		}
		if got := FailureOf(err).Kind; got != c.want {
			t.Errorf("%q: classified %s, want %s", c.stderr, got, c.want)
		}
	}
}
