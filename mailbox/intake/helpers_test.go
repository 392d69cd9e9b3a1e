package intake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/lockfile"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
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
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		return err
	}
	switch role {
	case "consume":
		return consumeUntil(mb, os.Getenv("MAILBOX_READY"), os.Getenv("MAILBOX_DONE"))
	case "hold-lock":
		return holdInboxJSONLock(mb, os.Getenv("MAILBOX_READY"), os.Getenv("MAILBOX_DONE"))
	}
	return fmt.Errorf("unknown role %q", role)
}

// consumeUntil runs the real consumer loop with its intake, as a runner
// does, archiving every message, until the file named done appears. Once
// its watches are up it makes the file named ready, if one is named.
func consumeUntil(mb *mailbox.Mailbox, ready, done string) error {
	store := mailbox.Options{Known: []string{mb.Agent}, MaxAttempts: 1000, Settle: 50 * time.Millisecond}
	rescan := 100 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("MAILBOX_SETTLE")); err == nil {
		store.Settle = d
	}
	if d, err := time.ParseDuration(os.Getenv("MAILBOX_RESCAN")); err == nil {
		rescan = d
	}
	if k := os.Getenv("MAILBOX_KNOWN"); k != "" {
		store.Known = strings.Split(k, ",")
	}
	// The places old writers write to, as the runner is given them.
	var opts Options
	opts.Watch = filepath.SplitList(os.Getenv("MAILBOX_WATCH"))
	opts.Shared = filepath.SplitList(os.Getenv("MAILBOX_SHARED"))
	opts.Take = filepath.SplitList(os.Getenv("MAILBOX_TAKE"))
	opts.SharedDeadletters = os.Getenv("MAILBOX_SHARED_DEADLETTERS") != ""
	c, err := mb.Consume(store, time.Now())
	if err != nil {
		return err
	}
	defer c.Close()
	in := New(c, opts)
	w, err := mailbox.Watch(mb, mailbox.WatchOptions{RescanInterval: rescan, Extra: append(opts.Watch, opts.Shared...)})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := in.Scan(time.Now()); err != nil {
		return err
	}
	if ready != "" {
		if err := os.WriteFile(ready, nil, 0o600); err != nil {
			return err
		}
	}
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
	return mailbox.Serve(ctx, c, in, w.C, mailbox.Worker{Handle: func(ctx context.Context, cl *mailbox.Claim) error {
		if err := c.Record(cl, "worked", time.Now()); err != nil {
			return err
		}
		return c.Complete(cl, mailbox.Receipt{Reply: "ok " + cl.Message.ID}, time.Now())
	}})
}

