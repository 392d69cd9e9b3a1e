package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/process"
	"github.com/agentctl/agentctl/mailbox"
)

// syncBuffer is the combined log the tests read while seats write it.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// next returns the log so far and a channel closed by the next write.
func (b *syncBuffer) next() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.buf.String(), b.changed
}

// await waits until the log matches re n times and returns the matches.
// It looks again at every write; a log that never matches hangs until the
// test binary's own timeout.
func await(t *testing.T, log *syncBuffer, re string, n int) [][]string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for {
		s, changed := log.next()
		if m := rx.FindAllStringSubmatch(s, -1); len(m) >= n {
			return m
		}
		<-changed
	}
}

// passBackoff lets a backoff pass once sleepers loops sleep on clk: the
// supervisor's stop watch and the seats waiting out a backoff.
func passBackoff(clk *clocktest.Clock, sleepers int) {
	clk.BlockUntil(sleepers)
	clk.Advance(DefaultPolicy().MaxBackoff)
}

func sh(script string) func(string) *exec.Cmd {
	return func(agent string) *exec.Cmd { return exec.Command("sh", "-c", script, "sh", agent) }
}

func start(t *testing.T, s Settings) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// A runner killed with kill -9 is started again, and every runner is
// stopped with SIGTERM when the supervisor's context ends.
func TestKilledRunnersComeBackAndAllStopAtTheEnd(t *testing.T) {
	log := &syncBuffer{}
	clk := clocktest.New(time.Now())
	stop := start(t, Settings{
		Root: t.TempDir(), Agents: []string{"Agent-1", "Agent-2"}, Log: log, Grace: 10 * time.Second, Clock: clk,
		Command: sh(`trap 'echo "$1 stopping"; exit 0' TERM; echo "$1 serving $$"; while :; do sleep 0.05; done`),
	})
	first := await(t, log, `Agent-1 \| Agent-1 serving (\d+)`, 1)[0][1]
	await(t, log, `Agent-2 \| Agent-2 serving (\d+)`, 1)
	pid, _ := strconv.Atoi(first)
	if p, err := os.FindProcess(pid); err != nil || p.Kill() != nil { // kill -9
		t.Fatalf("cannot kill runner %d: %v", pid, err)
	}
	await(t, log, `Agent-1 \| up: runner ended \(signal: killed\)`, 1)
	if n := strings.Count(log.String(), "Agent-1 | Agent-1 serving"); n != 1 {
		t.Fatalf("started %d times before its backoff passed:\n%s", n, log)
	}
	passBackoff(clk, 2) // the stop watch, and Agent-1 waiting out its backoff
	second := await(t, log, `Agent-1 \| Agent-1 serving (\d+)`, 2)[1][1]
	if second == first {
		t.Fatalf("the killed runner %s was not replaced", first)
	}
	stop()
	out := log.String()
	for _, want := range []string{"Agent-1 | Agent-1 stopping", "Agent-2 | Agent-2 stopping", "Agent-1 | up: runner stopped (exit status 0)"} {
		if !bytes.Contains([]byte(out), []byte(want)) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if p, _ := strconv.Atoi(second); process.Alive(p) {
		t.Errorf("runner %d outlived the supervisor", p)
	}
}

// A runner that keeps dying is restarted, and the person in the loop and
// the devlog hear about it once, with its last lines.
func TestACrashLoopIsToldOnce(t *testing.T) {
	root := t.TempDir()
	log := &syncBuffer{}
	p := DefaultPolicy()
	p.NoticeAfter = 3
	clk := clocktest.New(time.Now())
	stop := start(t, Settings{
		Root: root, Agents: []string{"Agent-1"}, Human: "human", Log: log, Policy: p,
		Command: sh(`echo "cannot open the window" >&2; exit 3`), Clock: clk,
	})
	for deaths := 1; deaths <= 6; deaths++ {
		await(t, log, `up: runner ended \(exit status 3\)`, deaths)
		passBackoff(clk, 2)
	}
	await(t, log, `up: told human and the devlog: 3 deaths in a row`, 1)
	stop()
	inbox, err := filepath.Glob(filepath.Join(mailbox.Dir(root, "human"), mailbox.InboxDir, "*.json"))
	if err != nil || len(inbox) != 1 {
		t.Fatalf("human's inbox holds %v (%v), want one notice", inbox, err)
	}
	notice, _ := os.ReadFile(inbox[0])
	for _, want := range []string{"keeps crashing", "cannot open the window", "exit status 3", "agentctl run Agent-1"} {
		if !bytes.Contains(notice, []byte(want)) {
			t.Errorf("notice lacks %q: %s", want, notice)
		}
	}
	dl, _ := os.ReadFile(filepath.Join(root, "devlogs", "Agent-1.md"))
	if n := bytes.Count(dl, []byte("runner keeps crashing")); n != 1 {
		t.Errorf("devlog tells the crash loop %d times, want once:\n%s", n, dl)
	}
}

// A runner that stops needing a person (its credentials refused) is not
// restarted however long up waits; the person hears it once, with its
// error and hint, and an edit of agentctl.yaml starts it again.
func TestARunnerThatNeedsAPersonWaitsForTheirEdit(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "agentctl.yaml")
	if err := os.WriteFile(conf, []byte("agents: [Agent-1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	p := DefaultPolicy()
	clk := clocktest.New(time.Now())
	start(t, Settings{
		Root: root, Agents: []string{"Agent-1"}, Human: "human", Log: log, Policy: p, Clock: clk, Watch: []string{conf},
		Command: sh(`echo "agentctl: the model API refused its credentials" >&2; echo "hint: set ANTHROPIC_API_KEY" >&2; exit 78`),
	})
	await(t, log, `up: runner stopped and needs a person \(exit status 78\); not restarting it until .*agentctl.yaml changes`, 1)
	for range 10 {
		clk.BlockUntil(2) // the stop watch, and the parked seat
		clk.Advance(p.MaxBackoff)
	}
	if n := strings.Count(log.String(), "hint: set ANTHROPIC_API_KEY"); n != 1 {
		t.Fatalf("the runner ran %d times while parked, want once:\n%s", n, log)
	}
	inbox, err := filepath.Glob(filepath.Join(mailbox.Dir(root, "human"), mailbox.InboxDir, "*.json"))
	if err != nil || len(inbox) != 1 {
		t.Fatalf("human's inbox holds %v (%v), want one notice", inbox, err)
	}
	notice, _ := os.ReadFile(inbox[0])
	for _, want := range []string{"needs you", "refused its credentials", "hint: set ANTHROPIC_API_KEY", "agentctl.yaml changes"} {
		if !bytes.Contains(notice, []byte(want)) {
			t.Errorf("notice lacks %q: %s", want, notice)
		}
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(conf, later, later); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(2)
	clk.Advance(p.WatchEvery)
	await(t, log, `changed; starting the runner again`, 1)
	await(t, log, `hint: set ANTHROPIC_API_KEY`, 2)
}

// A runner started by hand is watched, not duplicated; when it goes, the
// supervisor starts its own.
func TestARunnerStartedByHandIsLeftAlone(t *testing.T) {
	root := t.TempDir()
	byHand := runnerByHand(t, root, "Agent-1")
	log := &syncBuffer{}
	p := DefaultPolicy()
	clk := clocktest.New(time.Now())
	start(t, Settings{
		Root: root, Agents: []string{"Agent-1"}, Log: log, Policy: p, Grace: 10 * time.Second, Clock: clk,
		Command: sh(`echo "serving"; exec sleep 60`),
	})
	await(t, log, `a runner started by hand \(pid `+strconv.Itoa(os.Getpid())+`\) serves it`, 1)
	if bytes.Contains([]byte(log.String()), []byte("serving")) {
		t.Fatalf("a second runner was started:\n%s", log)
	}
	byHand.Close()
	clk.BlockUntil(2) // the stop watch, and the seat watching the hand-started runner
	clk.Advance(p.WatchEvery)
	await(t, log, `Agent-1 \| serving`, 1)
}

// Only one supervisor holds a runtime, and it is named to whoever asks.
func TestOneSupervisorPerRuntime(t *testing.T) {
	root := t.TempDir()
	release, err := Lock(root)
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := Running(root); !ok || pid != os.Getpid() {
		t.Fatalf("Running = %d, %v; want this process", pid, ok)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLock$")
	cmd.Env = append(os.Environ(), "SUPERVISE_LOCK_ROOT="+root)
	out, _ := cmd.CombinedOutput()
	if want := "already running here (pid " + strconv.Itoa(os.Getpid()) + ")"; !bytes.Contains(out, []byte(want)) {
		t.Fatalf("a second supervisor said %q, want %q", out, want)
	}
	release()
	if pid, ok := Running(root); ok {
		t.Fatalf("a released lock still names pid %d", pid)
	}
}

// TestHelperLock is the second supervisor of TestOneSupervisorPerRuntime.
func TestHelperLock(t *testing.T) {
	root := os.Getenv("SUPERVISE_LOCK_ROOT")
	if root == "" {
		return
	}
	if _, err := Lock(root); err != nil {
		os.Stdout.WriteString(err.Error())
	}
}

// With JSON set the combined log is JSON objects only: the runners' own
// pass as they are, anything else they write and the supervisor's lines
// become objects naming their agent.
func TestTheJSONLogIsJSONOnly(t *testing.T) {
	log := &syncBuffer{}
	stop := start(t, Settings{
		Root: t.TempDir(), Agents: []string{"Agent-1"}, Log: log, JSON: true, Grace: 10 * time.Second,
		Command: sh(`echo '{"agent":"Agent-1","event":"started"}'; echo 'panic: not JSON'; exec sleep 60`),
	})
	await(t, log, `"message":"panic: not JSON"`, 1)
	stop()
	lines := bytes.Split(bytes.TrimSpace([]byte(log.String())), []byte("\n"))
	for _, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal(l, &obj); err != nil || obj["agent"] != "Agent-1" {
			t.Errorf("not a JSON object naming Agent-1: %s (%v)", l, err)
		}
	}
	if !bytes.Contains([]byte(log.String()), []byte(`{"agent":"Agent-1","event":"started"}`+"\n")) {
		t.Errorf("the runner's own object was changed:\n%s", log)
	}
}

// A stop request, the way down stops up where there are no signals, stops
// every runner and ends Run.
func TestAStopRequestEndsRun(t *testing.T) {
	root := t.TempDir()
	release, err := Lock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	log := &syncBuffer{}
	p := DefaultPolicy()
	clk := clocktest.New(time.Now())
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Settings{
			Root: root, Agents: []string{"Agent-1"}, Log: log, Policy: p, Grace: 10 * time.Second, Clock: clk,
			Command: sh(`trap 'echo stopping; exit 0' TERM; echo serving; while :; do sleep 0.05; done`),
		})
	}()
	await(t, log, `Agent-1 \| serving`, 1)
	if err := RequestStop(root); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(1) // the stop watch; the runner sleeps on no clock
	clk.Advance(p.WatchEvery)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	await(t, log, `Agent-1 \| up: runner stopped`, 1)
	if _, err := os.Stat(StopPath(root)); !os.IsNotExist(err) {
		t.Errorf("the stop request is still there: %v", err)
	}
}

// With agents whose turns are taken on other machines, one more child runs
// the hub; its crash loop is told as the hub's, with the command to run it
// by hand.
func TestTheHubIsKeptAliveAndItsCrashLoopTold(t *testing.T) {
	root := t.TempDir()
	log := &syncBuffer{}
	p := DefaultPolicy()
	p.NoticeAfter = 2
	clk := clocktest.New(time.Now())
	var mu sync.Mutex
	var asked []string
	stop := start(t, Settings{
		Root: root, Hub: []string{"Agent-5", "Agent-6"}, Human: "human", Log: log, Policy: p, Clock: clk,
		Command: func(name string) *exec.Cmd {
			mu.Lock()
			asked = append(asked, name)
			mu.Unlock()
			return exec.Command("sh", "-c", `echo "cannot listen" >&2; exit 1`)
		},
	})
	for deaths := 1; deaths <= 3; deaths++ {
		await(t, log, `hub \| up: hub ended \(exit status 1\)`, deaths)
		passBackoff(clk, 2)
	}
	await(t, log, `hub \| up: told human and the devlog: 2 deaths in a row`, 1)
	stop()
	mu.Lock()
	if asked[0] != HubName {
		t.Errorf("Command was asked for %q, want %q", asked[0], HubName)
	}
	mu.Unlock()
	inbox, _ := filepath.Glob(filepath.Join(mailbox.Dir(root, "human"), mailbox.InboxDir, "*.json"))
	if len(inbox) != 1 {
		t.Fatalf("human's inbox holds %v, want one notice", inbox)
	}
	notice, _ := os.ReadFile(inbox[0])
	for _, want := range []string{"the hub (agentctl hub) of Agent-5, Agent-6 keeps crashing", "cannot listen", "Run 'agentctl hub' by hand"} {
		if !bytes.Contains(notice, []byte(want)) {
			t.Errorf("notice lacks %q: %s", want, notice)
		}
	}
	if dl, _ := os.ReadFile(filepath.Join(root, "devlogs", "hub.md")); !bytes.Contains(dl, []byte("hub keeps crashing")) {
		t.Errorf("the hub's devlog: %s", dl)
	}
}

// A hub started by hand holds the consumer locks of the agents it keeps
// runners for: the supervisor watches it and starts no second one.
func TestAHubStartedByHandIsLeftAlone(t *testing.T) {
	root := t.TempDir()
	byHand := runnerByHand(t, root, "Agent-6")
	log := &syncBuffer{}
	p := DefaultPolicy()
	clk := clocktest.New(time.Now())
	start(t, Settings{
		Root: root, Hub: []string{"Agent-5", "Agent-6"}, Log: log, Policy: p, Grace: 10 * time.Second, Clock: clk,
		Command: sh(`echo "serving"; exec sleep 60`),
	})
	await(t, log, `hub \| up: a hub started by hand \(pid `+strconv.Itoa(os.Getpid())+`\) serves it`, 1)
	if bytes.Contains([]byte(log.String()), []byte("serving")) {
		t.Fatalf("a second hub was started:\n%s", log)
	}
	byHand.Close()
	clk.BlockUntil(2)
	clk.Advance(p.WatchEvery)
	await(t, log, `hub \| serving`, 1)
}

// runnerByHand holds agent's consumer lock as a runner started by hand
// would, in a new mailbox under root.
func runnerByHand(t *testing.T, root, agent string) *mailbox.Consumer {
	t.Helper()
	if err := mailbox.Create(root, agent); err != nil {
		t.Fatal(err)
	}
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mb.Consume(mailbox.Options{Runner: true, Known: []string{agent}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
