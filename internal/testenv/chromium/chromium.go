//go:build linux

// Package chromium starts Debian's Chromium with a DevTools port on
// loopback and opens pages in it: the app a cdp seat drives, for tests and
// stand-ins. Start runs it headless, on no display at all; StartShown
// shows its windows on the display DISPLAY names (a private Xvfb in
// tests), for a page that copies to the desktop's clipboard. It owns the
// browser process and its throwaway profile, and never touches a browser
// it did not start.
package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Browser is a running headless Chromium.
type Browser struct {
	// Endpoint is its DevTools address, http://127.0.0.1:PORT.
	Endpoint string
	cmd      *exec.Cmd
}

// Start runs chromium headless with a fresh profile in profile (an empty
// folder) and waits until its DevTools port is open. The port is chosen by
// Chromium and bound to loopback.
func Start(ctx context.Context, profile string) (*Browser, error) {
	return start(ctx, profile, true)
}

// StartShown is Start with the browser's windows shown on the display of
// the process's DISPLAY (a private Xvfb in tests): a shown Chromium
// writes the desktop's clipboard, where a headless one keeps its own.
func StartShown(ctx context.Context, profile string) (*Browser, error) {
	return start(ctx, profile, false)
}

func start(ctx context.Context, profile string, headless bool) (*Browser, error) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		return nil, errors.New("chromium is not installed (Debian package chromium; scripts/setup installs it)")
	}
	args := []string{"--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-quic", "--password-store=basic",
		"--user-data-dir=" + profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=800,600",
		// Pages in background tabs keep their timers: a stand-in's timing
		// shape must not stretch to Chromium's one wake-up a second.
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--disable-backgrounding-occluded-windows", "about:blank"}
	if headless {
		args = append([]string{"--headless"}, args...)
	} else {
		args = append([]string{"--test-type"}, args...) // no infobar about --no-sandbox
	}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // Chromium refuses to run as root with its sandbox
	}
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start chromium: %w", err)
	}
	b := &Browser{cmd: cmd}
	// Chromium writes the port it chose into the profile.
	for {
		data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, _, ok := strings.Cut(string(data), "\n"); err == nil && ok && port != "" {
			b.Endpoint = "http://127.0.0.1:" + port
			return b, nil
		}
		select {
		case <-ctx.Done():
			b.Stop()
			return nil, fmt.Errorf("chromium never opened its DevTools port: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Open opens page in a new tab (PUT /json/new, as current Chromium wants)
// and returns the tab's target id.
func (b *Browser) Open(page string) (string, error) {
	req, err := http.NewRequest(http.MethodPut, b.Endpoint+"/json/new?"+url.QueryEscape(page), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot open a page: %w", err)
	}
	defer resp.Body.Close()
	var target struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("cannot open a page: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&target); err != nil || target.ID == "" {
		return "", fmt.Errorf("cannot open a page: no target in the answer (%v)", err)
	}
	return target.ID, nil
}

// Close closes the tab with id, as a person closing a window.
func (b *Browser) Close(id string) error {
	resp, err := http.Get(b.Endpoint + "/json/close/" + id)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Stop ends the browser and its helpers.
func (b *Browser) Stop() {
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
}
