package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/internal/profiling"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// execRuntime is a runtime folder whose n agents are exec seats running
// cat, so a turn costs the agent nothing but a spawn.
func execRuntime(b *testing.B, agentctl string, n int) string {
	b.Helper()
	root := filepath.Join(b.TempDir(), "runtime")
	timed(b, exec.Command(agentctl, "--root", root, "init", "--agents", fmt.Sprint(n)))
	var conf strings.Builder
	// No prompt rate limit: the benchmarks send more than a minute's.
	conf.WriteString("rate_limit: {per_minute: 0, per_hour: 0}\nagents:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&conf, "  - {name: Agent-%d, driver: exec, exec: {command: [cat]}}\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(conf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return root
}

// startRunner starts agentctl run for agent, writing its profiles into
// profiles where set (see keepProfiles), and returns once status.json says it is
// idle; the runner is stopped when the benchmark ends, if not before
// (stopRunner).
func startRunner(b *testing.B, agentctl, root, agent, profiles string) (*exec.Cmd, *bytes.Buffer) {
	b.Helper()
	run := exec.Command(agentctl, "--root", root, "run", agent)
	if profiles != "" {
		run.Env = append(os.Environ(), profiling.EnvDir+"="+profiles)
	}
	var logs bytes.Buffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		run.Process.Signal(os.Interrupt)
		run.Wait()
	})
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		b.Fatal(err)
	}
	poll.Until(b, "the runner of "+agent+" to be idle", func() bool {
		st, err := mb.ReadStatus()
		return err == nil && st.State == "idle"
	})
	return run, &logs
}

// runnerLoopMessages is how many messages one run of BenchmarkRunnerLoop
// sends through the runner.
const runnerLoopMessages = 200

// BenchmarkRunnerLoop: what agentctl run costs a message beyond its agent.
// The runner is stopped (SIGSTOP) while 200 messages are delivered, then
// let go and timed until all are archived; the anchor is a loop that only
// spawns cat with each message and reads its reply. The target is ≤ 1 ms
// a message over the anchor (ms/msg-over). cursor's BenchmarkExecStart
// shows what the turn's guard, the seat's host, costs a turn on its own.
func BenchmarkRunnerLoop(b *testing.B) {
	dir := b.TempDir()
	agentctl := buildReleased(b, dir)
	const body = "ping: answer with the word pong"
	catPath, err := exec.LookPath("cat")
	if err != nil {
		b.Fatal(err)
	}
	var measure, anchor time.Duration
	var measureCPU, anchorCPU float64 // ms
	for range b.N {
		root := execRuntime(b, agentctl, 2)
		run, logs := startRunner(b, agentctl, root, "Agent-1", "")
		mb, err := mailbox.Open(root, "Agent-1")
		if err != nil {
			b.Fatal(err)
		}
		self0 := rusageMS(b)
		anchor += spawnLoop(b, body, catPath)
		anchorCPU += rusageMS(b) - self0

		cpu0 := treeTicks(b, run.Process.Pid)
		measure += loopThrough(b, run, mb, body, logs)
		measureCPU += float64(treeTicks(b, run.Process.Pid)-cpu0) * 10 // 100 ticks a second
	}
	n := float64(b.N * runnerLoopMessages)
	if over := float64((measure - anchor).Microseconds()) / n / 1000; over > 1 {
		// Once more with the profiler on, which the measured runs go
		// without.
		profiles := filepath.Join(dir, "profiles")
		root := execRuntime(b, agentctl, 2)
		run, logs := startRunner(b, agentctl, root, "Agent-1", profiles)
		mb, err := mailbox.Open(root, "Agent-1")
		if err != nil {
			b.Fatal(err)
		}
		loopThrough(b, run, mb, body, logs)
		stopRunner(run)
		keepProfiles(b, profiles, fmt.Sprintf("the runner's %.1f ms a message over the anchor", over))
	}
	b.ReportMetric(float64(measure.Microseconds())/n, "µs/measure")
	b.ReportMetric(float64(anchor.Microseconds())/n, "µs/anchor")
	b.ReportMetric(float64(measure)/float64(anchor), "ratio")
	b.ReportMetric(float64((measure-anchor).Microseconds())/n/1000, "ms/msg-over")
	// CPU time is steadier than wall time on a loaded machine: the
	// runner's own and its turns' (host and cat), against the CPU the
	// spawn-only loop used.
	b.ReportMetric(measureCPU/n, "CPU-ms/msg")
	b.ReportMetric(anchorCPU/n, "anchor-CPU-ms/msg")
}

