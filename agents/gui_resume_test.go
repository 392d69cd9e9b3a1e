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

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/testenv/poll"
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
	g, err := newTestGUI(w, root, roleSubmitWait())
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
// SIGKILL mid-turn and starts another runner: once while the model is
// still thinking, right after the runner recorded that its prompt was
// submitted, and once between the send key and its proof (the window took
// the key, and then is stuck for a while). The new runner must read
// the reply back without pasting the prompt again: the window receives
// exactly one paste and one prompt, and the message is archived with its
// reply.
func TestGUIRunnerKilledMidTurnResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private X display")
	}
	usePrivateDisplay(t)
	t.Run("after submitted", func(t *testing.T) {
		// The model thinks for 2 s: long enough to kill the runner
		// mid-turn.
		killMidTurn(t, 20, []string{"--think", "2"}, func(p mailbox.Progress, _ []byte) bool {
			_, reached := p.Stages[stageSubmit]
			return reached
		})
	})
	t.Run("between the key and its proof", func(t *testing.T) {
		killMidTurn(t, 440, []string{"--think", "0.5", "--frozen-submit", "10"}, func(p mailbox.Progress, windowLog []byte) bool {
			if !strings.Contains(string(windowLog), `"event": "prompt"`) {
				return false
			}
			if _, proven := p.Stages[stageSubmit]; proven {
				t.Fatalf("the runner proved the submission before the test saw the window take it")
			}
			return true
		})
	})
}

// killMidTurn kills the runner once kill says so of the claim's progress
// and the window's log, and checks what the next runner does.
func killMidTurn(t *testing.T, x int, window []string, kill func(p mailbox.Progress, windowLog []byte) bool) {
	root := newRuntime(t, demoAgents)
	reply := repoRoot() + "/fixtures/demo/replies/Agent-3.md"
	w, windowLog := startWindow(t, "Agent-3", x, append([]string{"--reply-file", reply, "--chunks", "3", "--pause", "0.2"}, window...)...)
	calibration, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=gui-runner", "AGENTS_ROOT="+root, "AGENTS_AGENT=Agent-3",
			"AGENTS_WINDOW="+string(calibration), "AGENTS_SUBMIT_WAIT=60s")
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
	poll.Until(t, "the moment to kill the runner", func() bool {
		p, err := mb.ReadProgress(msg.ID)
		data, _ := os.ReadFile(windowLog)
		return err == nil && kill(p, data)
	})
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()

	second := start()
	t.Cleanup(func() { second.Process.Signal(syscall.SIGTERM); second.Wait() })
	poll.Until(t, "the message to be archived", func() bool { return counts(t, root, "Agent-3").Done == 1 })

	data, _ := os.ReadFile(windowLog)
	for _, event := range []string{"paste", "prompt"} {
		if n := len(regexp.MustCompile(`"event": "`+event+`"`).FindAll(data, -1)); n != 1 {
			t.Fatalf("the window's log holds %d %s events, want 1:\n%s", n, event, data)
		}
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
