package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runners are the intakes of every agent's runner, set up from
// agentctl.yaml as 'agentctl run' sets them up, driven by a clock of the
// test's own.
type runners struct {
	t     *testing.T
	root  string
	cfg   config.Config
	cons  []*mailbox.Consumer
	intks []*intake.Intake
}

func startRunners(t *testing.T, root string, now time.Time) *runners {
	t.Helper()
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	r := &runners{t: t, root: root, cfg: cfg}
	for _, a := range cfg.Agents {
		mb, err := mailbox.Open(root, a.Name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := mb.Consume(consumerOptions(cfg), now)
		if err != nil {
			t.Fatal(err)
		}
		r.cons = append(r.cons, c)
		r.intks = append(r.intks, intake.New(c, runnerIntake(root, cfg, a)))
	}
	r.scan(now)
	return r
}

func (r *runners) scan(now time.Time) {
	r.t.Helper()
	for _, in := range r.intks {
		if err := in.Scan(now); err != nil {
			r.t.Fatal(err)
		}
	}
}

// work claims and completes every pending message, as the runners'
// turns would, and returns the bodies per agent.
func (r *runners) work(now time.Time, got map[string]map[string]int) {
	r.t.Helper()
	for _, c := range r.cons {
		for {
			cl, err := c.Claim(now)
			if errors.Is(err, mailbox.ErrEmpty) {
				break
			}
			if err != nil {
				r.t.Fatal(err)
			}
			if got[c.Mailbox().Agent] == nil {
				got[c.Mailbox().Agent] = map[string]int{}
			}
			got[c.Mailbox().Agent][strings.TrimSpace(cl.Message.Body)]++
			if err := c.Complete(cl, mailbox.Receipt{Outcome: "answered"}, now); err != nil {
				r.t.Fatal(err)
			}
		}
	}
}

func (r *runners) stop() {
	for _, c := range r.cons {
		c.Close()
	}
}

// A Dream.OS checkout is the user's history: migrate, and the runners
// watching its places through a day of old writers' traffic (restarted
// half-way), change, move or remove nothing in it. git sees only what the
// old writers wrote, and every message arrives once.
func TestMigrateLeavesGitCheckoutAlone(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the old-style writers: ", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to check the checkout: ", err)
	}
	tree := buildTree(t)
	gitIn(t, tree, "init", "-q")
	gitIn(t, tree, "add", "-A")
	gitIn(t, tree, "commit", "-q", "-m", "the swarm as it was")
	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "5")
	plan := migrateJSON(t, root, tree)
	if !plan.GitCheckout {
		t.Error("the report does not say the folder is a git checkout")
	}
	if out := mustAgentctl(t, root, "migrate", tree, "--dry-run"); !strings.Contains(out, "is a git checkout") {
		t.Errorf("the text report does not say so up front:\n%s", out)
	}
	if st := gitIn(t, tree, "status", "--porcelain"); st != "" {
		t.Fatalf("migrate changed the checkout:\n%s", st)
	}

	swarm := filepath.Join(tree, "dadudekc-swarm")
	workspace := filepath.Join(swarm, "agent_workspaces", "Agent-3", "inbox")
	folder := filepath.Join(swarm, "runtime", "agent_comms", "agent_mailboxes", "Agent-2")
	shared := filepath.Join(swarm, "runtime", "agent_comms", "inbox")
	appended := filepath.Join(swarm, "inboxes", "Agent-3.txt")
	type writer struct {
		layout, path, name string
		to                 []string
	}
	const each = 4
	now := time.Now().Add(time.Hour)
	r := startRunners(t, root, now)
	got := map[string]map[string]int{}
	r.work(now, got)
	migrated := 0
	for _, bodies := range got {
		for _, n := range bodies {
			migrated += n
		}
	}
	if migrated != plan.Messages.Pending {
		t.Errorf("the runners found %d messages at first, the report imported %d", migrated, plan.Messages.Pending)
	}
	got = map[string]map[string]int{}
	var want []writer
	for hour := range 8 { // a working day, an hour a round
		round := []writer{
			{"markdown", workspace, fmt.Sprintf("md%d", hour), []string{"Agent-3"}},
			{"json", folder, fmt.Sprintf("js%d", hour), []string{"Agent-2"}},
			{"append", appended, fmt.Sprintf("ap%d", hour), []string{"Agent-3"}},
			{"shared", shared, fmt.Sprintf("sh%d", hour), []string{"Agent-1", "Agent-4"}},
		}
		for _, w := range round {
			cmd := exec.Command(python, append([]string{"../../fixtures/dreamos/layout_writer.py", w.layout, w.path, w.name, fmt.Sprint(each)}, w.to...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("old-style writer: %v\n%s", err, out)
			}
		}
		ij := exec.Command(python, "../../fixtures/dreamos/inbox_writer.py", folder, fmt.Sprintf("ij%d", hour), fmt.Sprint(each), "--no-ids", "--container")
		if out, err := ij.CombinedOutput(); err != nil {
			t.Fatalf("old-style inbox.json writer: %v\n%s", err, out)
		}
		want = append(want, round...)
		want = append(want, writer{"inbox.json", folder, fmt.Sprintf("ij%d", hour), []string{"Agent-2"}})
		now = now.Add(time.Hour)
		r.scan(now)
		r.scan(now) // a rescan finds nothing new
		r.work(now, got)
		if hour == 3 { // the runners restart
			r.stop()
			r = startRunners(t, root, now)
		}
	}
	r.stop()

	for _, w := range want {
		for n := range each {
			to := w.to[n%len(w.to)]
			if b := fmt.Sprintf("%s-%d", w.name, n); got[to][b] != 1 {
				t.Errorf("%s arrived %d times in %s's mailbox", b, got[to][b], to)
			}
			delete(got[to], fmt.Sprintf("%s-%d", w.name, n))
		}
	}
	for to, bodies := range got {
		for b, n := range bodies {
			t.Errorf("%s got %d times %q, which no writer wrote today", to, n, b)
		}
	}

	// What git sees: files the old writers added, and the two files they
	// rewrite in place; nothing removed, nothing else changed.
	written := map[string]bool{
		rel(t, tree, appended):                            true,
		rel(t, tree, filepath.Join(folder, "inbox.json")): true,
	}
	for _, line := range strings.Split(strings.TrimRight(gitIn(t, tree, "status", "--porcelain", "--untracked-files=all"), "\n"), "\n") {
		if line == "" {
			continue
		}
		code, path := line[:2], line[3:]
		switch {
		case code == "??" && (strings.HasPrefix(path, rel(t, tree, workspace)+"/") || strings.HasPrefix(path, rel(t, tree, folder)+"/") || strings.HasPrefix(path, rel(t, tree, shared)+"/")):
		case code == " M" && written[path]:
		default:
			t.Errorf("git status: %s: not the old writers' doing", line)
		}
	}
}

func rel(t *testing.T, base, path string) string {
	t.Helper()
	r, err := filepath.Rel(base, path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}