// spawnLoop runs the command args once for each message, with body on
// its stdin, checks that each gives body back, and returns how long it all
// took.
func spawnLoop(b *testing.B, body string, args ...string) time.Duration {
	b.Helper()
	start := time.Now()
	for range runnerLoopMessages {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.Output(); err != nil || string(out) != body {
			b.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
	}
	return time.Since(start)
}

// treeTicks is the CPU time of a process and of the children it has
// waited for, in clock ticks (fields 14 to 17 of /proc/PID/stat).
func treeTicks(b *testing.B, pid int) int {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	sum := 0
	for _, v := range f[11:15] {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		sum += n
	}
	return sum
}

// rusageMS is the CPU time this process and its waited-for children have
// used, in milliseconds.
func rusageMS(b *testing.B) float64 {
	b.Helper()
	var total float64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	return total
}

// dreamOSPoller is the anchor of BenchmarkIdleRunner: Dream.OS's way of
// waiting for messages, a Python loop that reads the inbox every 5 s.
const dreamOSPoller = `
import json, os, sys, time
inbox = sys.argv[1]
while True:
    for name in sorted(os.listdir(inbox)):
        if name.endswith(".json"):
            with open(os.path.join(inbox, name)) as f:
                json.load(f)
    time.sleep(5)
`

// BenchmarkIdleRunner: agentctl run for an exec agent with nothing to do,
// left idle for AGENTCTL_IDLE_SECONDS (default 30) beside Dream.OS's
// Python poller watching another inbox over the same seconds: the RSS of
// each, and the CPU each used a second (targets: ≤ 8 MB, ≤ 0.1 ms/s).
func BenchmarkIdleRunner(b *testing.B) {
	secs := 30
	if s, err := strconv.Atoi(os.Getenv("AGENTCTL_IDLE_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	dir := b.TempDir()
	agentctl := buildReleased(b, dir)
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Fatal("the anchor needs python3: ", err)
	}
	for range b.N {
		root := execRuntime(b, agentctl, 2)
		run, _ := startRunner(b, agentctl, root, "Agent-1", "")
		poller := exec.Command(python, "-c", dreamOSPoller, filepath.Join(root, "agent_mailboxes", "Agent-2", "inbox"))
		if err := poller.Start(); err != nil {
			b.Fatal(err)
		}
		// Past start-up, which ends settledAfter in (a runner then lets
		// go of what only start-up needed), and 10 s more.
		time.Sleep(settledAfter + 10*time.Second)
		r0, p0 := cpuNS(b, run.Process.Pid), cpuNS(b, poller.Process.Pid)
		time.Sleep(time.Duration(secs) * time.Second)
		r1, p1 := cpuNS(b, run.Process.Pid), cpuNS(b, poller.Process.Pid)
		rss, prss := usage(b, process.RSSKB, run.Process.Pid), usage(b, process.RSSKB, poller.Process.Pid)
		poller.Process.Kill()
		poller.Wait()
		b.ReportMetric(float64(rss)/1024, "RSS-MB")
		b.ReportMetric(float64(prss)/1024, "anchor-RSS-MB")
		cpu := float64(r1-r0) / 1e6 / float64(secs)
		b.ReportMetric(cpu, "CPU-ms/s")
		b.ReportMetric(float64(p1-p0)/1e6/float64(secs), "anchor-CPU-ms/s")
		if st, err := os.ReadFile(filepath.Join(root, "agent_mailboxes", "Agent-1", "status.json")); err == nil {
			var s struct{ State string }
			if json.Unmarshal(st, &s) == nil && s.State != "idle" {
				b.Fatalf("the runner was %s, not idle", s.State)
			}
		}
		if over := idleOver(float64(rss)/1024, cpu); over != "" {
			// Once more with the profiler on, whose buffers the measured
			// runner goes without, over the same time.
			profiles := filepath.Join(dir, "profiles")
			run, _ := startRunner(b, agentctl, execRuntime(b, agentctl, 2), "Agent-1", profiles)
			time.Sleep(settledAfter + 10*time.Second + time.Duration(secs)*time.Second)
			stopRunner(run)
			keepProfiles(b, profiles, over)
		}
	}
}

// idleOver names the idle runner's figures over their targets (≤ 8 MB,
// ≤ 0.1 ms of CPU a second), or is empty.
func idleOver(rssMB, cpuMSPerS float64) string {
	var over []string
	if rssMB > 8 {
		over = append(over, fmt.Sprintf("the idle runner's %.1f MB", rssMB))
	}
	if cpuMSPerS > 0.1 {
		over = append(over, fmt.Sprintf("the idle runner's %.2f ms of CPU a second", cpuMSPerS))
	}
	return strings.Join(over, " and ")
}

// cpuNS is the CPU time all threads of a process have used, in
// nanoseconds (/proc/PID/task/*/schedstat): fine enough for a process
// that uses a fraction of a millisecond a second.
func cpuNS(b *testing.B, pid int) int64 {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no threads of %d: %v", pid, err)
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that just ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", t, err)
		}
		sum += n
	}
	return sum
}

