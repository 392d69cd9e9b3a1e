package agents

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

func init() {
	roles["slow-runner"] = slowRunnerProcess
	roles["slow-agent"] = slowAgent
}

// slowRunnerProcess is a runner whose exec agent is slowAgent, configured
// by the environment the test gives the runner.
func slowRunnerProcess() int {
	root, agent := os.Getenv("AGENTS_ROOT"), os.Getenv("AGENTS_AGENT")
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/usr/bin/env", "AGENTS_TEST_ROLE=slow-agent", os.Args[0]}, Timeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return runUntilStopped("slow-runner", testSettings(root, agent, []string{agent}, d))
}

// slowAgent is a headless agent that works for SLOW_AGENT_HOLD before it
// replies. It notes in SLOW_AGENT_DIR/log when it starts ("start PID"),
// and ("overlap PID") when it finds another copy still at work on the same
// prompt: a flock, released by the kernel when its holder dies, tells.
// With SLOW_AGENT_FORK=1 the work is done by a second process in the same
// process group, which a parent-death signal to the first never reaches.
func slowAgent() int {
	prompt, _ := io.ReadAll(os.Stdin)
	dir := os.Getenv("SLOW_AGENT_DIR")
	if os.Getenv("SLOW_AGENT_FORK") == "1" {
		worker := exec.Command(os.Args[0])
		worker.Env = append(os.Environ(), "SLOW_AGENT_FORK=0")
		worker.Stdin, worker.Stdout, worker.Stderr = bytes.NewReader(prompt), os.Stdout, os.Stderr
		if err := worker.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "slow-agent:", err)
			return 1
		}
		return 0
	}
	note := func(what string) {
		f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%s %d\n", what, os.Getpid())
			f.Close()
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slow-agent:", err)
		return 1
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		note("overlap")
		fmt.Fprintln(os.Stderr, "slow-agent: another copy is still working on this prompt")
		return 1
	}
	note("start")
	hold, _ := time.ParseDuration(os.Getenv("SLOW_AGENT_HOLD"))
	time.Sleep(hold)
	fmt.Println("Done.")
	return 0
}

