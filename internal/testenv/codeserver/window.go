//go:build linux

package codeserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgbutil"
	"github.com/jezek/xgbutil/ewmh"
)

// Window is the server's workbench in a Chromium app window (no tabs, no
// address bar) on the display that $DISPLAY names, titled with
// Options.Title: the chat a GUI seat drives, with the mouse, keyboard and
// clipboard of that display.
type Window struct {
	// Endpoint is the browser's DevTools address on loopback: the test's
	// own view of the page (to wait for the chat, to time it), which a GUI
	// seat never uses.
	Endpoint string
	// W and H are the window's client area.
	W, H  int
	title string
	cmd   *exec.Cmd
}

// Window sizes that VS Code 1.100 lays its chat out in as Calibration
// says, on a 1280×800 display.
const (
	WindowWidth, WindowHeight = 1000, 740
)

// OpenWindow starts Chromium showing the workbench in a WindowWidth ×
// WindowHeight app window at x,y, with profile (an empty folder) as its
// profile, and returns once the chat takes prompts (see WaitChat) and the
// window is on the display. Timers keep running in the background, so
// that a reply streams at its own pace however the window is stacked.
func (s *Server) OpenWindow(ctx context.Context, profile string, x, y int) (*Window, error) {
	args := []string{"--test-type", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-gpu", "--disable-quic",
		"--password-store=basic", "--user-data-dir=" + profile,
		"--window-position=" + strconv.Itoa(x) + "," + strconv.Itoa(y),
		"--window-size=" + strconv.Itoa(WindowWidth) + "," + strconv.Itoa(WindowHeight),
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--disable-backgrounding-occluded-windows", "--app=" + s.URL}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // Chromium refuses to run as root with it
	}
	w := &Window{title: s.title, cmd: exec.Command("chromium", args...)}
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start Chromium: %w", err)
	}
	for w.Endpoint == "" {
		data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, _, ok := strings.Cut(string(data), "\n"); err == nil && ok && port != "" {
			w.Endpoint = "http://127.0.0.1:" + port
		}
		select {
		case <-ctx.Done():
			w.Close()
			return nil, fmt.Errorf("the browser never opened its DevTools port: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := s.WaitChat(ctx, w.Endpoint, s.title); err != nil {
		w.Close()
		return nil, err
	}
	var err error
	if w.W, w.H, err = clientSize(s.title); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// clientSize is the client area of the one window titled title.
func clientSize(title string) (int, int, error) {
	xgb.Logger = log.New(io.Discard, "", 0)
	xu, err := xgbutil.NewConn()
	if err != nil {
		return 0, 0, err
	}
	defer xu.Conn().Close()
	clients, err := ewmh.ClientListGet(xu)
	if err != nil {
		return 0, 0, err
	}
	var found []xproto.Window
	for _, c := range clients {
		if name, err := ewmh.WmNameGet(xu, c); err == nil && name == title {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return 0, 0, fmt.Errorf("%d windows are titled %q, want 1", len(found), title)
	}
	geo, err := xproto.GetGeometry(xu.Conn(), xproto.Drawable(found[0])).Reply()
	if err != nil {
		return 0, 0, err
	}
	return int(geo.Width), int(geo.Height), nil
}

// Calibration is what a user records for the chat in this window, in
// plain values that a test spells in agentctl.yaml or in a driver's
// settings: the window's title (a regular expression), the app's profile
// (vscode, which brings the copy route), the composer, the send button
// (the stop button while the model works) and the transcript.
type Calibration struct {
	Title, Profile string
	Input, Busy    Point
	Reply          Rect
}

// Point is a spot in the window's client area.
type Point struct{ X, Y int }

// Rect is a region of the window's client area.
type Rect struct{ X, Y, W, H int }

// Calibration is where VS Code 1.100 puts the chat's parts with its chat
// view docked at the right, counted from the client area's bottom-right
// corner.
func (w *Window) Calibration() Calibration {
	return Calibration{
		Title:   "^" + regexp.QuoteMeta(w.title) + "$",
		Profile: "vscode",
		Input:   Point{X: w.W - 130, Y: w.H - 83},
		Busy:    Point{X: w.W - 48, Y: w.H - 54},
		Reply:   Rect{X: w.W - 240, Y: 76, W: 225, H: w.H - 224},
	}
}

// Close ends the browser.
func (w *Window) Close() {
	if w.cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-w.cmd.Process.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		w.cmd.Process.Kill()
	}
	w.cmd.Wait()
}
