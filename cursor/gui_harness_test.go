//go:build linux && !nogui

package cursor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/atotto/clipboard"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/xvfb"
)

var (
	displayOnce sync.Once
	display     *xvfb.Display
	displayErr  error
)

// needDisplay starts this test binary's private X display the first time a
// test asks, and points the process at it before any X connection exists.
// A display from the environment is never used: it could be the developer's.
func needDisplay(t testing.TB) {
	t.Helper()
	displayOnce.Do(func() {
		// The display outlives t; ctx bounds only its start.
		ctx, cancel := poll.Context(t)
		defer cancel()
		display, displayErr = xvfb.Start(ctx, xvfb.Options{WindowManager: xvfb.Openbox})
		if displayErr == nil {
			displayErr = display.Setenv()
			afterTests = func() { display.Stop() }
		}
	})
	if displayErr != nil {
		t.Fatalf("cannot start the private X display: %v", displayErr)
	}
}

// chatOptions start a stand-in window.
type chatOptions struct {
	title         string
	x, y          int // position on the screen
	shape         shape
	ignoreSubmits int
	submitLag     time.Duration // the first Enter shows only after this long
	unseenSubmit  time.Duration // the first Enter is taken at once, drawn after this long
	copyLine      bool          // Ctrl+C with nothing selected copies the line, as Monaco does
	copyGate      string        // a click on Copy while this file exists copies once it is gone
	decoy         bool
}

// tkArgs are chatwindow.py's options for s.
func (s shape) tkArgs() []string {
	args := []string{"--think", ftoa(s.think), "--pause", ftoa(s.pause), "--chunks", itoa(max(s.chunks, 1)),
		"--long-pause", ftoa(s.longPause), "--reply-bytes", itoa(s.replyBytes)}
	if s.noEcho {
		args = append(args, "--no-echo")
	}
	if s.spinner {
		args = append(args, "--spinner")
	}
	return args
}

// chatWindow is a running stand-in window.
type chatWindow struct {
	cmd    *exec.Cmd
	others []*exec.Cmd // helpers that go with it, such as the page's recorder
	log    string
	layout struct {
		PID   int    `json:"pid"`
		Title string `json:"title"`
		Input [2]int `json:"input"`
		Copy  [2]int `json:"copy"`
		Reply [4]int `json:"reply"`
		Busy  [2]int `json:"busy"`
	}
}

var fixture = filepath.Join("..", "fixtures", "chatwindow", "chatwindow.py")

// startChat runs fixtures/chatwindow and waits until it is on screen.
func startChat(t testing.TB, o chatOptions) *chatWindow {
	t.Helper()
	needDisplay(t)
	dir := t.TempDir()
	c := &chatWindow{log: filepath.Join(dir, "log.jsonl")}
	layout := filepath.Join(dir, "layout.json")
	if o.shape.name == "" {
		o.shape = classic
	}
	args := append([]string{fixture, "--title", o.title, "--geometry", geometry(o.x, o.y),
		"--ignore-submits", itoa(o.ignoreSubmits), "--submit-lag", ftoa(o.submitLag.Seconds()), "--log", c.log, "--layout", layout}, o.shape.tkArgs()...)
	if o.unseenSubmit > 0 {
		args = append(args, "--unseen-submit", ftoa(o.unseenSubmit.Seconds()))
	}
	if o.copyLine {
		args = append(args, "--copy-line")
	}
	if o.copyGate != "" {
		args = append(args, "--copy-gate", o.copyGate)
	}
	if o.decoy {
		args = append(args, "--decoy")
	}
	c.cmd = exec.Command("/usr/bin/python3", args...)
	c.cmd.Stderr = os.Stderr
	// No Pdeathsig: it is tied to the starting thread, not this process.
	// Tk exits by itself when the private X server stops.
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("cannot start the stand-in window: %v", err)
	}
	t.Cleanup(c.close)
	awaitLayout(t, fmt.Sprintf("the stand-in window %q", o.title), layout, &c.layout)
	return c
}

