//go:build linux && !nogui

package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

func init() { roles["gui-runner"] = guiRunnerProcess }

// guiRunnerProcess is a runner with the GUI driver in a process of its own,
// for tests that kill it: the display comes from DISPLAY and XAUTHORITY,
// the window's calibration from AGENTS_WINDOW.
func guiRunnerProcess() int {
	var w config.Window
	if err := json.Unmarshal([]byte(os.Getenv("AGENTS_WINDOW")), &w); err != nil {
		fmt.Fprintln(os.Stderr, "gui-runner:", err)
		return 1
	}
	root, agent := os.Getenv("AGENTS_ROOT"), os.Getenv("AGENTS_AGENT")
	g, err := newTestGUI(w, root, 20*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gui-runner:", err)
		return 1
	}
	defer g.Close()
	s := testSettings(root, agent, demoAgents, g)
	s.Resend = false
	return runUntilStopped("gui-runner", s)
}

// TestGUIRunnerKilledMidTurnResumes kills a real runner process with
// SIGKILL while the model is still thinking, once right after the runner
// recorded that its prompt was submitted and once after it also recorded
// how the chat looked before the reply, and starts another runner. The new
// one must read the reply back without pasting the prompt again: the window
// receives exactly one prompt and the message is archived with its reply.
func TestGUIRunnerKilledMidTurnResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private X display")
	}
	usePrivateDisplay(t)
	for i, killAt := range []string{string(cursor.StageSubmitted), stageWaiting} {
		t.Run("after "+killAt, func(t *testing.T) {
			killMidTurn(t, killAt, 20+i*420)
		})
	}
}

func killMidTurn(t *testing.T, killAt string, x int) {
	root := newRuntime(t, demoAgents)
	reply := repoRoot() + "/fixtures/demo/replies/Agent-3.md"
	// The model thinks for 2 s: long enough to kill the runner mid-turn.
	w, windowLog := startWindow(t, "Agent-3", x, "--reply-file", reply, "--think", "2", "--chunks", "3", "--pause", "0.2")
	calibration, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=gui-runner", "AGENTS_ROOT="+root, "AGENTS_AGENT=Agent-3",
			"AGENTS_WINDOW="+string(calibration))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}

	first := start()
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	msg := mailbox.Message{ID: "resume-1", From: "Agent-2", To: "Agent-3", Type: "message", Body: "Say hello."}
	deliverTo(t, root, msg)
	mb, err := mailbox.Open(root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the runner to record "+killAt, func() bool {
		p, err := mb.ReadProgress(msg.ID)
		_, reached := p.Stages[killAt]
		return err == nil && reached
	})
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()

	second := start()
	t.Cleanup(func() { second.Process.Signal(syscall.SIGTERM); second.Wait() })
	waitFor(t, 40*time.Second, "the message to be archived", func() bool { return counts(t, root, "Agent-3").Done == 1 })

	data, _ := os.ReadFile(windowLog)
	if n := len(regexp.MustCompile(`"event": "prompt"`).FindAll(data, -1)); n != 1 {
		t.Fatalf("the window received %d prompts, want 1:\n%s", n, data)
	}
	if !strings.Contains(string(data), "Say hello.") {
		t.Errorf("the window's prompt does not carry the message:\n%s", data)
	}
	done, err := mb.List(mailbox.StateDone)
	if err != nil || len(done) != 1 || done[0].Receipt == nil {
		t.Fatalf("archive: %+v, %v", done, err)
	}
	want, _ := os.ReadFile(reply)
	if got := done[0].Receipt.Reply; got != string(want) {
		t.Errorf("reply read back after the restart:\n%q\nwant the window's reply:\n%q", got, want)
	}
}
