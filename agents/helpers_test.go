package agents

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// repoRoot is the module's root folder, where fixtures/ lives.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

var demoAgents = []string{"Agent-1", "Agent-2", "Agent-3"}

// newRuntime makes a runtime root with mailboxes for agents and the demo
// board.
func newRuntime(t testing.TB, agents []string) string {
	t.Helper()
	root := t.TempDir()
	for _, a := range agents {
		if err := mailbox.Create(root, a); err != nil {
			t.Fatal(err)
		}
	}
	board, err := os.ReadFile(filepath.Join(repoRoot(), "fixtures", "demo", "board.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(projectboard.Dir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projectboard.Dir(root), "demo.yaml"), board, 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// testSettings are the runner settings the tests use: the defaults of
// agentctl.yaml with no rate limit.
func testSettings(root, agent string, agents []string, d cursor.Driver) Settings {
	def := config.Default()
	return Settings{
		Root: root, Agent: agent, Agents: agents, Driver: d,
		Consumer:       mailbox.Options{Known: agents, MaxAttempts: 3, Backoff: 50 * time.Millisecond, Settle: 100 * time.Millisecond},
		Heartbeat:      def.Run.Heartbeat.D(),
		MaxPromptBytes: def.Run.MaxPromptBytes,
		ShutdownGrace:  time.Second,
		Resend:         true,
		TemplatesDir:   filepath.Join(root, "templates"),
		Recovery: RecoverySettings{
			Lease: def.Recovery.Lease.D(), StaleAfter: def.Recovery.StaleAfter.D(), StallAfter: def.Recovery.StallAfter.D(),
			Cron: CronSpecs{Rescan: "@every 5m", Expire: "@every 1m", Stall: "@every 30s", Requeue: "@every 1m"},
		},
		Log: testLog(),
	}
}

func demoExecDriver(t testing.TB, agent string) cursor.Driver {
	t.Helper()
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/bin/sh", filepath.Join(repoRoot(), "fixtures", "demo", "agent.sh"), agent}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startRunner runs r until the test ends and returns a function that
// stops it and returns Run's error.
func startRunner(t testing.TB, s Settings) (stop func() error) {
	t.Helper()
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := r.Run(ctx)
		if err != nil && ctx.Err() == nil {
			t.Errorf("runner of %s stopped: %v", s.Agent, err)
		}
		done <- err
	}()
	stopped := false
	var result error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { stop() })
	return stop
}

func counts(t testing.TB, root, agent string) mailbox.Counts {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mb.Count()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deliverTo(t testing.TB, root string, m mailbox.Message) {
	t.Helper()
	mb, err := mailbox.Open(root, m.To)
	if err != nil {
		t.Fatal(err)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	if m.Priority == "" {
		m.Priority = mailbox.Normal
	}
	if err := mb.Deliver(m); err != nil {
		t.Fatal(err)
	}
}

func devlogOf(t testing.TB, root, agent string) []devlog.Entry {
	t.Helper()
	es, err := devlog.ReadAgent(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func task(t testing.TB, root, id string) projectboard.Task {
	t.Helper()
	s := projectboard.Store{Root: root}
	tk, err := s.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// testLog writes the runners' events to stderr when AGENTS_TEST_LOG is set.
// logOnFailure returns a logger whose lines are shown only if the test
// fails, after everything the test started has stopped.
func logOnFailure(t *testing.T) zerolog.Logger {
	w := zerolog.SyncWriter(syncbuf.OnFailure(t, "runner log"))
	return zerolog.New(zerolog.ConsoleWriter{Out: w, NoColor: true}).With().Timestamp().Logger()
}

func testLog() zerolog.Logger {
	if os.Getenv("AGENTS_TEST_LOG") == "" {
		return zerolog.Nop()
	}
	return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
}
