package wintest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

// swarm is a runtime on drive D:, in a folder whose name has a space, as
// a Windows user's would be.
type swarm struct {
	dir  string // this machine's path of D:\agent swarm
	root string // the runtime as Windows names it
}

func newSwarm(t *testing.T, w *Wine, agents string) swarm {
	t.Helper()
	drive := t.TempDir()
	w.Drive(t, "D", drive)
	s := swarm{dir: filepath.Join(drive, "agent swarm"), root: `D:\agent swarm\runtime`}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.MustRun(t, "--root", s.root, "init", "--agents", agents)
	return s
}

func (s swarm) path(rel string) string {
	return filepath.Join(s.dir, "runtime", filepath.FromSlash(rel))
}

// awaitGlob waits until pattern (under the runtime) matches a file.
func (s swarm) awaitGlob(t *testing.T, pattern string) string {
	t.Helper()
	var m []string
	poll.Until(t, "a file matching "+pattern, func() bool {
		m, _ = filepath.Glob(s.path(pattern))
		return len(m) > 0
	})
	return m[0]
}

func TestWindowsInitSendInboxStatusOnADriveWithSpaces(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "2")
	for _, p := range []string{"agentctl.yaml", "agent_mailboxes/Agent-1/inbox", "agent_mailboxes/human"} {
		if _, err := os.Stat(s.path(p)); err != nil {
			t.Errorf("init did not create %s: %v", p, err)
		}
	}
	id := strings.TrimSpace(w.MustRun(t, "--root", s.root, "send", "--to", "Agent-1", "--subject", "héllo", "Review the parser 😀").Stdout)
	if !strings.HasPrefix(id, "msg_") {
		t.Fatalf("send printed %q, want a message id", id)
	}
	if _, err := os.Stat(s.path("agent_mailboxes/Agent-1/inbox/" + id + ".json")); err != nil {
		t.Errorf("the message is not in Agent-1's inbox: %v", err)
	}
	if out := w.MustRun(t, "--root", s.root, "inbox", "Agent-1").Stdout; !strings.Contains(out, id) || !strings.Contains(out, "héllo") {
		t.Errorf("inbox does not list the message:\n%s", out)
	}
	if out := w.MustRun(t, "--root", s.root, "status").Stdout; !strings.Contains(out, "Agent-1") || !strings.Contains(out, "Agent-2") {
		t.Errorf("status does not list the agents:\n%s", out)
	}
	// A mistyped agent is refused with a hint, as on Linux.
	if r := w.Run(t, "--root", s.root, "send", "--to", `..\Agent-1`, "x"); r.Code == 0 || !strings.Contains(r.Stderr, "agentctl:") {
		t.Errorf("send to a path-like name: exit %d, %s", r.Code, r.Stderr)
	}
}

// A runner with a batch-file agent works a message from claim to archive,
// refuses a second runner, and stops on Ctrl+C.
func TestWindowsRunWithABatchAgent(t *testing.T) {
	w := Need(t)
	s := newSwarm(t, w, "2")
	agent := filepath.Join(s.dir, "agent.bat")
	os.WriteFile(agent, []byte("@echo off\r\nmore > \"%~dp0prompt.txt\"\r\necho The batch agent did it.\r\n"), 0o644)
	yaml := "agents:\n  - name: Agent-1\n    driver: exec\n    exec:\n      command: ['D:\\agent swarm\\agent.bat']\n      timeout: 60s\n  - name: Agent-2\n"
	if err := os.WriteFile(s.path("agentctl.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(w.MustRun(t, "--root", s.root, "send", "--to", "Agent-1", "--subject", "parse", "Write the parser for T-7.").Stdout)

	runner := w.Agentctl("--root", s.root, "run", "Agent-1", "--log-format", "json")
	var stderr strings.Builder
	runner.Stderr = &stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- runner.Wait() }()
	t.Cleanup(func() {
		if runner.ProcessState == nil {
			runner.Process.Kill()
			<-done
		}
	})
	s.awaitGlob(t, "agent_mailboxes/Agent-1/archive/*/"+id+".receipt.jsonl")

	prompt, _ := os.ReadFile(filepath.Join(s.dir, "prompt.txt"))
	if !strings.Contains(string(prompt), "Write the parser for T-7.") {
		t.Errorf("the batch agent's stdin held %q, want the prompt", prompt)
	}
	devlog, _ := os.ReadFile(s.path("devlogs/Agent-1.md"))
	if !strings.Contains(string(devlog), "The batch agent did it.") {
		t.Errorf("the devlog does not quote the reply:\n%s", devlog)
	}

	second := w.Run(t, "--root", s.root, "run", "Agent-1")
	if second.Code == 0 || !strings.Contains(second.Stderr, "already consuming Agent-1") {
		t.Errorf("a second runner: exit %d, %s; want a refusal naming the first", second.Code, second.Stderr)
	}

	// Ctrl+C in the runner's console.
	CtrlC(runner)
	ctx, cancel := poll.Context(t)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the runner ended with %v after Ctrl+C\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the runner did not stop on Ctrl+C\n%s", stderr.String())
	}
	for _, event := range []string{`"event":"claimed"`, `"event":"replied"`, `"event":"archived"`} {
		if !strings.Contains(stderr.String(), event) {
			t.Errorf("the runner's log lacks %s:\n%s", event, stderr.String())
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