// holdInboxJSONLock holds the writers' lock as a stuck Dream.OS writer
// would, from when it creates ready until done appears.
func holdInboxJSONLock(mb *mailbox.Mailbox, ready, done string) error {
	lock := lockfile.New(filepath.Join(mb.Dir, mailbox.InboxJSONLock))
	if path := os.Getenv("MAILBOX_LOCK"); path != "" {
		lock = flock.New(path) // a watched place's writer, which is not agentctl
	}
	if err := lock.Lock(); err != nil {
		return err
	}
	defer lock.Unlock()
	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		return err
	}
	for {
		if _, err := os.Stat(done); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForFile waits until path exists.
func waitForFile(t testing.TB, path string) {
	t.Helper()
	poll.Until(t, path+" to appear", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
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

func stopConsumer(t *testing.T, root string, cmd *exec.Cmd) {
	t.Helper()
	writeFile(t, filepath.Join(root, "done"), nil)
	if err := cmd.Wait(); err != nil {
		t.Errorf("consumer: %v", err)
	}
}

// settings are a consumer's and its intake's settings in one, as tests
// give them.
type settings struct {
	Known             []string
	Settle            time.Duration
	MaxMessageBytes   int64
	OnEvent           func(mailbox.Event)
	MaxInboxJSONBytes int64
	LockWait          time.Duration
	Watch, Shared     []string
	Take              []string
	SharedDeadletters bool
	Human             string
	People            []string
	Stop              <-chan struct{}
}

// consumer is a Consumer with its Intake: claims go to the one, the looks
// at the mailbox to the other, as in Serve.
type consumer struct {
	*mailbox.Consumer
	in *Intake
}

func (c consumer) Scan(now time.Time) error                    { return c.in.Scan(now) }
func (c consumer) Notice(now time.Time, names ...string) error { return c.in.Notice(now, names...) }
func (c consumer) Tick(now time.Time) error                    { return c.in.Tick(now) }
func (c consumer) NextWake() (time.Time, bool)                 { return c.in.NextWake() }
func (c consumer) Waiting() string                             { return c.in.Waiting() }

// open makes mb's consumer and its intake and runs the intake's first full
// scan, as a runner does.
func open(mb *mailbox.Mailbox, s settings, now time.Time) (consumer, error) {
	if s.Known == nil {
		s.Known = []string{"Agent-1", "Agent-2", "Agent-3"}
	}
	c, err := mb.Consume(mailbox.Options{Known: s.Known, Settle: s.Settle, MaxMessageBytes: s.MaxMessageBytes, OnEvent: s.OnEvent}, now)
	if err != nil {
		return consumer{}, err
	}
	in := New(c, Options{MaxInboxJSONBytes: s.MaxInboxJSONBytes, LockWait: s.LockWait, Watch: s.Watch, Shared: s.Shared, Take: s.Take, SharedDeadletters: s.SharedDeadletters, Human: s.Human, People: s.People, Stop: s.Stop})
	if err := in.Scan(now); err != nil {
		c.Close()
		return consumer{}, err
	}
	return consumer{c, in}, nil
}

func consume(t testing.TB, mb *mailbox.Mailbox, s settings, now time.Time) consumer {
	t.Helper()
	c, err := open(mb, s, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newRuntime makes a runtime root with mailboxes for agents.
func newRuntime(t testing.TB, agents ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, a := range agents {
		if err := mailbox.Create(root, a); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openMailbox(t testing.TB, root, agent string) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

// names lists a folder, sorted, leaving out dot-files.
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

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func findSuffix(names []string, suffix string) string {
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return n
		}
	}
	return ""
}

// claimAll claims and archives everything claimable, returning the ids.
func claimAll(t *testing.T, c consumer, now time.Time) []string {
	t.Helper()
	var ids []string
	for {
		cl, err := c.Claim(now)
		if errors.Is(err, mailbox.ErrEmpty) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cl.Message.ID)
		if err := c.Complete(cl, mailbox.Receipt{}, now); err != nil {
			t.Fatal(err)
		}
	}
}

// countArchived counts receipts without reading them: cheap enough to poll.
func countArchived(mb *mailbox.Mailbox) int {
	n := 0
	days, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.ArchiveDir))
	for _, d := range days {
		entries, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.ArchiveDir, d.Name()))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), mailbox.ReceiptSuffix) {
				n++
			}
		}
	}
	return n
}

func archivedBodies(t *testing.T, mb *mailbox.Mailbox) map[string]int {
	t.Helper()
	bodies := map[string]int{}
	days, _ := os.ReadDir(filepath.Join(mb.Dir, mailbox.ArchiveDir))
	for _, d := range days {
		for _, name := range names(t, filepath.Join(mb.Dir, mailbox.ArchiveDir, d.Name())) {
			if strings.HasSuffix(name, mailbox.ReceiptSuffix) {
				continue
			}
			data, _ := os.ReadFile(filepath.Join(mb.Dir, mailbox.ArchiveDir, d.Name(), name))
			msg, err := mailbox.Decode(data, mailbox.Source{Name: name, Owner: mb.Agent})
			if err != nil {
				t.Fatal(err)
			}
			bodies[msg.Body]++
		}
	}
	return bodies
}

const samplesDir = "../../fixtures/dreamos-samples"

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(samplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func testMessage(id, to string, p mailbox.Priority) mailbox.Message {
	return mailbox.Message{ID: id, From: "tester", To: to, Type: "task", Priority: p, Subject: "subject " + id,
		Body: "body of " + id, CreatedAt: time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC), Meta: map[string]any{}}
}
