package cursor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FailureKind is what a failed exec turn says about trying it again.
type FailureKind int

const (
	// FailureOther is any other failure: the runner's attempts and
	// backoff apply.
	FailureOther FailureKind = iota
	// FailureRateLimited: the model API refused the turn for a rate limit
	// or quota (HTTP 429); no work was done.
	FailureRateLimited
	// FailureOutage: the model API was overloaded or out of reach (529,
	// 5xx, connection refused); no work was done.
	FailureOutage
	// FailureAuth: the model API refused the credentials (401, 403, an
	// invalid key); no retry can help until a person fixes them.
	FailureAuth
	// FailureBadOutput: the turn ran and was paid for, but its output
	// could not be read; the reply may be recoverable from what was kept
	// without running the turn again.
	FailureBadOutput
	// FailureSeatMissing: the agent's window, or its app's DevTools
	// port, was not there, and nothing was sent; the seat waits for it
	// as for an outage. The runner, which knows whether the prompt went
	// out, names it; no output is read for it.
	FailureSeatMissing
)

func (k FailureKind) String() string {
	switch k {
	case FailureRateLimited:
		return "rate limited"
	case FailureOutage:
		return "API outage"
	case FailureAuth:
		return "API authentication"
	case FailureBadOutput:
		return "bad output"
	case FailureSeatMissing:
		return "seat missing"
	}
	return "failure"
}

// Failure is what ClassifyExec reads from a failed turn's output.
type Failure struct {
	Kind FailureKind `json:"kind"`
	// Status is the HTTP status the output names; 0 when none.
	Status int `json:"status,omitempty"`
	// RetryAfter is the wait the output names (retry-after, "try again
	// in"); 0 when it names none.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// ResetAt is when the output says a quota resets; zero when it names
	// no time.
	ResetAt time.Time `json:"reset_at,omitzero"`
}

// API reports whether the model API refused the turn, so that it did no
// work: nothing of the session or the prompt is to blame.
func (f Failure) API() bool {
	return f.Kind == FailureRateLimited || f.Kind == FailureOutage || f.Kind == FailureAuth
}

// FailureError is an exec turn's error with its classification.
type FailureError struct {
	Failure Failure
	err     error
}

func (e *FailureError) Error() string { return e.err.Error() }
func (e *FailureError) Unwrap() error { return e.err }

// FailureOf returns the classification err carries; a zero Failure
// (FailureOther) when it carries none.
func FailureOf(err error) Failure {
	var fe *FailureError
	if errors.As(err, &fe) {
		return fe.Failure
	}
	return Failure{}
}

// WithFailure attaches f to err, as a seat's answer carries it across
// the network.
func WithFailure(err error, f Failure) error { return &FailureError{Failure: f, err: err} }

// timedOut attaches an outage to a turn that ran out of time while the
// tool said it could not reach its API (Codex retries "waiting for
// network" until it is killed): the API did no work, so the seat waits
// for it rather than spend one of the message's attempts. Any other
// timeout stays what it is.
func timedOut(err error, stdout, stderr []byte) error {
	if !errors.Is(err, ErrExecTimeout) {
		return err
	}
	if f := ClassifyExec(stdout, stderr); f.Kind == FailureOutage {
		return &FailureError{Failure: f, err: err}
	}
	return err
}

// classified attaches to err what the failed turn's output says. Output a
// preset cannot read (ErrBadOutput) is classified as such: the turn was
// paid for.
func classified(err error, stdout, stderr []byte) error {
	if errors.Is(err, ErrBadOutput) {
		return &FailureError{Failure: Failure{Kind: FailureBadOutput}, err: err}
	}
	f := ClassifyExec(stdout, stderr)
	if f.Kind == FailureOther && f.Status == 0 {
		return err
	}
	return &FailureError{Failure: f, err: err}
}

// plainFailure keeps of a plain command's classified failure (no preset:
// a tool agentctl does not know, or a person's own script) only what its
// output shows came from a model API. A script's own "connection refused"
// or "unauthorized" (its database, its registry) would otherwise park the
// seat as an API outage for ever, or stop the runner for credentials the
// person never gave it. A rate limit is kept whatever said it: waiting it
// out costs nothing.
func plainFailure(err error, stdout, stderr []byte) error {
	var fe *FailureError
	if !errors.As(err, &fe) || fe.Failure.Kind == FailureRateLimited || fe.Failure.Kind == FailureBadOutput || fromModelAPI(stdout, stderr) {
		return err
	}
	return fe.err
}

// modelAPIWords are what the agent tools print about the model API they
// talk to, beside the failure itself: its name, its address, its key, its
// error objects.
var modelAPIWords = []string{"api error", "api_error", "apierror", "api key", "api_key", "x-api-key", "unable to connect to api",
	"/v1/", "generatecontent", "gemini api", "waiting for network", "anthropic", "openai",
	"authentication_error", "permission_error", "overloaded_error", "model is overloaded"}

