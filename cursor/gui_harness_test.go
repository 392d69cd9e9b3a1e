//go:build linux && !nogui

package cursor

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/atotto/clipboard"

	"agentctl/config"
	"agentctl/internal/xvfb"
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
		display, displayErr = xvfb.Start(context.Background(), xvfb.Options{})
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
	think, pause  float64
	chunks        int
	ignoreSubmits int
	decoy         bool
}

// chatWindow is a running stand-in window.
type chatWindow struct {
	cmd    *exec.Cmd
	log    string
	layout struct {
		PID   int    `json:"pid"`
		Title string `json:"title"`
		Input [2]int `json:"input"`
		Copy  [2]int `json:"copy"`
		Reply [4]int `json:"reply"`
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
	if o.think == 0 {
		// The model "thinks" well past the driver's settle wait after a
		// submission, as real models do; a reply that could start within
		// it would be taken for the prompt still being drawn.
		o.think, o.pause, o.chunks = 0.8, 0.25, 3
	}
	args := []string{fixture, "--title", o.title, "--geometry", geometry(o.x, o.y),
		"--think", ftoa(o.think), "--pause", ftoa(o.pause), "--chunks", itoa(o.chunks),
		"--ignore-submits", itoa(o.ignoreSubmits), "--log", c.log, "--layout", layout}
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
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(layout)
		if err == nil {
			if err := json.Unmarshal(data, &c.layout); err != nil {
				t.Fatalf("bad layout from the stand-in: %v", err)
			}
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in window %q never showed", o.title)
		}
	}
}

func geometry(x, y int) string { return "400x360+" + itoa(x) + "+" + itoa(y) }

func (c *chatWindow) close() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Signal(syscall.SIGTERM)
		c.cmd.Wait()
	}
}

// window is the calibration a user would record for this stand-in.
func (c *chatWindow) window() config.Window {
	return config.Window{
		Title: "^" + regexp.QuoteMeta(c.layout.Title) + "$",
		PID:   c.layout.PID,
		Input: &config.Point{X: c.layout.Input[0], Y: c.layout.Input[1]},
		Copy:  &config.Point{X: c.layout.Copy[0], Y: c.layout.Copy[1]},
		Reply: &config.Rect{X: c.layout.Reply[0], Y: c.layout.Reply[1], W: c.layout.Reply[2], H: c.layout.Reply[3]},
	}
}

// events reads what the window logged: prompts it received, or for a decoy,
// every key and paste.
func (c *chatWindow) events(t testing.TB) []map[string]any {
	t.Helper()
	f, err := os.Open(c.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func (c *chatWindow) prompts(t testing.TB) []string {
	var out []string
	for _, e := range c.events(t) {
		if e["event"] == "prompt" {
			out = append(out, e["text"].(string))
		}
	}
	return out
}

// testGUI is the timing the tests use: the real minimum quiet period, short
// waits elsewhere so failures come quickly.
func testGUI() config.GUI {
	return config.GUI{
		Quiet:       config.Duration(config.MinQuiet),
		FirstChange: config.Duration(10 * time.Second),
		Submit:      config.Duration(time.Second),
		TurnTimeout: config.Duration(60 * time.Second),
		LockWait:    config.Duration(30 * time.Second),
	}
}

func newTestGUI(t testing.TB, w config.Window, lockDir string) *GUI {
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

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// configWindow is a complete calibration for a window titled title.
func configWindow(title string) config.Window {
	return config.Window{
		Title: "^" + regexp.QuoteMeta(title) + "$",
		Input: &config.Point{X: 200, Y: 330},
		Copy:  &config.Point{X: 360, Y: 280},
		Reply: &config.Rect{X: 4, Y: 4, W: 390, H: 250},
	}
}
