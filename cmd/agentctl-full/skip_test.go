package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
	"github.com/agentctl/agentctl/mailbox"
)

// agentScript is a headless agent that, until the file "fast" exists,
// starts a child that sleeps a day and waits for it, recording both pids:
// a turn that only a skip can end, before any test's -timeout.
const agentScript = `cat >/dev/null
if [ -f "$DIR/fast" ]; then printf 'Done.\n\n` + "```" + `agentctl\n{"devlog": "did the long job"}\n` + "```" + `\n'; exit 0; fi
echo $$ > "$DIR/agent.pid.tmp" && mv "$DIR/agent.pid.tmp" "$DIR/agent.pid"
sleep 86400 &
echo $! > "$DIR/sleep.pid.tmp" && mv "$DIR/sleep.pid.tmp" "$DIR/sleep.pid"
wait
`

// agentctl runs the agentctl command (the test binary, see TestMain) and
// returns its stdout and stderr.
func agentctl(t testing.TB, root string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("agentctl", append([]string{"--root", root}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func mustAgentctl(t testing.TB, root string, args ...string) string {
	t.Helper()
	out, errOut, err := agentctl(t, root, args...)
	if err != nil {
		t.Fatalf("agentctl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// demoRuntime makes, in a new folder, a runtime of three agents with the
// demo's board, and returns the folder and the runtime in it.
func demoRuntime(t testing.TB) (dir, root string) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "3")
	board, err := os.ReadFile("../../fixtures/demo/board.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "project_board"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "project_board", "board.yaml"), board, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, root
}

// deadLetter puts a message in mb's deadletter/ the way a runner does: a
// consumer claims it and dead-letters it with reason.
func deadLetter(t testing.TB, mb *mailbox.Mailbox, known []string, reason string) mailbox.Message {
	t.Helper()
	msg := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "human", To: mb.Agent, Subject: "doomed", Body: "b", CreatedAt: time.Now().UTC()}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}
	c, err := mb.Consume(mailbox.Options{Known: known}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Deadletter(cl, reason, time.Now()); err != nil {
		t.Fatal(err)
	}
	return msg
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether pid no longer runs: it does not exist, or (seen in
// /proc on Linux) it is a zombie waiting for a parent that is not ours to
// make reap it.
func gone(pid int) bool {
	if !process.Alive(pid) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && bytes.HasPrefix(bytes.TrimSpace(data[i+1:]), []byte("Z"))
}

func TestSkipCutsTheTurnOfARunningRunnerAndRetryBringsTheMessageBack(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(agentScript), 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "Agent-2", "--subject", "long job", "Think for a long time."))

	runner := exec.Command("agentctl", "--root", root, "run", "Agent-1", "--log-format", "json", "--", "sh", script)
	runner.Env = append(os.Environ(), "DIR="+dir)
	var runnerLog syncbuf.Buffer // written by the runner while the test reads it
	runner.Stderr = &runnerLog
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		runner.Process.Signal(syscall.SIGINT)
		runner.Wait()
		if t.Failed() {
			t.Logf("runner log:\n%s", runnerLog.String())
		}
	}()
	poll.Until(t, "the agent's turn to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "sleep.pid"))
		return err == nil
	})
	agentPID, sleepPID := readPID(t, filepath.Join(dir, "agent.pid")), readPID(t, filepath.Join(dir, "sleep.pid"))

	out := mustAgentctl(t, root, "skip", "Agent-1", "--reason", "stuck")
	for _, want := range []string{"asked Agent-1's runner (pid " + strconv.Itoa(runner.Process.Pid) + ") to skip " + id, id + " skipped: it is in Agent-1's deadletter/" + mailbox.Stem(id) + ".json", "agentctl retry " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("skip said:\n%s\nwant %q", out, want)
		}
	}
	// The turn is cut: the agent's command and its child are gone, the
	// runner is not.
	poll.Until(t, "the agent's processes to end", func() bool { return gone(agentPID) && gone(sleepPID) })
	if gone(runner.Process.Pid) {
		t.Fatal("the runner stopped")
	}
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	dead, err := mb.List(mailbox.StateDead)
	if err != nil || len(dead) != 1 || dead[0].Message.ID != id || dead[0].Reason != "skipped by a person: stuck" {
		t.Fatalf("dead letters = %+v, %v", dead, err)
	}
	if processing, _ := mb.List(mailbox.StateProcessing); len(processing) != 0 {
		t.Errorf("processing/ still holds %+v", processing)
	}
	if _, err := os.Stat(filepath.Join(mb.Dir, mailbox.SkipJSON)); !os.IsNotExist(err) {
		t.Errorf("the skip request is still there: %v", err)
	}
	devlog, _ := os.ReadFile(filepath.Join(root, "devlogs", "Agent-1.md"))
	if !bytes.Contains(devlog, []byte("skipped")) || !bytes.Contains(devlog, []byte("skipped by a person: stuck")) {
		t.Errorf("devlog:\n%s", devlog)
	}
	poll.Until(t, "the runner to log the skip", func() bool { return strings.Contains(runnerLog.String(), `"event":"skipped"`) })

	// Brought back, the message is worked again and completes.
	if err := os.WriteFile(filepath.Join(dir, "fast"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out = mustAgentctl(t, root, "retry", id)
	if !strings.Contains(out, id+" is back in Agent-1's inbox (it was dead: skipped by a person: stuck)") {
		t.Errorf("retry said %q", out)
	}
	poll.Until(t, "the message to be archived", func() bool {
		done, _ := mb.List(mailbox.StateDone)
		return len(done) == 1 && done[0].Receipt != nil
	})
	done, _ := mb.List(mailbox.StateDone)
	if done[0].Message.ID != id || done[0].Receipt.Outcome != "done" {
		t.Errorf("archived %+v, receipt %+v", done[0].Message, done[0].Receipt)
	}
	if h := mailbox.Deaths(done[0].Message); len(h) != 1 {
		t.Errorf("the archived message lost how it died: meta %v", done[0].Message.Meta)
	}
	d, err := receipt.Read(done[0].Receipt)
	if h := d.DeadletterHistory; err != nil || len(h) != 1 || !strings.Contains(h[0].Reason, "skipped by a person: stuck") {
		t.Errorf("the receipt does not say how the message died before: %s (%v)", done[0].Receipt.Data, err)
	}
	if dead, _ := mb.List(mailbox.StateDead); len(dead) != 0 {
		t.Errorf("deadletter/ still holds %+v", dead)
	}
}

func TestSkipWithoutARunnerSettlesTheClaimItself(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	if _, _, err := agentctl(t, root, "skip", "Agent-1"); err == nil {
		t.Fatal("skip with nothing in flight succeeded")
	}
	id := strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "Agent-2", "--ack", "work"))
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	// A runner that died mid-turn: the claim stays in processing/.
	c, err := mb.Consume(mailbox.Options{Known: []string{"Agent-1", "Agent-2"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(time.Now()); err != nil {
		t.Fatal(err)
	}
	c.Close()

	out := mustAgentctl(t, root, "skip", "Agent-1", "--reason", "agent crashed")
	if !strings.Contains(out, id+" skipped: no runner was up") {
		t.Errorf("skip said %q", out)
	}
	dead, _ := mb.List(mailbox.StateDead)
	if len(dead) != 1 || dead[0].Reason != "skipped by a person: agent crashed" {
		t.Fatalf("dead letters = %+v", dead)
	}
	devlog, _ := os.ReadFile(filepath.Join(root, "devlogs", "Agent-1.md"))
	if !bytes.Contains(devlog, []byte("skipped by a person: agent crashed")) {
		t.Errorf("devlog:\n%s", devlog)
	}
	// The sender asked for a receipt, and hears how its message ended.
	sender, _ := mailbox.Open(root, "Agent-2")
	pending, _ := sender.List(mailbox.StatePending)
	if len(pending) != 1 || !strings.Contains(pending[0].Message.Body, "skipped by a person: agent crashed") {
		t.Errorf("Agent-2's inbox = %+v", pending)
	}
}
