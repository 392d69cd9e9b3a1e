package mailbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/atomicfile"
)

// TestMain lets tests run this binary as real writer and consumer processes:
// with MAILBOX_TEST_ROLE set it plays that role instead of running tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("MAILBOX_TEST_ROLE"); role != "" {
		if err := playRole(role); err != nil {
			fmt.Fprintln(os.Stderr, role+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func playRole(role string) error {
	root, agent := os.Getenv("MAILBOX_ROOT"), os.Getenv("MAILBOX_AGENT")
	mb, err := Open(root, agent)
	if err != nil {
		return err
	}
	switch role {
	case "send":
		n, _ := strconv.Atoi(os.Getenv("MAILBOX_COUNT"))
		prefix := os.Getenv("MAILBOX_PREFIX")
		for i := range n {
			msg := testMessage(fmt.Sprintf("%s-%05d", prefix, i), agent, Normal)
			if err := mb.Deliver(msg); err != nil && !errors.Is(err, ErrDuplicate) {
				return err
			}
		}
		return nil
	case "consume":
		return consumeUntil(mb, os.Getenv("MAILBOX_DONE"))
	case "runner", "stranger":
		return holdConsumerLock(mb, role)
	}
	return fmt.Errorf("unknown role %q", role)
}

// consumeUntil runs the real consumer loop, archiving every message, until
// the file named done appears. Each settled claim is a handful of renames,
// so a SIGKILL lands at every step of the life cycle sooner or later.
func consumeUntil(mb *Mailbox, done string) error {
	opts := Options{Known: []string{mb.Agent}, MaxAttempts: 1000, Settle: 50 * time.Millisecond}
	rescan := 100 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("MAILBOX_SETTLE")); err == nil {
		opts.Settle = d
	}
	if d, err := time.ParseDuration(os.Getenv("MAILBOX_RESCAN")); err == nil {
		rescan = d
	}
	c, err := mb.Consume(opts, time.Now())
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := Watch(mb, WatchOptions{RescanInterval: rescan})
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(done); err == nil {
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return Serve(ctx, c, c, w.C, Worker{Handle: func(ctx context.Context, cl *Claim) error {
		if err := c.Record(cl, "worked", time.Now()); err != nil {
			return err
		}
		return c.Complete(cl, Receipt{Reply: "ok " + cl.Message.ID}, time.Now())
	}})
}

// startRole starts this test binary as a child process in role.
func startRole(t *testing.T, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"MAILBOX_TEST_ROLE=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func testMessage(id, to string, p Priority) Message {
	return Message{ID: id, From: "tester", To: to, Type: "task", Priority: p, Subject: "subject " + id,
		Body: "body of " + id, CreatedAt: time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC), Meta: map[string]any{}}
}

// newRuntime makes a runtime root with mailboxes for agents.
func newRuntime(t testing.TB, agents ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, a := range agents {
		if err := Create(root, a); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openMailbox(t testing.TB, root, agent string) *Mailbox {
	t.Helper()
	mb, err := Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

func consume(t testing.TB, mb *Mailbox, opts Options, now time.Time) *Consumer {
	t.Helper()
	if opts.Known == nil {
		opts.Known = []string{"Agent-1", "Agent-2", "Agent-3"}
	}
	c, err := mb.Consume(opts, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// names lists a mailbox folder, sorted, leaving out dot-files.
func names(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !atomicfile.IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// archivedIDs reads every archived message and counts each id.
func archivedIDs(t testing.TB, mb *Mailbox) map[string]int {
	t.Helper()
	counts := map[string]int{}
	days, _ := os.ReadDir(mb.path(ArchiveDir))
	for _, d := range days {
		for _, name := range names(t, mb.path(ArchiveDir, d.Name())) {
			if strings.HasSuffix(name, ReceiptSuffix) {
				continue
			}
			data, err := os.ReadFile(mb.path(ArchiveDir, d.Name(), name))
			if err != nil {
				t.Fatal(err)
			}
			msg, err := Decode(data, Source{Name: name, Owner: mb.Agent})
			if err != nil {
				t.Fatalf("archived %s: %v", name, err)
			}
			counts[msg.ID]++
			if _, err := os.Stat(mb.path(ArchiveDir, d.Name(), strings.TrimSuffix(name, ".json")+ReceiptSuffix)); err != nil {
				t.Errorf("archived %s has no receipt: %v", name, err)
			}
		}
	}
	return counts
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func inboxPath(mb *Mailbox, name string) string { return filepath.Join(mb.Dir, InboxDir, name) }
