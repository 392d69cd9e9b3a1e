//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/cmd/internal/migrate"
)

// A folder migrate cannot open, and a file larger than it reads whole, are
// each named in the report, and migrate fails; what it could read is still
// planned. Root reads any folder whatever its mode, so as root the command
// runs as another uid (65534), for which chmod 000 is a real refusal.
func TestMigrateNamesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(dir, "dreamos")
	write := func(rel, text string) {
		p := filepath.Join(tree, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agent_workspaces/Agent-1/inbox/m.md", "**From:** Agent-2\n**To:** Agent-1\n\nRebase.\n")
	write("agent_workspaces/Agent-2/inbox/hidden.md", "**From:** Agent-1\n**To:** Agent-2\n\nLost?\n")
	write("runtime/agent_comms/agent_mailboxes/Agent-1/inbox.json", "["+strings.Repeat(" ", 2<<20)+"]")
	locked := filepath.Join(tree, "agent_workspaces", "Agent-2", "inbox")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	// As root the migrate below runs as nobody, to whom the folder made
	// unreadable is so: init closed the runtime to other accounts.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("agentctl", "--root", root, "migrate", "--json", "--dry-run", "--max-file-mb", "1", tree)
	if os.Geteuid() == 0 {
		bin := filepath.Join(dir, "bin", "agentctl")
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		copyExecutable(t, self, bin)
		cmd.Path = bin
		cmd.Env = append(os.Environ(), "HOME=/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Pdeathsig: syscall.SIGKILL}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		t.Fatalf("migrate exited 0 with an unreadable folder and a file over the cap\n%s%s", out.String(), errb.String())
	}
	var p migrate.Plan
	if jerr := json.Unmarshal([]byte(out.String()), &p); jerr != nil {
		t.Fatalf("no report: %v\n%s%s", jerr, out.String(), errb.String())
	}
	for _, want := range []string{"agent_workspaces/Agent-2/inbox/: ", "runtime/agent_comms/agent_mailboxes/Agent-1/inbox.json: "} {
		if !slices.ContainsFunc(p.Unreadable, func(u string) bool { return strings.HasPrefix(u, want) }) {
			t.Errorf("the report's unreadable %q lacks %s", p.Unreadable, want)
		}
		if !strings.Contains(errb.String(), strings.TrimSuffix(want, ": ")) {
			t.Errorf("the error does not name %s:\n%s", want, errb.String())
		}
	}
	if !strings.Contains(errb.String(), "--max-file-mb") {
		t.Errorf("the error does not say how to read the large file:\n%s", errb.String())
	}
	if p.Messages.Pending != 1 {
		t.Errorf("%d messages planned, want the one that could be read", p.Messages.Pending)
	}
}
