//go:build linux && !nogui

package cursor

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var chatPage = filepath.Join("..", "fixtures", "chatpage")

// startChromium opens fixtures/chatpage in a Chromium app window, served
// by its recorder, and waits until the page has reported its layout. The
// returned window reads the recorder's log like the Tk stand-in's.
func startChromium(t testing.TB, o chatOptions) *chatWindow {
	t.Helper()
	needDisplay(t)
	dir := t.TempDir()
	c := &chatWindow{log: filepath.Join(dir, "log.jsonl")}
	layout := filepath.Join(dir, "layout.json")

	rec := exec.Command("/usr/bin/python3", filepath.Join(chatPage, "recorder.py"), "--log", c.log, "--layout", layout)
	rec.Stderr = os.Stderr
	out, err := rec.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(); err != nil {
		t.Fatalf("cannot start the chat page's recorder: %v", err)
	}
	c.others = append(c.others, rec)
	t.Cleanup(c.close)
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("the recorder did not say where it listens: %q, %v", line, err)
	}

	q := pageQuery(o.title, o.shape, o.ignoreSubmits)
	if o.decoy {
		q = url.Values{"title": {o.title}, "decoy": {"1"}}
	}
	c.cmd = exec.Command("chromium", chromiumArgs(filepath.Join(dir, "profile"), o.x, o.y,
		"http://127.0.0.1:"+port+"/index.html?"+q.Encode())...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so close ends its helpers too
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("cannot start Chromium: %v", err)
	}
	awaitLayout(t, fmt.Sprintf("the Chromium window %q", o.title), layout, &c.layout)
	return c
}

// chromiumArgs open url as an app window (no tabs, no address bar) with a
// profile of its own, quiet: no first-run dialogs, no network but loopback.
func chromiumArgs(profile string, x, y int, url string) []string {
	return appWindowArgs(profile, x, y, 420, 380, url)
}

// appWindowArgs are chromiumArgs for a window of w×h.
func appWindowArgs(profile string, x, y, w, h int, url string) []string {
	args := []string{"--test-type", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-gpu", "--disable-quic",
		"--password-store=basic", "--user-data-dir=" + profile,
		"--window-position=" + itoa(x) + "," + itoa(y), "--window-size=" + itoa(w) + "," + itoa(h), "--app=" + url}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // Chromium refuses to run as root with it
	}
	return args
}
