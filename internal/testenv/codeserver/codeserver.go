//go:build linux

// Package codeserver runs code-server (VS Code served to a browser) with
// the scripted chat participant of fixtures/vscodechat: VS Code's own chat
// view, the nearest kin of Cursor's chat panel that runs on a test
// machine, answered by scripted replies instead of a model. It owns the
// code-server process and its throwaway folders (profile, extensions,
// workspace, and a home of its own, so nothing is written into the
// user's). Callers open URL in the Chromium they drive, or have OpenWindow
// show it in a Chromium window of its own on the display, for a GUI seat.
//
// code-server listens on loopback without a password, as a test fixture
// only; scripts/codeserver installs it.
package codeserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Version is the code-server release scripts/codeserver installs.
const Version = "4.100.3"

// Options configure one code-server.
type Options struct {
	// Dir is an empty folder for everything the server keeps.
	Dir string
	// Fixture is the fixtures/vscodechat folder.
	Fixture string
	// Title is the browser window's title (VS Code's window.title), which
	// a cdp seat's target and a GUI seat's window title match.
	Title string
	// Replies are folders of scripted replies searched before the
	// fixture's own (see fixtures/vscodechat/extension/extension.js).
	Replies []string
}

// Server is a running code-server.
type Server struct {
	// URL opens the workbench on the server's workspace, with the chat
	// view open.
	URL string
	// Record is the file where the scripted participant records each
	// prompt it received and each reply it gave, a JSON object a line.
	Record string
	title  string
	cmd    *exec.Cmd
	done   chan struct{}
}

// Find returns the code-server command: $AGENTCTL_CODE_SERVER, else where
// scripts/codeserver installs it.
func Find() (string, error) {
	if p := os.Getenv("AGENTCTL_CODE_SERVER"); p != "" {
		return p, nil
	}
	dir := os.Getenv("AGENTCTL_CODE_SERVER_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "agentctl", "code-server-"+Version)
	}
	p := filepath.Join(dir, "node_modules", ".bin", "code-server")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("code-server %s is not installed in %s (scripts/codeserver installs it)", Version, dir)
	}
	return p, nil
}

// Need returns the code-server command, or skips t where it is not
// installed, unless AGENTCTL_REQUIRE_CODE_SERVER is set (CI sets it),
// where it fails t.
func Need(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if err != nil {
		if os.Getenv("AGENTCTL_REQUIRE_CODE_SERVER") != "" {
			t.Fatalf("%v, and AGENTCTL_REQUIRE_CODE_SERVER is set; run scripts/setup", err)
		}
		t.Skip(err)
	}
	return p
}

var listening = regexp.MustCompile(`HTTP server listening on (http://127\.0\.0\.1:\d+)/`)

// Start runs code-server on a free loopback port and returns once it
// listens. VS Code itself loads when a browser opens URL.
func Start(ctx context.Context, command string, o Options) (*Server, error) {
	ext, err := filepath.Abs(filepath.Join(o.Fixture, "extension"))
	if err != nil {
		return nil, err
	}
	dirs := map[string]string{}
	for _, d := range []string{"profile", "extensions", "workspace", "home"} {
		dirs[d] = filepath.Join(o.Dir, d)
		if err := os.MkdirAll(dirs[d], 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(ext, filepath.Join(dirs["extensions"], "agentctl.agentctl-scripted-chat-1.0.0")); err != nil {
		return nil, err
	}
	if err := writeSettings(filepath.Join(dirs["profile"], "User"), o.Title); err != nil {
		return nil, err
	}
	s := &Server{Record: filepath.Join(o.Dir, "chat.jsonl"), title: o.Title, done: make(chan struct{})}
	s.cmd = exec.Command(command, "--config", filepath.Join(o.Dir, "config.yaml"),
		"--bind-addr", "127.0.0.1:0", "--auth", "none",
		"--user-data-dir", dirs["profile"], "--extensions-dir", dirs["extensions"],
		"--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
		"--disable-getting-started-override", dirs["workspace"])
	s.cmd.Env = append(os.Environ(), "HOME="+dirs["home"], "XDG_CONFIG_HOME="+filepath.Join(dirs["home"], ".config"),
		"XDG_DATA_HOME="+filepath.Join(dirs["home"], ".local", "share"),
		"AGENTCTL_VSCODECHAT_LOG="+s.Record, "AGENTCTL_VSCODECHAT_REPLIES="+strings.Join(o.Replies, ":"))
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start code-server: %w", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	found := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if m := listening.FindStringSubmatch(line); m != nil {
				found <- m[1]
				io.Copy(io.Discard, r) // its log must not fill the pipe and stop it
				return
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case base := <-found:
		s.URL = base + "/?folder=" + url.QueryEscape(dirs["workspace"])
		return s, nil
	case <-s.done:
		return nil, errors.New("code-server exited before it listened")
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("code-server did not listen: %w", ctx.Err())
	}
}

// writeSettings gives the window its title and keeps VS Code from
// opening anything but the chat at start.
func writeSettings(dir, title string) error {
	settings := map[string]any{
		"window.title":                                     title,
		"workbench.startupEditor":                          "none",
		"telemetry.telemetryLevel":                         "off",
		"workbench.tips.enabled":                           false,
		"extensions.autoCheckUpdates":                      false,
		"extensions.autoUpdate":                            false,
		"security.workspace.trust.enabled":                 false,
		"workbench.welcomePage.walkthroughs.openOnInstall": false,
		"chat.commandCenter.enabled":                       false,
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600)
}

// Stop ends code-server and the extension host it started.
func (s *Server) Stop() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Exchange is one prompt the scripted participant received and what it
// answered.
type Exchange struct {
	Prompt   string `json:"prompt"`
	Scenario string `json:"scenario"`
	Reply    string `json:"reply"`
	// End is how the reply ended: done, error, cancelled (by the script),
	// stopped (by the person's stop button) or "unknown scenario".
	End string `json:"end"`
}

// Exchanges returns what the participant recorded so far, in order.
func (s *Server) Exchanges() ([]Exchange, error) {
	data, err := os.ReadFile(s.Record)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []Exchange
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Exchange
			Event string `json:"event"`
		}
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Record, err)
		}
		if e.Event == "" {
			all = append(all, e.Exchange)
		}
	}
	return all, nil
}

