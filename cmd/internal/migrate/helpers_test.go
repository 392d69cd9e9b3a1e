package migrate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

// buildTree builds the fixture Dream.OS tree in a new folder.
func buildTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dreamos")
	if out, err := exec.Command("sh", "../../../fixtures/dreamos/build_tree.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("build_tree.sh: %v\n%s", err, out)
	}
	return dir
}

// fiveAgents writes the agentctl.yaml of five agents into root, as init
// would, and returns it.
func fiveAgents(t *testing.T, root string) config.Config {
	t.Helper()
	yaml := "agents:\n  - name: Agent-1\n  - name: Agent-2\n  - name: Agent-3\n  - name: Agent-4\n  - name: Agent-5\n"
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// plan lists and plans tree for root, as migrate does, an hour after now
// so that every file has settled.
func plan(t *testing.T, tree, root string, cfg config.Config) *Plan {
	t.Helper()
	files, unreadable, err := List(context.Background(), tree, root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), tree, files, cfg, root, time.Now().Add(time.Hour), DefaultMaxMB<<20)
	if err != nil {
		t.Fatal(err)
	}
	p.Unread(unreadable)
	return p
}

// run plans and carries out the plan, failing the test on any failure.
func run(t *testing.T, tree, root string, cfg config.Config) *Plan {
	t.Helper()
	p := plan(t, tree, root, cfg)
	if err := Execute(context.Background(), root, cfg, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(p.Failed) > 0 || len(p.Unreadable) > 0 {
		t.Fatalf("failed %q, unreadable %q", p.Failed, p.Unreadable)
	}
	return p
}

// message finds the plan's messages of the file at rel.
func messagesOf(t *testing.T, p *Plan, rel string) []Message {
	t.Helper()
	for _, f := range p.Files {
		if f.Path == rel {
			return f.Messages
		}
	}
	t.Fatalf("%s is not in the report", rel)
	return nil
}
