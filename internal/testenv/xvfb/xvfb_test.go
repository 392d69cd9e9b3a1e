package xvfb

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

func TestStartStop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Xvfb runs on Linux only")
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	d, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A client with the cookie gets in and sees the window manager.
	out, err := runWith(d.Env(), "xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
	if err != nil || !strings.Contains(out, "window id") {
		t.Fatalf("xprop with the cookie: %v: %s", err, out)
	}
	// A client without it is refused: other local users cannot drive it.
	if out, err := runWith([]string{"DISPLAY=" + d.Name, "XAUTHORITY=/nonexistent"}, "xprop", "-root"); err == nil {
		t.Fatalf("xprop without the cookie got in: %s", out)
	}
	socket := "/tmp/.X11-unix/X" + strings.TrimPrefix(d.Name, ":")
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("no socket while running: %v", err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Fatalf("socket %s left behind after Stop: %v", socket, err)
	}
	if _, err := os.Stat(d.Authority); !os.IsNotExist(err) {
		t.Fatalf("cookie left behind after Stop: %v", err)
	}
	if err := d.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func runWith(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
