//go:build !darwin && !windows

package notify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/agentctl/agentctl/mailbox"
)

// desktop asks the session's notification service over D-Bus, as
// notify-send would, but itself: a program's arguments can be read by
// every account on the machine, and the title and the body are a
// message's words. No bus is started where none runs (a service started
// outside a desktop session has none): the telling fails and says so.
func desktop(ctx context.Context, title, body string, p mailbox.Priority) error {
	addr, err := sessionBus()
	if err != nil {
		return err
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("cannot reach the session bus at %s: %w", addr, err)
	}
	defer conn.Close()
	service := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	var caps []string
	if err := service.CallWithContext(ctx, "org.freedesktop.Notifications.GetCapabilities", 0).Store(&caps); err != nil {
		return fmt.Errorf("no desktop notification service answers: %w", err)
	}
	if slices.Contains(caps, "body-markup") {
		// A service that reads markup would take a message's "<" or "&"
		// as its own.
		body = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(body)
	}
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(urgency(p))}
	var id uint32
	call := service.CallWithContext(ctx, "org.freedesktop.Notifications.Notify", 0,
		"agentctl", uint32(0), "", title, body, []string{}, hints, int32(-1))
	if err := call.Store(&id); err != nil {
		return fmt.Errorf("the desktop notification service refused: %w", err)
	}
	return nil
}

// sessionBus is the session bus's address, as the session sets it or at
// its usual place under XDG_RUNTIME_DIR.
func sessionBus() (string, error) {
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		return addr, nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if path := filepath.Join(dir, "bus"); isSocket(path) {
			return "unix:path=" + path, nil
		}
	}
	return "", fmt.Errorf("no session bus: DBUS_SESSION_BUS_ADDRESS is not set and XDG_RUNTIME_DIR holds no bus")
}

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// urgency is the notification specification's urgency for p: 0 low, 1
// normal, 2 critical.
func urgency(p mailbox.Priority) byte {
	switch p {
	case mailbox.Urgent, mailbox.High:
		return 2
	case mailbox.Low:
		return 0
	}
	return 1
}
