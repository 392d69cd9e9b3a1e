package wintest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/standinlog"
)

// Chat is a running fixtures/winchat window.
type Chat struct {
	cmd *exec.Cmd
	log string
	// Layout is what the window reported once on screen: positions are
	// relative to its client area, as `agentctl calibrate` records them.
	Layout struct {
		PID    int    `json:"pid"`
		Title  string `json:"title"`
		Origin [2]int `json:"origin"` // of the client area, on the screen
		Input  [2]int `json:"input"`
		Copy   [2]int `json:"copy"`
		Busy   [2]int `json:"busy"`
		Reply  [4]int `json:"reply"`
	}
}

// StartChat opens a winchat window titled title at x,y with the extra
// winchat flags, and waits until it is on screen.
func (w *Wine) StartChat(t testing.TB, title string, x, y int, flags ...string) *Chat {
	t.Helper()
	dir := t.TempDir()
	c := &Chat{log: filepath.Join(dir, "log.jsonl")}
	layout := filepath.Join(dir, "layout.json")
	args := append([]string{"-title", title, "-geometry", fmt.Sprintf("420x380+%d+%d", x, y),
		"-log", WinPath(c.log), "-layout", WinPath(layout)}, flags...)
	c.cmd = w.Command(filepath.Join(w.Bin, "winchat.exe"), args...)
	c.cmd.Stderr = os.Stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("cannot start the stand-in window: %v", err)
	}
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	})
	var data []byte
	poll.Until(t, fmt.Sprintf("the stand-in window %q to show", title), func() bool {
		var err error
		data, err = os.ReadFile(layout)
		return err == nil
	})
	if err := json.Unmarshal(data, &c.Layout); err != nil {
		t.Fatalf("bad layout from the stand-in: %v", err)
	}
	return c
}

// CalibrateArgs are the arguments of `agentctl calibrate AGENT` that record
// this window the way a person pointing at it would.
func (c *Chat) CalibrateArgs(agent string) []string {
	l := c.Layout
	return []string{"calibrate", agent, "--title", "^" + regexp.QuoteMeta(l.Title) + "$",
		"--pid", strconv.Itoa(l.PID),
		"--input", fmt.Sprintf("%d,%d", l.Input[0], l.Input[1]),
		"--copy", fmt.Sprintf("%d,%d", l.Copy[0], l.Copy[1]),
		"--reply", fmt.Sprintf("%d,%d,%d,%d", l.Reply[0], l.Reply[1], l.Reply[2], l.Reply[3])}
}

// Events is what the window logged: prompts received and replies finished,
// or for a decoy, every key, character and paste.
func (c *Chat) Events(t testing.TB) []map[string]any {
	t.Helper()
	events, err := standinlog.Read(c.log)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// Texts are the texts of the logged events of kind ("prompt", "replied").
func (c *Chat) Texts(t testing.TB, kind string) []string {
	return standinlog.Texts(c.Events(t), kind)
}