// awaitLayout waits for the layout a stand-in window (what) writes to
// path once it shows, and reads it into layout.
func awaitLayout(t testing.TB, what, path string, layout any) {
	t.Helper()
	var data []byte
	poll.Until(t, what+" to show", func() bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil
	})
	if err := json.Unmarshal(data, layout); err != nil {
		t.Fatalf("bad layout from %s: %v", what, err)
	}
}

func geometry(x, y int) string { return "400x360+" + itoa(x) + "+" + itoa(y) }

func (c *chatWindow) close() {
	for _, cmd := range append([]*exec.Cmd{c.cmd}, c.others...) {
		if cmd == nil || cmd.Process == nil || cmd.ProcessState != nil {
			continue
		}
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		} else {
			cmd.Process.Signal(syscall.SIGTERM)
		}
		cmd.Wait()
	}
}

// window is the calibration a user would record for this stand-in, with
// its busy indicator.
func (c *chatWindow) window() WindowSettings {
	return WindowSettings{
		Title: "^" + regexp.QuoteMeta(c.layout.Title) + "$",
		PID:   c.layout.PID,
		Input: &Point{X: c.layout.Input[0], Y: c.layout.Input[1]},
		Copy:  &Point{X: c.layout.Copy[0], Y: c.layout.Copy[1]},
		Reply: &Rect{X: c.layout.Reply[0], Y: c.layout.Reply[1], W: c.layout.Reply[2], H: c.layout.Reply[3]},
		Busy:  &Point{X: c.layout.Busy[0], Y: c.layout.Busy[1]},
	}
}

// events reads what the window logged: prompts it received, or for a decoy,
// every key and paste.
func (c *chatWindow) events(t testing.TB) []map[string]any { return recordedEvents(t, c.log) }

func (c *chatWindow) prompts(t testing.TB) []string { return texts(c.events(t), "prompt") }

// replies are the replies the window finished, in order.
func (c *chatWindow) replies(t testing.TB) []string { return texts(c.events(t), "replied") }

// event is one thing a stand-in logged, with when.
type event struct {
	text string
	at   time.Time
}

// last is the window's latest event of one kind.
func (c *chatWindow) last(t testing.TB, kind string) event {
	t.Helper()
	var e event
	for _, m := range c.events(t) {
		if m["event"] == kind {
			e.text, _ = m["text"].(string)
			sec, _ := m["at"].(float64)
			e.at = time.Unix(0, int64(sec*1e9))
		}
	}
	if e.at.IsZero() {
		t.Fatalf("the window logged no %s", kind)
	}
	return e
}

// lastModelTime is how long the model took for the last reply: from the
// prompt's arrival to the reply's end, as the window saw them.
func (c *chatWindow) lastModelTime(t testing.TB) time.Duration {
	return c.last(t, "replied").at.Sub(c.last(t, "prompt").at)
}

// testGUI is the timing the tests use: a short quiet period after the busy
// indicator rests, a max_pause longer than the shapes' longest pause, short
// waits elsewhere so failures come quickly.
func testGUI() Timings {
	return Timings{
		Quiet:       100 * time.Millisecond,
		MaxPause:    3 * time.Second,
		Submit:      time.Second,
		TurnTimeout: 60 * time.Second,
		LockWait:    30 * time.Second,
	}
}

func newTestGUI(t testing.TB, w WindowSettings, lockDir string) *GUI {
	t.Helper()
	g, err := NewGUI(w, testGUI(), Options{LockDir: lockDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// setUserClipboard puts the user's own text on the clipboard.
func setUserClipboard(t testing.TB, s string) {
	t.Helper()
	if err := setClipboard(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

func assertClipboard(t testing.TB, want string) {
	t.Helper()
	got, err := clipboard.ReadAll()
	if err != nil || got != want {
		t.Errorf("user's clipboard = %q, %v; want it restored to %q", got, err, want)
	}
}

// configWindow is a complete calibration for a window titled title.
func configWindow(title string) WindowSettings {
	return WindowSettings{
		Title: "^" + regexp.QuoteMeta(title) + "$",
		Input: &Point{X: 200, Y: 330},
		Copy:  &Point{X: 360, Y: 280},
		Reply: &Rect{X: 4, Y: 4, W: 390, H: 250},
	}
}
