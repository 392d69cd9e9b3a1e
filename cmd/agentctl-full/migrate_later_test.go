package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/migrate"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

// Per-agent inbox.json files and appended text inboxes are watched by
// shared globs after migrate, so that the folder or file an old writer
// makes later for an agent added since is followed: that agent's runner,
// and only it, gets what is written there, the folder or file name saying
// whom when the message does not; a restart delivers nothing twice; and
// the checkout holds only what the old writers wrote.
func TestMigrateFollowsAgentsAddedLater(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the old-style writers: ", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to check the checkout: ", err)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(python, args...).CombinedOutput(); err != nil {
			t.Fatalf("old-style writer %v: %v\n%s", args, err, out)
		}
	}
	tree := buildTree(t)
	gitIn(t, tree, "init", "-q")
	gitIn(t, tree, "add", "-A")
	gitIn(t, tree, "commit", "-q", "-m", "the swarm as it was")
	swarm := filepath.Join(tree, "dadudekc-swarm")
	mailboxes := filepath.Join(swarm, "runtime", "agent_comms", "agent_mailboxes")
	inboxes := filepath.Join(swarm, "inboxes")

	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "9")
	plan := migrateJSON(t, root, tree)
	for _, glob := range []string{filepath.Join(mailboxes, "*", "inbox.json"), filepath.Join(inboxes, "Agent*.txt")} {
		if !slices.Contains(plan.Shared, glob) {
			t.Errorf("the report's shared places %q lack the glob %s", plan.Shared, glob)
		}
	}
	for a, places := range plan.Watch {
		for _, pl := range places {
			if strings.HasPrefix(pl, mailboxes) || strings.HasPrefix(pl, inboxes) {
				t.Errorf("%s watches %s by itself, which no agent added later would be", a, pl)
			}
		}
	}

	now := time.Now().Add(time.Hour)
	r := startRunners(t, root, now)
	defer func() { r.stop() }()
	r.work(now, map[string]map[string]int{}) // what migrate imported

	// The old system, after migrate, makes folders and files for two new
	// agents: Agent-9's with its own writers (recipients in the messages),
	// Agent-8's by hand, the messages naming no recipient at all.
	if err := os.MkdirAll(filepath.Join(mailboxes, "Agent-9"), 0o755); err != nil {
		t.Fatal(err)
	}
	run("../../fixtures/dreamos/inbox_writer.py", filepath.Join(mailboxes, "Agent-9"), "ij", "4", "--no-ids")
	run("../../fixtures/dreamos/layout_writer.py", "append", filepath.Join(inboxes, "Agent-9.txt"), "ap", "3", "Agent-9")
	if err := os.MkdirAll(filepath.Join(mailboxes, "Agent-8"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mailboxes, "Agent-8", "inbox.json"),
		[]byte(`[{"sender": "Agent-1", "content": "nameless-0"}, {"sender": "Agent-2", "content": "nameless-1"},
		  {"sender": "Agent-2", "recipient": "the QA lead", "content": "for-review-0"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inboxes, "Agent-8_incoming.txt"),
		[]byte("# Message\n**From**: Agent-1\n---\nunnamed-0\n\n# Message\n**From**: Agent-2\n---\nunnamed-1\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int{}
	now = now.Add(time.Hour)
	r.scan(now)
	r.scan(now)
	r.work(now, got)
	// More for Agent-9, then the runners restart and look again.
	run("../../fixtures/dreamos/inbox_writer.py", filepath.Join(mailboxes, "Agent-9"), "ij2", "2")
	run("../../fixtures/dreamos/layout_writer.py", "append", filepath.Join(inboxes, "Agent-9.txt"), "ap2", "2", "Agent-9")
	r.stop()
	now = now.Add(time.Hour)
	r = startRunners(t, root, now)
	r.scan(now)
	r.work(now, got)

	want := map[string]string{}
	for _, w := range []struct {
		name, to string
		n        int
	}{{"ij", "Agent-9", 4}, {"ap", "Agent-9", 3}, {"ij2", "Agent-9", 2}, {"ap2", "Agent-9", 2}, {"nameless", "Agent-8", 2}, {"unnamed", "Agent-8", 2}} {
		for i := range w.n {
			want[fmt.Sprintf("%s-%d", w.name, i)] = w.to
		}
	}
	for body, to := range want {
		if got[to][body] != 1 {
			t.Errorf("%s arrived %d times in %s's mailbox", body, got[to][body], to)
		}
	}
	for to, bodies := range got {
		for b, n := range bodies {
			if want[b] != to {
				t.Errorf("%s got %d times %q, which is %q's", to, n, b, want[b])
			}
		}
	}

	// What names no agent is the person's to route, once, though every
	// runner watches the folder and all restarted.
	human, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	reviews := 0
	entries, _ := os.ReadDir(filepath.Join(human.Dir, mailbox.InboxDir))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(human.Dir, mailbox.InboxDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m mailbox.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if strings.Contains(m.Body, "for-review-0") {
			reviews++
			if m.Type != "review" || !strings.Contains(m.Body, `which names no agent`) {
				t.Errorf("the review, of type %q, says:\n%s", m.Type, m.Body)
			}
		}
	}
	if reviews != 1 {
		t.Errorf("the person got %d reviews of the message to the QA lead, want 1", reviews)
	}

	// What git sees: only the files the old writers added.
	mine := []string{rel(t, tree, filepath.Join(mailboxes, "Agent-9")) + "/", rel(t, tree, filepath.Join(mailboxes, "Agent-8")) + "/",
		rel(t, tree, filepath.Join(inboxes, "Agent-9.txt")), rel(t, tree, filepath.Join(inboxes, "Agent-8_incoming.txt"))}
	for _, line := range strings.Split(strings.TrimRight(gitIn(t, tree, "status", "--porcelain", "--untracked-files=all"), "\n"), "\n") {
		if line == "" {
			continue
		}
		code, path := line[:2], line[3:]
		if code != "??" || !slices.ContainsFunc(mine, func(m string) bool { return path == m || strings.HasSuffix(m, "/") && strings.HasPrefix(path, m) }) {
			t.Errorf("git status: %s: not the old writers' doing", line)
		}
	}
}

// TestMigrateLeavesWhatCameAfterItsPlanToTheRunners: an old writer still
// at work adds a message to a watched inbox.json between migrate's reading
// of the checkout and its import. The runners are told the file holds what
// migrate read, not what it holds by then, so the message added since is
// delivered once, not taken as known and lost.
func TestMigrateLeavesWhatCameAfterItsPlanToTheRunners(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the old-style writers: ", err)
	}
	tree := buildTree(t)
	folder := filepath.Join(tree, "dadudekc-swarm", "runtime", "agent_comms", "agent_mailboxes", "Agent-2")
	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "5")
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, _, err := migrate.List(ctx, tree, root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	plan, err := migrate.New(ctx, tree, files, cfg, root, now, migrate.DefaultMaxMB<<20)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "../../fixtures/dreamos/inbox_writer.py", folder, "late", "1").CombinedOutput(); err != nil {
		t.Fatalf("old-style inbox.json writer: %v\n%s", err, out)
	}
	if err := migrate.Execute(ctx, root, cfg, plan, now); err != nil || len(plan.Failed) > 0 {
		t.Fatalf("Execute = %v, failed %q", err, plan.Failed)
	}
	later := now.Add(time.Hour)
	r := startRunners(t, root, later)
	defer func() { r.stop() }()
	got := map[string]map[string]int{}
	r.scan(later)
	r.work(later, got)
	if n := got["Agent-2"]["late-0"]; n != 1 {
		t.Errorf("the message written after migrate's plan arrived %d times in Agent-2's mailbox, want once (got %v)", n, got)
	}
}
