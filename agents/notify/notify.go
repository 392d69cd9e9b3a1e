package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Settings are the ways to tell, as agentctl.yaml's notify: sets them.
type Settings struct {
	Desktop bool
	Webhook string
	Headers map[string]string // sent with every webhook request
	Command []string
}

// Enabled says whether any way is set.
func (s Settings) Enabled() bool { return s.Desktop || s.Webhook != "" || len(s.Command) > 0 }

// ways lists the configured ways by name.
func (s Settings) ways() []string {
	var w []string
	if s.Desktop {
		w = append(w, "desktop")
	}
	if s.Webhook != "" {
		w = append(w, "webhook")
	}
	if len(s.Command) > 0 {
		w = append(w, "command")
	}
	return w
}

// timeout bounds one try of one way: a notifier that hangs must not hold
// the next message's telling, nor up's stop for long.
const timeout = 10 * time.Second

// tell tells of m one way. A try once begun is not cut short by ctx: a
// command killed after it told would leave no record, and the person
// would be told again.
func (s Settings) tell(ctx context.Context, way string, m mailbox.Message) error {
	// Real time, not the clock: it bounds a real command or request.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	switch way {
	case "desktop":
		return desktop(ctx, title(m), text(m), m.Priority)
	case "webhook":
		return s.post(ctx, m)
	case "command":
		return s.run(ctx, m)
	}
	return fmt.Errorf("no way to tell named %q", way)
}

// title is one line saying who wants what.
func title(m mailbox.Message) string {
	what := m.Subject
	if what == "" {
		what, _, _ = strings.Cut(strings.TrimSpace(m.Body), "\n")
	}
	if len(what) > 120 {
		what = what[:117] + "..."
	}
	return fmt.Sprintf("agentctl: %s from %s: %s", m.To, m.From, what)
}

// text is the body shown, cut to what a notification holds.
func text(m mailbox.Message) string {
	b := strings.TrimSpace(m.Body)
	if len(b) > 1000 {
		b = b[:997] + "..."
	}
	if b == "" {
		b = "(no body)"
	}
	return b
}

// ntfyPriority is the message's priority as ntfy names it.
func ntfyPriority(p mailbox.Priority) string {
	switch p {
	case mailbox.Urgent:
		return "urgent"
	case mailbox.High:
		return "high"
	case mailbox.Low:
		return "low"
	}
	return "default"
}

// post sends the webhook request: the body as plain text, Title and
// Priority as headers (ntfy's publish shape, which most push services
// take or ignore); credentials in the URL become basic auth.
func (s Settings) post(ctx context.Context, m mailbox.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Webhook, strings.NewReader(text(m)))
	if err != nil {
		return fmt.Errorf("cannot make the webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", title(m))
	req.Header.Set("Priority", ntfyPriority(m.Priority))
	req.Header.Set("X-Agentctl-Id", m.ID)
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot post to the webhook: %w", redact(err, s.Webhook))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}

// redact keeps a password in the webhook's URL out of the log: url.Error
// prints the URL whole.
func redact(err error, raw string) error {
	msg := err.Error()
	if i := strings.Index(raw, "://"); i >= 0 {
		if at := strings.LastIndex(raw, "@"); at > i {
			msg = strings.ReplaceAll(msg, raw[i+3:at+1], "xxx@")
		}
	}
	return errors.New(msg)
}

// run runs the person's command with the message in its environment and
// as JSON on its stdin.
func (s Settings) run(ctx context.Context, m mailbox.Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	cmd.Stdin = bytes.NewReader(data)
	cmd.Env = append(os.Environ(),
		"AGENTCTL_NOTIFY_ID="+m.ID, "AGENTCTL_NOTIFY_FROM="+m.From, "AGENTCTL_NOTIFY_TO="+m.To,
		"AGENTCTL_NOTIFY_TYPE="+m.Type, "AGENTCTL_NOTIFY_PRIORITY="+string(m.Priority),
		"AGENTCTL_NOTIFY_SUBJECT="+m.Subject, "AGENTCTL_NOTIFY_BODY="+m.Body, "AGENTCTL_NOTIFY_TITLE="+title(m))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", s.Command[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}