// WaitChat waits until the page of a DevTools endpoint whose title is
// title shows VS Code's chat view ready for a prompt: the chat opens a few
// seconds after the workbench, once the extension host has started and
// the participant has registered (a prompt sent before would find no one
// to answer it).
func (s *Server) WaitChat(ctx context.Context, endpoint, title string) error {
	for {
		err := s.participantReady()
		if err == nil {
			err = chatReady(ctx, endpoint, title)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VS Code's chat view never became ready (%v): %w", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) participantReady() error {
	data, err := os.ReadFile(s.Record)
	if err != nil || !strings.Contains(string(data), `"event":"chat.open"`) {
		return errors.New("the scripted participant has not started yet")
	}
	return nil
}

func chatReady(ctx context.Context, endpoint, title string) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b, err := Page(cctx, endpoint, title)
	if err != nil {
		return err
	}
	var res struct {
		Result struct {
			Value bool `json:"value"`
		} `json:"result"`
	}
	expr := `!!document.querySelector(".interactive-session .interactive-input-part .monaco-editor textarea")`
	if err := b.Execute(cctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return err
	}
	if !res.Result.Value {
		return errors.New("no chat input yet")
	}
	return nil
}

// Page connects to the DevTools socket of the one page titled title, for
// as long as ctx lasts: a connection of the caller's own, beside any a
// driver holds.
func Page(ctx context.Context, endpoint, title string) (*chromedp.Browser, error) {
	ws, err := pageSocket(ctx, endpoint, title)
	if err != nil {
		return nil, err
	}
	quiet := func(string, ...any) {}
	return chromedp.NewBrowser(ctx, ws, chromedp.WithBrowserLogf(quiet), chromedp.WithBrowserErrorf(quiet))
}

// PageTimes reads the page's window properties named, each a time the
// page took as performance.timeOrigin + performance.now() (milliseconds
// since the epoch, with a fraction), and fails if any is unset (0).
func PageTimes(ctx context.Context, b *chromedp.Browser, names ...string) ([]time.Time, error) {
	var res struct {
		Result struct {
			Value []float64 `json:"value"`
		} `json:"result"`
	}
	expr := "[window." + strings.Join(names, ", window.") + "]"
	if err := b.Execute(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return nil, err
	}
	out := make([]time.Time, len(names))
	for i, ms := range res.Result.Value {
		if ms == 0 {
			return nil, fmt.Errorf("the page never set %s", names[i])
		}
		out[i] = time.UnixMicro(int64(ms * 1000))
	}
	if len(res.Result.Value) != len(names) {
		return nil, fmt.Errorf("the page gave %d times for %d names", len(res.Result.Value), len(names))
	}
	return out, nil
}

// pageSocket returns the DevTools socket of the one page titled title.
func pageSocket(ctx context.Context, endpoint, title string) (string, error) {
	req, err := httpGet(ctx, endpoint+"/json/list")
	if err != nil {
		return "", err
	}
	var pages []struct {
		Type, Title, WebSocketDebuggerURL string
	}
	if err := json.Unmarshal(req, &pages); err != nil {
		return "", err
	}
	for _, p := range pages {
		if p.Type == "page" && p.Title == title {
			return p.WebSocketDebuggerURL, nil
		}
	}
	return "", fmt.Errorf("no page titled %q yet", title)
}

func httpGet(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", u, resp.Status)
	}
	return io.ReadAll(resp.Body)
}
