package config

import (
	"fmt"
	"net/url"
)

// Notify tells people that a message landed in their mailbox (a question,
// an approval request, a notice of a parked seat…), besides the mailbox
// itself, which they may not be watching. `agentctl up` does the telling
// (package notify); any of the three may be set.
type Notify struct {
	// Desktop shows a desktop notification: the session's notification
	// service over D-Bus on Linux, osascript on macOS, a PowerShell toast
	// on Windows.
	Desktop bool `yaml:"desktop,omitempty"`
	// Webhook is a URL POSTed an ntfy-style request: the body as plain
	// text, the subject in a Title header and the priority in Priority.
	// Credentials may sit in the URL (https://user:pass@host/topic) or in
	// WebhookHeaders (Authorization: Bearer …).
	Webhook        string            `yaml:"webhook,omitempty"`
	WebhookHeaders map[string]string `yaml:"webhook_headers,omitempty"`
	// Command runs a program per message: the message's subject, body,
	// sender and the rest in AGENTCTL_NOTIFY_* variables, and the whole
	// message as JSON on its stdin.
	Command []string `yaml:"command,omitempty"`
	// Poll is how often up looks at people's inboxes (default 2s).
	Poll Duration `yaml:"poll,omitempty"`
}

// Enabled says whether anyone is to be told anything.
func (n Notify) Enabled() bool {
	return n.Desktop || n.Webhook != "" || len(n.Command) > 0
}

func (n Notify) validate() error {
	if n.Webhook != "" {
		u, err := url.Parse(n.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("notify.webhook: %q is not an http or https URL", n.Webhook)
		}
	}
	if len(n.Command) > 0 && n.Command[0] == "" {
		return fmt.Errorf("notify.command: the program is empty")
	}
	if n.Poll < 0 {
		return fmt.Errorf("notify.poll: must be a positive duration such as 2s")
	}
	return nil
}
