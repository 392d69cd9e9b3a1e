package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

// agentCLIs returns the folder scripts/agentclis installs the real agent
// tools into, or skips t where it cannot, unless AGENTCTL_REQUIRE_AGENT_CLIS
// is set (CI sets it), where it fails t.
func agentCLIs(t *testing.T) string {
	t.Helper()
	need := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("AGENTCTL_REQUIRE_AGENT_CLIS") != "" {
			t.Fatalf(format+", and AGENTCTL_REQUIRE_AGENT_CLIS is set; run scripts/setup", args...)
		}
		t.Skipf(format, args...)
	}
	if runtime.GOOS == "windows" {
		need("scripts/agentclis is a bash script")
	}
	if _, err := exec.LookPath("node"); err != nil {
		need("node is not installed, so the MCP SDK's client cannot run (scripts/agentclis needs Node.js 20)")
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "agentclis"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		need("scripts/agentclis cannot give the agent tools' folder: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	dir := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		need("scripts/agentclis gave %s, which holds no @modelcontextprotocol/sdk: %v", dir, err)
	}
	return dir
}

// buildAgentctl builds this command into dir and returns its path.
func buildAgentctl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "agentctl")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The TypeScript SDK's client, as Claude Code and Cursor use it, starts
// agentctl mcp over stdio, lists the tools and sends twice with one
// idempotency key: one message lands, from the server's agent.
func TestMCPWithTheNPMClient(t *testing.T) {
	dir := agentCLIs(t)
	work := t.TempDir()
	bin := buildAgentctl(t, work)
	root := filepath.Join(work, "runtime")
	if out, err := exec.Command(bin, "--root", root, "init", "--agents", "3").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}

	ctx := t.Context() // a hung client hangs the test until -timeout, which names it
	client, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "mcpclient", "client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", client, dir, bin, root, "Agent-2", "Agent-3")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client failed: %v\nstderr: %s\nstdout: %s", err, stderr.String(), out)
	}
	var got struct {
		Server struct{ Name, Title string }
		Tools  []struct {
			Name       string
			Required   []string
			Properties []string
		}
		First, Again struct {
			IDs      []string `json:"ids"`
			Repeated bool     `json:"repeated"`
		}
		Spoof struct {
			IsError bool `json:"isError"`
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %s: %v", out, err)
	}
	t.Logf("the client saw: %s", out)

	if got.Server.Name != "agentctl" || got.Server.Title != "agentctl as Agent-2" {
		t.Errorf("server %+v", got.Server)
	}
	var names []string
	for _, tool := range got.Tools {
		names = append(names, tool.Name)
		for _, p := range tool.Properties {
			if p == "from" || p == "as" || p == "agent" {
				t.Errorf("tool %s takes a sender or an agent: %v", tool.Name, tool.Properties)
			}
		}
		if tool.Name == "send" && strings.Join(tool.Required, ",") != "to,body" {
			t.Errorf("send requires %v, want to and body", tool.Required)
		}
	}
	if want := "answer board_add board_get board_set devlog_append inbox reply_human send status"; strings.Join(names, " ") != want {
		t.Errorf("tools %v, want %s", names, want)
	}
	if len(got.First.IDs) != 1 || got.First.Repeated || !got.Again.Repeated || strings.Join(got.Again.IDs, ",") != got.First.IDs[0] {
		t.Errorf("first send %+v, second %+v: want one id, repeated", got.First, got.Again)
	}
	if !got.Spoof.IsError || !strings.Contains(got.Spoof.Text, `"from"`) {
		t.Errorf("a send naming its sender gave %+v, want a tool error", got.Spoof)
	}

	// What is on disk: one message, from Agent-2, in Agent-3's inbox.
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := mailbox.Open(root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	es, err := mb.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("Agent-3's inbox holds %d messages, want 1: %+v", len(es), es)
	}
	m := es[0].Message
	if m.ID != got.First.IDs[0] || m.From != "Agent-2" || m.Body != "build is green" || m.Priority != mailbox.High {
		t.Errorf("delivered %+v", m)
	}
	files, _ := filepath.Glob(filepath.Join(root, "agent_mailboxes", "Agent-3", "inbox", "*.json"))
	if len(files) != 1 {
		t.Errorf("inbox files %v", files)
	}
	for _, other := range cfg.MailboxNames() {
		if other == "Agent-3" {
			continue
		}
		ob, _ := mailbox.Open(root, other)
		if es, _ := ob.List(mailbox.StatePending); len(es) != 0 {
			t.Errorf("%s got %+v", other, es)
		}
	}
}
