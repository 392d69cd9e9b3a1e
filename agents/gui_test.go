//go:build linux && !nogui

package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/xvfb"
)

// TestGUIFlow runs the demo's work with the GUI driver: three runners, three
// stand-in chat windows on a private Xvfb display, real keystrokes, a real
// clipboard. The task must travel Agent-1 → Agent-2 → Agent-3, and each
// window must have received exactly one prompt.
func TestGUIFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("the GUI flow starts a private X display")
	}
	usePrivateDisplay(t)
	root := newRuntime(t, demoAgents)
	runnerLog := logOnFailure(t)
	logs := map[string]string{}
	for i, a := range demoAgents {
		w, log := startDemoWindow(t, a, 20+i*420)
		logs[a] = log
		g, err := newTestGUI(w, root, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		s := testSettings(root, a, demoAgents, g)
		s.Resend = false
		s.Log = runnerLog.With().Str("agent", a).Logger()
		startRunner(t, s)
	}
	deliverTo(t, root, demoTask())
	poll.Until(t, "the task to reach Agent-3's archive", func() bool { return counts(t, root, "Agent-3").Done == 1 })
	checkDemoOutcome(t, root)
	for a, log := range logs {
		data, _ := os.ReadFile(log)
		if n := len(regexp.MustCompile(`"event": "prompt"`).FindAll(data, -1)); n != 1 {
			t.Errorf("%s's window received %d prompts, want 1:\n%s", a, n, data)
		}
	}
}

// usePrivateDisplay starts a private X display for the test and points
// this process at it, before any X connection exists: robotgo caches its
// first one.
func usePrivateDisplay(t *testing.T) { usePrivateDisplayWith(t, xvfb.Options{}) }

// usePrivateDisplayWith is usePrivateDisplay with the display's options.
func usePrivateDisplayWith(t *testing.T, o xvfb.Options) {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	d, err := xvfb.Start(ctx, o)
	if err != nil {
		t.Fatalf("cannot start the private X display: %v", err)
	}
	t.Cleanup(func() { d.Stop() })
	if err := d.Setenv(); err != nil {
		t.Fatal(err)
	}
}

// newTestGUI is the GUI driver the tests use: the shortest quiet period
// allowed, and room for a loaded machine everywhere else.
func newTestGUI(w config.Window, root string, submit time.Duration) (*cursor.GUI, error) {
	return cursor.NewGUI(driverconf.Window(w), cursor.Timings{
		Quiet: config.MinQuiet, Submit: submit, TurnTimeout: 60 * time.Second, LockWait: 60 * time.Second,
	}, cursor.Options{LockDir: cursor.LockDir(root)})
}

// roleSubmitWait is gui.submit of a GUI driver in a test's process of its
// own: AGENTS_SUBMIT_WAIT, else 3 s. A test that kills the process between
// the send key and its proof gives the proof long to come.
func roleSubmitWait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("AGENTS_SUBMIT_WAIT")); err == nil {
		return d
	}
	return 3 * time.Second
}

// startDemoWindow runs fixtures/chatwindow answering with the agent's
// canned demo reply, and returns the calibration a user would record.
func startDemoWindow(t *testing.T, agent string, x int) (config.Window, string) {
	t.Helper()
	return startWindow(t, agent, x, "--reply-file", filepath.Join(repoRoot(), "fixtures", "demo", "replies", agent+".md"),
		"--think", "0.8", "--chunks", "3", "--pause", "0.2") // think well past the driver's settle wait
}

// startWindow runs a stand-in chat window for agent at x with the given
// chatwindow.py options, and returns its calibration and prompt log.
func startWindow(t *testing.T, agent string, x int, options ...string) (config.Window, string) {
	t.Helper()
	dir := t.TempDir()
	layout, log := filepath.Join(dir, "layout.json"), filepath.Join(dir, "log.jsonl")
	title := agent + " - Cursor (stand-in)"
	args := append([]string{filepath.Join(repoRoot(), "fixtures", "chatwindow", "chatwindow.py"),
		"--title", title, "--geometry", "400x360+" + strconv.Itoa(x) + "+20", "--log", log, "--layout", layout}, options...)
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	var l struct {
		PID   int    `json:"pid"`
		Input [2]int `json:"input"`
		Copy  [2]int `json:"copy"`
		Reply [4]int `json:"reply"`
		Busy  [2]int `json:"busy"`
	}
	poll.Until(t, "the window of "+agent+" to show", func() bool {
		data, err := os.ReadFile(layout)
		return err == nil && json.Unmarshal(data, &l) == nil
	})
	return config.Window{
		Title: "^" + regexp.QuoteMeta(title) + "$", PID: l.PID,
		Input: &config.Point{X: l.Input[0], Y: l.Input[1]},
		Copy:  &config.Point{X: l.Copy[0], Y: l.Copy[1]},
		Reply: &config.Rect{X: l.Reply[0], Y: l.Reply[1], W: l.Reply[2], H: l.Reply[3]},
		Busy:  &config.Point{X: l.Busy[0], Y: l.Busy[1]},
	}, log
}