// slowSetup makes a runtime with one message for Agent-1 and returns a
// function that starts a runner for it whose agent works for hold.
func slowSetup(t *testing.T, fork bool) (root, dir string, start func(hold time.Duration) *exec.Cmd) {
	root = newRuntime(t, []string{"Agent-1"})
	dir = t.TempDir()
	deliverTo(t, root, mailbox.Message{ID: "m-slow", From: "human", To: "Agent-1", Body: "take your time"})
	t.Cleanup(func() {
		// A failed run may leave agents sleeping; they must not outlive it.
		for _, pid := range agentPids(dir, "start") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	forkFlag := "SLOW_AGENT_FORK=0"
	if fork {
		forkFlag = "SLOW_AGENT_FORK=1"
	}
	start = func(hold time.Duration) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=slow-runner", "AGENTS_ROOT="+root, "AGENTS_AGENT=Agent-1",
			"SLOW_AGENT_DIR="+dir, "SLOW_AGENT_HOLD="+hold.String(), forkFlag)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	return root, dir, start
}

// agentPids returns the pids the agents' log notes with what.
func agentPids(dir, what string) []int {
	f, err := os.Open(filepath.Join(dir, "log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	for s := bufio.NewScanner(f); s.Scan(); {
		w, p, _ := strings.Cut(s.Text(), " ")
		if pid, err := strconv.Atoi(p); err == nil && w == what {
			pids = append(pids, pid)
		}
	}
	return pids
}

// running reports whether pid is a process that has not ended; a zombie
// has.
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || !bytes.HasPrefix(stat[i+1:], []byte(" Z"))
}

// killDuringTurn starts a runner whose agent works for a long time, waits
// until the agent has started, and SIGKILLs the runner. It returns the
// agent's pid.
func killDuringTurn(t *testing.T, dir string, start func(time.Duration) *exec.Cmd) int {
	t.Helper()
	runner := start(10 * time.Minute)
	poll.Until(t, "the agent to start", func() bool { return len(agentPids(dir, "start")) == 1 })
	runner.Process.Kill()
	runner.Wait()
	return agentPids(dir, "start")[0]
}

// A runner killed mid-turn takes its agent's command with it.
func TestKilledRunnerTakesItsCommandAlong(t *testing.T) {
	_, dir, start := slowSetup(t, false)
	agent := killDuringTurn(t, dir, start)
	// Parent-death signals are delivered at once; the limit only bounds a
	// failure.
	poll.Until(t, fmt.Sprintf("agent %d to end with its runner", agent), func() bool { return !running(agent) })
}

// When a command outlives its runner (here the agent's worker, which a
// parent-death signal does not reach), the next runner ends the recorded
// process group before it sends the prompt again: the prompt never runs
// twice at once.
func TestRestartedRunnerEndsTheRecordedCommandFirst(t *testing.T) {
	root, dir, start := slowSetup(t, true)
	worker := killDuringTurn(t, dir, start)
	if !running(worker) {
		t.Fatalf("the worker %d died with the runner; this test needs one that survives it", worker)
	}

	start(0)
	poll.Until(t, "the message to be settled", func() bool {
		c := counts(t, root, "Agent-1")
		return c.Done+c.Dead == 1
	})
	if overlaps := agentPids(dir, "overlap"); len(overlaps) > 0 {
		t.Errorf("the prompt ran again (pids %v) while the first worker %d still worked on it", overlaps, worker)
	}
	if c := counts(t, root, "Agent-1"); c.Done != 1 {
		t.Errorf("counts = %+v, want the message archived", c)
	}
	if starts := agentPids(dir, "start"); len(starts) != 2 {
		t.Errorf("the agent started %d times (%v), want twice: once per runner", len(starts), starts)
	}
	if running(worker) {
		t.Errorf("the first worker %d still runs", worker)
	}
}

// abandonStarted claims the message for Agent-1 and records child as its
// started command, as a runner killed between starting the command and
// recording its submission leaves it.
func abandonStarted(t *testing.T, root string, child cursor.Child, at time.Time) {
	t.Helper()
	mb, _ := mailbox.Open(root, "Agent-1")
	c, err := mb.Consume(mailbox.Options{Known: []string{"Agent-1"}}, at)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := c.Claim(at)
	if err != nil {
		t.Fatal(err)
	}
	started := &claim{Claim: cl, turn: turnRecord{Child: &child}}
	if err := started.save(); err != nil {
		t.Fatal(err)
	}
	if err := c.Record(cl, stageStarted, at); err != nil {
		t.Fatal(err)
	}
}

// The runner ends a recorded command that still runs before it takes the
// turn, whether it then sends the prompt again (run.resend) or gives the
// message up: the command had the prompt, so the claim counts as submitted.
func TestResumeEndsTheRecordedCommand(t *testing.T) {
	for _, resend := range []bool{true, false} {
		t.Run(fmt.Sprintf("resend=%v", resend), func(t *testing.T) {
			root, dir, _ := slowSetup(t, false)
			// The command a dead runner started, in a group of its own.
			left := exec.Command(os.Args[0], "-test.run=^$")
			left.Env = append(os.Environ(), "AGENTS_TEST_ROLE=slow-agent", "SLOW_AGENT_DIR="+dir, "SLOW_AGENT_HOLD=10m")
			left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := left.Start(); err != nil {
				t.Fatal(err)
			}
			reaped := make(chan struct{})
			go func() { left.Wait(); close(reaped) }()
			poll.Until(t, "the command to start", func() bool { return len(agentPids(dir, "start")) == 1 })
			st, err := process.StartTime(left.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			abandonStarted(t, root, cursor.Child{PID: left.Process.Pid, PGID: left.Process.Pid, StartTime: st}, time.Now())

			d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/usr/bin/env", "AGENTS_TEST_ROLE=slow-agent", "SLOW_AGENT_DIR=" + dir, "SLOW_AGENT_HOLD=0s", os.Args[0]}})
			if err != nil {
				t.Fatal(err)
			}
			s := testSettings(root, "Agent-1", []string{"Agent-1"}, d)
			s.Resend = resend
			s.Log = logOnFailure(t)
			startRunner(t, s)
			poll.Until(t, "the message to be settled", func() bool {
				c := counts(t, root, "Agent-1")
				return c.Done+c.Dead == 1
			})
			poll.Until(t, "the recorded command to end", func() bool {
				select {
				case <-reaped:
					return true
				default:
					return false
				}
			})
			if overlaps := agentPids(dir, "overlap"); len(overlaps) > 0 {
				t.Errorf("the prompt ran again (pids %v) while the recorded command still worked on it", overlaps)
			}
			want, starts := mailbox.Counts{Dead: 1}, 1
			if resend {
				want, starts = mailbox.Counts{Done: 1}, 2
			}
			if c := counts(t, root, "Agent-1"); c != want {
				t.Errorf("counts = %+v, want %+v", c, want)
			}
			if n := len(agentPids(dir, "start")); n != starts {
				t.Errorf("the agent started %d times, want %d", n, starts)
			}
		})
	}
}

// Recovery leaves a claim whose command started for a runner to resume,
// like a submitted one: requeued, it would run beside what is left of it.
func TestRequeueLeavesAStartedCommand(t *testing.T) {
	root := newRuntime(t, []string{"Agent-1"})
	deliverTo(t, root, mailbox.Message{ID: "m-started", From: "human", To: "Agent-1", Body: "x"})
	t0 := time.Now()
	abandonStarted(t, root, cursor.Child{PID: 1 << 22}, t0)
	rc := testRecovery(root, []string{"Agent-1"})
	found, err := rc.Requeue(t0.Add(rc.S.Lease + time.Minute))
	if err != nil || len(found) != 1 || found[0].Kind != "waiting-for-resume" {
		t.Fatalf("Requeue = %v, %v; want the claim waiting for resume", found, err)
	}
	if c := counts(t, root, "Agent-1"); c.Processing != 1 {
		t.Errorf("counts = %+v, want the claim left in processing/", c)
	}
}
