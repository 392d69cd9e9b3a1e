package notify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/agentctl/agentctl/mailbox"
)

// toast shows a Windows toast from PowerShell; the text comes in the
// environment, so nothing in it is read as script or XML.
const toast = `[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
$t = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)
$n = $t.GetElementsByTagName('text')
$n.Item(0).AppendChild($t.CreateTextNode($env:AGENTCTL_NOTIFY_TITLE)) > $null
$n.Item(1).AppendChild($t.CreateTextNode($env:AGENTCTL_NOTIFY_BODY)) > $null
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('agentctl').Show([Windows.UI.Notifications.ToastNotification]::new($t))`

func desktop(ctx context.Context, title, body string, _ mailbox.Priority) error {
	cmd := exec.CommandContext(ctx, "powershell", "-NoProfile", "-NonInteractive", "-Command", toast)
	cmd.Env = append(os.Environ(), "AGENTCTL_NOTIFY_TITLE="+title, "AGENTCTL_NOTIFY_BODY="+body)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("powershell toast: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
