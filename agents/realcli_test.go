package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// realLoopWait is the turn timeout of a runner driving a real tool: a
// turn takes seconds, but a loaded machine may stretch it.
const realLoopWait = 5 * time.Minute

// The whole loop with each real agent tool: a message in the mailbox, a
// runner whose exec seat runs the tool against fakemodel, a reply whose
// agentctl block sends a message on; then a new runner, as after a
// restart, whose turn continues the conversation the first began.
func TestRealToolsRunnerKeepsMemoryAcrossRestart(t *testing.T) {
	for _, c := range []struct{ tool, preset string }{
		{agentcli.Claude, config.PresetClaude},
		{agentcli.Codex, config.PresetCodex},
		{agentcli.Gemini, config.PresetGemini},
	} {
		t.Run(c.tool, func(t *testing.T) {
			agents := []string{"Agent-1", "Agent-2"}
			root := newRuntime(t, agents)
			srv := fakemodel.Start(t)
			tool := agentcli.Get(t, c.tool, srv.URL)
			t.Setenv("PATH", filepath.Dir(tool.Path)+string(os.PathListSeparator)+os.Getenv("PATH"))
			env := map[string]string{}
			for _, kv := range tool.Env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			a := config.Agent{Name: "Agent-1", Driver: config.DriverExec,
				Exec:    config.Exec{Preset: c.preset, Timeout: config.Duration(realLoopWait)},
				Program: config.Program{Cwd: t.TempDir(), Env: env}}
			driver := func() cursor.Driver {
				d, err := cursor.New(driverconf.Settings(a, config.DefaultGUI()),
					cursor.Options{Sessions: cursor.SessionsDir(root), Agent: "Agent-1"})
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			handOn := "Please check the word list."
			reply := "Noted the word.\n\n```agentctl\n{\"send\": [{\"to\": \"Agent-2\", \"type\": \"task\", \"subject\": \"word list\", \"body\": \"" +
				handOn + "\"}], \"devlog\": \"Remembered the word.\"}\n```\n"
			replyFile := filepath.Join(t.TempDir(), "reply.md")
			if err := os.WriteFile(replyFile, []byte(reply), 0o600); err != nil {
				t.Fatal(err)
			}

			stop := startRunner(t, testSettings(root, "Agent-1", agents, driver()))
			deliverTo(t, root, mailbox.Message{ID: "msg_real_1", From: "human", To: "Agent-1", Type: "task",
				Subject: "a word", Body: "Remember the word kumquat.\nfakemodel: reply-file " + replyFile})
			start := time.Now()
			poll.Until(t, "the first message's archive", func() bool { return counts(t, root, "Agent-1").Done == 1 })
			t.Logf("first message handled in %s", time.Since(start).Round(time.Millisecond))
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			mb, err := mailbox.Open(root, "Agent-2")
			if err != nil {
				t.Fatal(err)
			}
			sent, err := mb.List(mailbox.StatePending)
			if err != nil || len(sent) != 1 || sent[0].Message.Body != handOn {
				t.Fatalf("Agent-2's pending messages %+v (%v), want the block's one", sent, err)
			}

			startRunner(t, testSettings(root, "Agent-1", agents, driver()))
			deliverTo(t, root, mailbox.Message{ID: "msg_real_2", From: "human", To: "Agent-1", Type: "task",
				Subject: "the word", Body: "What was the word?"})
			start = time.Now()
			poll.Until(t, "the second message's archive", func() bool { return counts(t, root, "Agent-1").Done == 2 })
			t.Logf("second message, after the restart, handled in %s", time.Since(start).Round(time.Millisecond))
			es := devlogOf(t, root, "Agent-1")
			if len(es) != 2 || !strings.HasPrefix(es[1].Reply, "fakemodel turn 2;") {
				t.Fatalf("devlog %+v, want the second reply to count two turns", es)
			}
			turns := srv.Turns()
			if n := turns[len(turns)-1].Count("Remember the word kumquat."); n != 1 {
				t.Errorf("the second turn's request carries the first prompt %d times, want once", n)
			}
		})
	}
}
