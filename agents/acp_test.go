package agents

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// standInACP is an acp seat's driver running the stand-in agent
// (fixtures/acpagent), its conversation kept under root as agentctl run
// keeps it.
func standInACP(t *testing.T, root, agent string) cursor.Driver {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "acpagent")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repoRoot(), "fixtures", "acpagent")).CombinedOutput(); err != nil {
		t.Fatalf("cannot build the stand-in ACP agent: %v\n%s", err, out)
	}
	d, err := cursor.New(cursor.Settings{Name: agent, Driver: cursor.DriverACP, KeepsConversation: true,
		ACP: cursor.ACPSettings{Command: []string{bin}, Dir: t.TempDir(), Env: []string{"ACPAGENT_STATE=" + t.TempDir()}}},
		cursor.Options{Sessions: cursor.SessionsDir(root), Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.(interface{ Close() }).Close)
	return d
}

// TestACPSeatWaitsForThePersonsApproval: through a runner and the ACP
// driver, the agent's request to run a tool waits in the person's inbox;
// approved, the agent runs it and the turn ends; the next turn is in the
// same session.
func TestACPSeatWaitsForThePersonsApproval(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, standInACP(t, root, "Agent-1")))
	s.Guardrails = Guardrails{ToolPermission: GuardConfirm}
	s.Resend = false
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "acpagent> permission:deploy"})
	var req mailbox.Message
	waitFor(t, time.Minute, "the approval request", func() bool {
		reqs := approvals(t, root)
		if len(reqs) == 1 {
			req = reqs[0]
		}
		return len(reqs) == 1
	})
	if !strings.Contains(req.Body, `run "deploy", input {"command":"deploy"}`) {
		t.Errorf("the request says:\n%s", req.Body)
	}
	settle(t, root, req.ID, true, "")
	waitFor(t, time.Minute, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root, "Agent-1", "m1"); rc.Reply != "allowed" {
		t.Errorf("reply %q, want the agent's word that it was allowed", rc.Reply)
	}
	deliverTo(t, root, mailbox.Message{ID: "m2", From: "human", To: "Agent-1", Body: "acpagent> recall"})
	waitFor(t, time.Minute, "m2 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 2 })
	if rc := receiptOf(t, root, "Agent-1", "m2"); !strings.Contains(rc.Reply, "acpagent> permission:deploy") {
		t.Errorf("the second turn's session recalls %q, want the first turn's prompt", rc.Reply)
	}
}
