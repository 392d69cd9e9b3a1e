//go:build !darwin && !windows

package notify

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/agentctl/agentctl/mailbox"
)

// desktop shows a notification through notify-send (libnotify), which
// every Linux desktop answers.
func desktop(ctx context.Context, title, body string, p mailbox.Priority) error {
	urgency := "normal"
	switch p {
	case mailbox.Urgent, mailbox.High:
		urgency = "critical"
	case mailbox.Low:
		urgency = "low"
	}
	out, err := exec.CommandContext(ctx, "notify-send", "--app-name=agentctl", "--urgency="+urgency, "--", title, body).CombinedOutput()
	if err != nil {
		return fmt.Errorf("notify-send: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
