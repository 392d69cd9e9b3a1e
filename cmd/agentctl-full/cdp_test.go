//go:build linux

package main

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/chromium"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// TestDemoFlowThroughCDPSeats is the demo as a new user would run it with
// driver: cdp: three stand-in chat pages in one headless Chromium with a
// DevTools port, each seat calibrated with calibrate --cdp and checked by
// doctor, three runners, and a task that travels Agent-1 → Agent-2 →
// Agent-3 through the agentctl blocks of the pages' replies, read through
// the pages' copy buttons or, for Agent-2, from the rendered reply.
func TestDemoFlowThroughCDPSeats(t *testing.T) {
	dir, root := demoRuntime(t)
	ctx, cancel := poll.Context(t)
	defer cancel()
	b, err := chromium.Start(ctx, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)

	agents := []string{"Agent-1", "Agent-2", "Agent-3"}
	logs := map[string]string{}
	for _, a := range agents {
		logs[a] = filepath.Join(dir, a+".jsonl")
		port := startRecorder(t, logs[a], "../../fixtures/demo/replies/"+a+".md")
		q := url.Values{"title": {a + " - Cursor"}, "reply_file": {"1"}, "think": {"0.3"}, "chunks": {"4"}, "pause": {"0.1"}}
		if _, err := b.Open("http://127.0.0.1:" + port + "/index.html?" + q.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	// Agent-2's replies are read from their rendering, the agentctl block
	// rebuilt: its page has no copy action, which its settings say.
	path := filepath.Join(root, "agentctl.yaml")
	yml := strings.Replace(readFile(t, path), "  - name: Agent-2\n", "  - name: Agent-2\n    cdp:\n      read: rendered\n", 1)
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		awaitPage(t, b.Endpoint, a+" - Cursor")
		// No probe: each page is to receive the demo's one prompt only.
		args := []string{"calibrate", a, "--cdp", b.Endpoint, "--probe=false", "--busy", "#send.stop",
			"--reply-selector", "#transcript > .msg:not(.user) > div:last-child"}
		if a != "Agent-2" {
			args = append(args, "--copy", "#copy")
		}
		out := mustAgentctl(t, root, args...)
		t.Logf("agentctl calibrate %s:\n%s", a, out)
		if !strings.Contains(out, `composer  "#composer" (proposed: the one visible editable element that is the chat's input)`) {
			t.Fatalf("calibrate proposed no composer that resolves:\n%s", out)
		}
	}
	out := mustAgentctl(t, root, "doctor")
	t.Logf("agentctl doctor:\n%s", out)
	for _, a := range agents {
		if !strings.Contains(out, "ok   agent "+a+": chat page (\""+a+" - Cursor\"") {
			t.Fatalf("doctor did not find %s's page:\n%s", a, out)
		}
	}

	for _, a := range agents {
		runner := exec.Command("agentctl", "--root", root, "run", a)
		runner.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		runner.Stderr, _ = os.Create(filepath.Join(dir, a+".log"))
		if err := runner.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { runner.Process.Signal(syscall.SIGTERM); runner.Wait() })
	}
	mustAgentctl(t, root, "send", "--to", "Agent-1", "--type", "task", "--task", "DEMO-1", "--priority", "high",
		"--subject", "DEMO-1: add a greeting", "Add a greet(name) function to the CLI, with a test. Hand it to Agent-2 for review when done.")
	poll.Until(t, "the work to reach Agent-3 and DEMO-1 to be done", func() bool {
		done, _ := filepath.Glob(filepath.Join(root, "agent_mailboxes", "Agent-3", "archive", "*", "*.receipt.jsonl"))
		show, _, _ := agentctl(t, root, "board", "show", "DEMO-1")
		return len(done) == 1 && strings.Contains(show, "done") && strings.Contains(show, "shipped in v0.1.0 by Agent-3")
	})
	for _, a := range agents {
		if n := strings.Count(readFile(t, logs[a]), `"event": "prompt"`); n != 1 {
			t.Errorf("%s's page received %d prompts, want 1", a, n)
		}
	}
}

// startRecorder serves fixtures/chatpage, answering with replyFile, and
// returns its port.
func startRecorder(t *testing.T, log, replyFile string) string {
	t.Helper()
	rec := exec.Command("/usr/bin/python3", "../../fixtures/chatpage/recorder.py", "--log", log, "--reply-file", replyFile)
	rec.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := rec.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Process.Signal(syscall.SIGTERM); rec.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("the recorder said %q", line)
	}
	return port
}

// awaitPage waits until the browser lists a page titled title.
func awaitPage(t *testing.T, endpoint, title string) {
	t.Helper()
	poll.Until(t, "page "+title, func() bool {
		pages, _ := cursor.ListPages(context.Background(), endpoint)
		for _, p := range pages {
			if p.Title == title {
				return true
			}
		}
		return false
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// TestCursorLaunchOpensItsPortOnLoopbackOnly starts a stand-in for
// Cursor's program and checks what it was given; a port something already
// answers on is refused.
func TestCursorLaunchOpensItsPortOnLoopbackOnly(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "cursor")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+args+".tmp && mv "+args+".tmp "+args+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := mustAgentctl(t, root, "cursor", "launch", "Agent-1", "--port", "39222", "--", fake)
	if !strings.Contains(out, "DevTools on http://127.0.0.1:39222") {
		t.Fatalf("launch said:\n%s", out)
	}
	poll.Until(t, "the stand-in to record its arguments", func() bool { _, err := os.Stat(args); return err == nil })
	want := "--user-data-dir=" + filepath.Join(root, "cursor", "Agent-1", "profile") + "\n--remote-debugging-port=39222\n--new-window\n" +
		filepath.Join(root, "workspaces", "Agent-1") + "\n"
	if got := readFile(t, args); got != want {
		t.Fatalf("Cursor was given:\n%s\nwant:\n%s", got, want)
	}

	ctx, cancel := poll.Context(t)
	defer cancel()
	b, err := chromium.Start(ctx, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	port := strings.TrimPrefix(b.Endpoint, "http://127.0.0.1:")
	_, errOut, err := agentctl(t, root, "cursor", "launch", "Agent-2", "--port", port, "--", fake)
	if err == nil || !strings.Contains(errOut, "something already answers on "+b.Endpoint) {
		t.Fatalf("a taken port: %v\n%s", err, errOut)
	}
}
