package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/fixtures/fakemodel"
	"github.com/agentctl/agentctl/internal/testenv/agentcli"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// demoSeat is one kind of seat the demo's agents can sit in: a real tool
// behind the exec or the acp driver.
type demoSeat struct {
	name   string
	tool   string
	driver string
	preset string
	model  string // empty: the tool's configured one
}

// The exec presets, and the ACP presets cursor/acp_real_test.go runs
// (Gemini CLI's with --experimental-acp, from its preset).
var demoSeats = []demoSeat{
	{name: "exec claude", tool: agentcli.Claude, driver: config.DriverExec, preset: config.PresetClaude},
	{name: "exec codex", tool: agentcli.Codex, driver: config.DriverExec, preset: config.PresetCodex},
	{name: "exec gemini", tool: agentcli.Gemini, driver: config.DriverExec, preset: config.PresetGemini},
	{name: "acp claude", tool: agentcli.ClaudeACP, driver: config.DriverACP, preset: config.ACPClaude},
	// Codex knows no metadata of the fake model's configured gpt-5 and says
	// so in the reply; a model it knows keeps the reply the model's own.
	{name: "acp codex", tool: agentcli.CodexACP, driver: config.DriverACP, preset: config.ACPCodex, model: "gpt-5.4"},
	{name: "acp gemini", tool: agentcli.Gemini, driver: config.DriverACP, preset: config.ACPGemini},
}

// demoReplies are the demo's scripted replies, by agent.
func demoReplies(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range demoAgents {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "fixtures", "demo", "replies", a+".md"))
		if err != nil {
			t.Fatal(err)
		}
		out[a] = string(b)
	}
	return out
}

// realDemoDriver is agent's seat as agentctl run builds it from
// agentctl.yaml: the preset, the tool's environment, a folder of its own.
// The preset's command is run by the tool's path, as exec.command or
// acp.command would name it, so that the kinds need not share one PATH
// and can run side by side.
func realDemoDriver(t *testing.T, root, agent string, s demoSeat, srv *fakemodel.Server) cursor.Driver {
	t.Helper()
	return seatDriver(t, root, agent, s, agentcli.Get(t, s.tool, srv.URL))
}

// seatDriver is realDemoDriver's work for a tool set up already.
func seatDriver(t *testing.T, root, agent string, s demoSeat, tool agentcli.Tool) cursor.Driver {
	t.Helper()
	env := map[string]string{}
	for _, kv := range tool.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	a := config.Agent{Name: agent, Driver: s.driver, Program: config.Program{Cwd: t.TempDir(), Env: env, Model: s.model}}
	byPath := func(command []string) []string {
		return append([]string{tool.Path}, command[1:]...)
	}
	switch s.driver {
	case config.DriverExec:
		a.Exec = config.Exec{Preset: s.preset, Timeout: config.Duration(realLoopWait)}
		a.Exec.Command = byPath(a.Exec.Resolved().Command)
	case config.DriverACP:
		a.ACP = config.ACP{Preset: s.preset, Timeout: config.Duration(realLoopWait)}
		a.ACP.Command = byPath(a.ACP.Resolved().Command)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := cursor.New(driverconf.Settings(a, config.DefaultGUI()), cursor.Options{Sessions: cursor.SessionsDir(root), Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := d.(interface{ Close() }); ok {
		t.Cleanup(c.Close)
	}
	return d
}

// The demo (scripts/demo) with each real agent tool in the three seats,
// its model the fake one answering each agent's prompt with the demo's
// scripted reply: the task travels Agent-1 → Agent-2 → Agent-3 through the
// replies' agentctl blocks, each reply is taken byte for byte as the model
// gave it, the board and the devlogs end as the demo's do, and, as the
// demo then shows, the person owning the dependent task is told and a
// status request is answered without a turn. Nothing is dead-lettered.
func TestRealToolsDemoFlow(t *testing.T) {
	replies := demoReplies(t)
	for _, s := range demoSeats {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			root := newRuntime(t, demoAgents)
			if err := mailbox.Create(root, "human"); err != nil {
				t.Fatal(err)
			}
			srv := fakemodel.Start(t)
			for _, a := range demoAgents {
				srv.ReplyWhen("You are "+a+",", replies[a])
			}
			for _, a := range demoAgents {
				rs := testSettings(root, a, demoAgents, realDemoDriver(t, root, a, s, srv))
				rs.People, rs.Human = []string{"human"}, "human"
				rs.Policy = config.Default().Coordination.Policy
				startRunner(t, rs)
			}
			deliverTo(t, root, demoTask())
			poll.Until(t, "the task to reach Agent-3's archive", func() bool { return counts(t, root, "Agent-3").Done == 1 })
			checkDemoOutcome(t, root)
			for _, a := range demoAgents {
				if got := archivedReplies(t, root, a); len(got) != 1 || got[0] != replies[a] {
					t.Errorf("%s: replies taken %q, want exactly the model's %q", a, got, replies[a])
				}
				if n := promptsTo(srv, a); n != 1 {
					t.Errorf("%s: the model was asked %d turns, want 1", a, n)
				}
			}

			poll.Until(t, "human's dependency notice", func() bool { return len(pendingOfType(t, root, "human", TypeDependencyFulfilled)) == 1 })
			deliverTo(t, root, mailbox.Message{ID: "msg_demo_status", From: "human", To: "Agent-2", Type: "status-request",
				Subject: "how is it going?", Body: "How is it going?"})
			poll.Until(t, "the status request's archive", func() bool { return counts(t, root, "Agent-2").Done == 2 })
			if n := len(pendingOfType(t, root, "human", "status-report")); n != 1 {
				t.Errorf("human has %d status reports, want Agent-2's one", n)
			}
			if r := receiptOf(t, root, "Agent-2", "msg_demo_status"); r.Data.Turn == nil || *r.Data.Turn {
				t.Errorf("the status request's receipt %+v, want it answered without a turn", r)
			}
			if n := promptsTo(srv, "Agent-2"); n != 1 {
				t.Errorf("after the status request the model was asked %d turns for Agent-2, want still 1", n)
			}
			for _, a := range append(demoAgents, "human") {
				if c := counts(t, root, a); c.Dead != 0 {
					t.Errorf("%s: %d dead letters", a, c.Dead)
				}
			}
		})
	}
}

// archivedReplies are the replies the receipts of agent's archive record.
func archivedReplies(t *testing.T, root, agent string) []string {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	done, err := mb.List(mailbox.StateDone)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range done {
		if e.Receipt == nil {
			t.Fatalf("%s: %s archived without a receipt", agent, e.Message.ID)
		}
		out = append(out, e.Receipt.Reply)
	}
	return out
}

// promptsTo counts the turns the model was asked for agent's prompts.
func promptsTo(srv *fakemodel.Server, agent string) int {
	n := 0
	for _, r := range srv.Turns() {
		if r.Count("You are "+agent+",") > 0 {
			n++
		}
	}
	return n
}

// pendingOfType are the messages of type waiting in agent's inbox.
func pendingOfType(t *testing.T, root, agent, typ string) []mailbox.Message {
	t.Helper()
	var out []mailbox.Message
	for _, m := range pendingOf(t, root, agent) {
		if m.Type == typ {
			out = append(out, m)
		}
	}
	return out
}
