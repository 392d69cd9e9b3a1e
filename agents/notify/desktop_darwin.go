package notify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/agentctl/agentctl/mailbox"
)

// desktop shows a notification through osascript; the text goes in the
// environment, so nothing in it is read as AppleScript.
func desktop(ctx context.Context, title, body string, _ mailbox.Priority) error {
	cmd := exec.CommandContext(ctx, "osascript", "-e",
		`display notification (system attribute "AGENTCTL_NOTIFY_BODY") with title (system attribute "AGENTCTL_NOTIFY_TITLE")`)
	cmd.Env = append(os.Environ(), "AGENTCTL_NOTIFY_TITLE="+title, "AGENTCTL_NOTIFY_BODY="+body)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("osascript: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