// fromModelAPI reports whether a failed turn's output speaks of a model
// API.
func fromModelAPI(stdout, stderr []byte) bool {
	text := strings.ToLower(string(stdout) + "\n" + string(stderr))
	for _, w := range modelAPIWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

var (
	// Statuses as the agent tools print them: Claude Code's "API Error:
	// 529 …" and "Request rejected (429)", Codex's "unexpected status 503
	// Service Unavailable" and "last status: 429", Gemini's "[429 Too Many
	// Requests]" and "code": 429.
	statusRes = sync.OnceValue(func() []*regexp.Regexp {
		return []*regexp.Regexp{
			regexp.MustCompile(`(?i)api error: (\d{3})\b`),
			regexp.MustCompile(`(?i)request rejected \((\d{3})\)`),
			regexp.MustCompile(`(?i)\bstatus:? (\d{3})\b`),
			regexp.MustCompile(`(?i)"code":\s*(\d{3})\b`),
			regexp.MustCompile(`(?i)\[(\d{3}) [a-z ]+\]`),
			regexp.MustCompile(`(?i)\bhttp (\d{3})\b`),
			regexp.MustCompile(`\b(429|529) [A-Z][a-z]`),
		}
	})
	retryAfterRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:retry[- ]after[":= ]+|retry in |try again in |"retryDelay":\s*")(\d+(?:\.\d+)?)\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)?\b`)
	})
	// Claude Code's subscription limit: "Claude AI usage limit
	// reached|1732622400" (the reset, in Unix seconds).
	resetEpochRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)limit reached\|(\d{10})\b`) })
	resetTimeRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)resets?(?: at)? (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))`)
	})
)

// Words the tools use, lower case, per kind, strongest first.
var failureWords = []struct {
	kind  FailureKind
	words []string
}{
	{FailureAuth, []string{"authentication_error", "permission_error", "invalid api key", "invalid x-api-key", "api key not valid", "unauthorized", "unauthenticated", "invalid_api_key"}},
	{FailureRateLimited, []string{"rate_limit_error", "rate limit", "rate-limit", "too many requests", "resource_exhausted", "usage limit", "quota exceeded", "exceeded your current quota"}},
	{FailureOutage, []string{"overloaded_error", "overloaded", "connectionrefused", "connection refused", "econnrefused", "unable to connect to api", "service unavailable", "\"unavailable\"", "connection failed", "waiting for network", "typeerror: fetch failed", "internal server error", "bad gateway", "gateway timeout"}},
}

// ClassifyExec tells from a failed turn's output (a preset's JSON on
// stdout, any tool's words on stderr) whether the model API refused it,
// and for how long. It reads words and numbers only: it runs nothing and
// depends on no clock.
func ClassifyExec(stdout, stderr []byte) Failure {
	text := apiErrorText(stdout) + "\n" + string(stderr)
	var f Failure
	f.Status = apiStatus(stdout)
	if f.Status == 0 {
		for _, re := range statusRes() {
			if m := re.FindStringSubmatch(text); m != nil {
				f.Status, _ = strconv.Atoi(m[1])
				break
			}
		}
	}
	switch {
	case f.Status == 429:
		f.Kind = FailureRateLimited
	case f.Status == 401 || f.Status == 403:
		f.Kind = FailureAuth
	case f.Status == 529 || f.Status == 500 || f.Status == 502 || f.Status == 503 || f.Status == 504:
		f.Kind = FailureOutage
	default:
		lower := strings.ToLower(text)
	words:
		for _, w := range failureWords {
			for _, word := range w.words {
				if strings.Contains(lower, word) {
					f.Kind = w.kind
					break words
				}
			}
		}
	}
	if f.Kind == FailureRateLimited {
		f.RetryAfter = retryAfter(text)
		if m := resetEpochRe().FindStringSubmatch(text); m != nil {
			sec, _ := strconv.ParseInt(m[1], 10, 64)
			f.ResetAt = time.Unix(sec, 0).UTC()
		} else if m := resetTimeRe().FindStringSubmatch(text); m != nil {
			f.ResetAt, _ = time.Parse(time.RFC3339Nano, m[1])
		}
	}
	return f
}

// retryAfter is the wait text names, or 0.
func retryAfter(text string) time.Duration {
	m := retryAfterRe().FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil || n <= 0 {
		return 0
	}
	unit := time.Second
	switch u := strings.ToLower(m[2]); {
	case u == "ms":
		unit = time.Millisecond
	case strings.HasPrefix(u, "m"):
		unit = time.Minute
	case strings.HasPrefix(u, "h"):
		unit = time.Hour
	}
	return time.Duration(n * float64(unit)).Round(time.Millisecond)
}

// apiErrorObjects are the JSON objects of a preset's output that report
// an error: Claude Code's result with is_error, Codex's error and
// turn.failed events, Gemini's error object.
func apiErrorObjects(stdout []byte) []map[string]any {
	var objs []map[string]any
	var whole map[string]any
	if json.Unmarshal(bytes.TrimSpace(stdout), &whole) == nil {
		objs = append(objs, whole)
	} else {
		sc := bufio.NewScanner(bytes.NewReader(stdout))
		sc.Buffer(nil, len(stdout)+1)
		for sc.Scan() {
			var o map[string]any
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &o) == nil {
				objs = append(objs, o)
			}
		}
	}
	var out []map[string]any
	for _, o := range objs {
		_, hasErr := o["error"]
		if o["is_error"] == true || hasErr || o["type"] == "error" || o["type"] == "turn.failed" {
			out = append(out, o)
		}
	}
	return out
}

// apiStatus is the status Claude Code's result names (api_error_status).
func apiStatus(stdout []byte) int {
	for _, o := range apiErrorObjects(stdout) {
		if n, ok := o["api_error_status"].(float64); ok {
			return int(n)
		}
	}
	return 0
}

// apiErrorText is what the error objects of stdout say, as text.
func apiErrorText(stdout []byte) string {
	var b strings.Builder
	for _, o := range apiErrorObjects(stdout) {
		j, _ := json.Marshal(o)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}