// loopThrough stops the runner (SIGSTOP), delivers runnerLoopMessages
// messages with body, lets it go and returns how long it took to archive
// them all.
func loopThrough(b *testing.B, run *exec.Cmd, mb *mailbox.Mailbox, body string, logs *bytes.Buffer) time.Duration {
	b.Helper()
	if err := run.Process.Signal(syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	for i := range runnerLoopMessages {
		msg := mailbox.Message{ID: fmt.Sprintf("loop-%d", i), From: "Agent-2", To: "Agent-1", Body: body, Priority: mailbox.Normal, CreatedAt: time.Now().UTC()}
		if err := mb.Deliver(msg); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if err := run.Process.Signal(syscall.SIGCONT); err != nil {
		b.Fatal(err)
	}
	var c mailbox.Counts
	poll.Until(b, fmt.Sprintf("%d messages archived", runnerLoopMessages), func() bool {
		var err error
		if c, err = mb.Count(); err != nil {
			b.Fatal(err)
		}
		return c.Done+c.Dead == runnerLoopMessages
	})
	took := time.Since(start)
	if c.Dead > 0 {
		b.Fatalf("%d messages dead-lettered:\n%s", c.Dead, logs)
	}
	return took
}

// stopRunner stops a runner as Ctrl+C does and waits for it, so that its
// profiles are written.
func stopRunner(run *exec.Cmd) {
	run.Process.Signal(os.Interrupt)
	run.Wait()
}

// keepProfiles keeps the profiles a stopped runner wrote into profiles
// when its figure was over its target (over names which): they are moved
// to AGENTCTL_BENCH_PROFILES (scripts/bench sets it), or else to a folder
// of the system's temporary one, and the benchmark says where. A runner
// within its targets leaves none.
func keepProfiles(b *testing.B, profiles, over string) {
	b.Helper()
	if over == "" {
		return
	}
	keep := os.Getenv("AGENTCTL_BENCH_PROFILES")
	if keep == "" {
		keep = filepath.Join(os.TempDir(), "agentctl-bench-profiles")
	}
	keep = filepath.Join(keep, strings.TrimPrefix(b.Name(), "Benchmark")+"-"+time.Now().UTC().Format("20060102T150405"))
	if err := os.MkdirAll(filepath.Dir(keep), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(profiles, keep); err != nil {
		b.Fatalf("cannot keep the runner's profiles: %v", err)
	}
	b.Logf("%s is over its target; the runner's profiles: %s (go tool pprof -top %s/run-*.cpu.pprof)", over, keep, keep)
}
