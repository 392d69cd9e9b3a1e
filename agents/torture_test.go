package agents

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// runnerProcess is a runner in a process of its own, configured by the
// environment, for the crash torture.
func runnerProcess() int {
	root, agent := os.Getenv("AGENTS_ROOT"), os.Getenv("AGENTS_AGENT")
	agents := strings.Split(os.Getenv("AGENTS_ALL"), ",")
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/usr/bin/env", "AGENTS_TEST_ROLE=hop-agent", os.Args[0]}, Timeout: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := testSettings(root, agent, agents, d)
	s.Consumer.MaxAttempts = 1000 // every kill counts as an attempt
	return runUntilStopped("runner", s)
}

// runUntilStopped runs a runner in a test process until SIGINT or SIGTERM
// and turns the outcome into the process's exit code.
func runUntilStopped(role string, s Settings) int {
	s.Log = testLog()
	r, err := New(s)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = r.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, role+":", err)
		return 1
	}
	return 0
}

var (
	hopBody = regexp.MustCompile(`(?m)^hop (\d+) chain (\d+)$`)
	hopMe   = regexp.MustCompile(`^You are (Agent-\d+),`)
)

// hopAgent is a scripted headless agent: "hop N chain K" makes it pass
// "hop N-1 chain K" to the other agent and note the hop on task C-K; at
// hop 0 it completes C-K.
func hopAgent() int {
	prompt, _ := io.ReadAll(os.Stdin)
	me := hopMe.FindSubmatch(prompt)
	m := hopBody.FindSubmatch(prompt)
	if me == nil || m == nil {
		fmt.Fprintf(os.Stderr, "hop-agent: cannot read the prompt:\n%s", prompt)
		return 1
	}
	other := "Agent-1"
	if string(me[1]) == "Agent-1" {
		other = "Agent-2"
	}
	n, _ := strconv.Atoi(string(m[1]))
	chain := string(m[2])
	if n == 0 {
		fmt.Printf("Chain %s ends here.\n```agentctl\n{\"board\": [{\"id\": \"C-%s\", \"status\": \"done\", \"notes\": \"hop 0\"}]}\n```\n", chain, chain)
		return 0
	}
	fmt.Printf("Passing on.\n```agentctl\n{\"send\": [{\"to\": %q, \"body\": \"hop %d chain %s\"}], \"board\": [{\"id\": \"C-%s\", \"status\": \"in_progress\", \"notes\": \"hop %d\"}]}\n```\n",
		other, n-1, chain, chain, n)
	return 0
}

// TestCrashTorture kills two real runner processes with SIGKILL at random
// moments and restarts them while hundreds of messages flow between their
// agents. Afterwards every message must be archived exactly once, every
// message a reply asked for delivered exactly once, every devlog entry
// written once, every board task finished, and no audit line written
// twice (a kill may lose one, never repeat it).
func TestCrashTorture(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash torture runs real processes for several seconds")
	}
	const chains, hops = 20, 15
	agents := []string{"Agent-1", "Agent-2"}
	root := newRuntime(t, agents)
	var board strings.Builder
	board.WriteString("tasks:\n")
	for k := 1; k <= chains; k++ {
		fmt.Fprintf(&board, "  - id: C-%d\n    title: chain %d\n    status: todo\n    owner: Agent-1\n", k, k)
	}
	if err := os.WriteFile(filepath.Join(root, "project_board", "chains.yaml"), []byte(board.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{} // every message id that must be archived once
	for k := 1; k <= chains; k++ {
		m := mailbox.Message{ID: fmt.Sprintf("seed-%d", k), From: "human", To: "Agent-1", Type: "message", Body: fmt.Sprintf("hop %d chain %d", hops, k)}
		deliverTo(t, root, m)
		id, to := m.ID, "Agent-1"
		want[id] = true
		for n := hops; n > 0; n-- {
			other := map[string]string{"Agent-1": "Agent-2", "Agent-2": "Agent-1"}[to]
			id, to = derivedID(id, "send", "0", other), other
			want[id] = true
		}
	}

	start := func(agent string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=runner", "AGENTS_ROOT="+root, "AGENTS_AGENT="+agent, "AGENTS_ALL="+strings.Join(agents, ","))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	runners := map[string]*exec.Cmd{}
	for _, a := range agents {
		runners[a] = start(a)
	}
	archived := func() int { return counts(t, root, "Agent-1").Done + counts(t, root, "Agent-2").Done }
	// A runner is killed at a random moment, but only once the runners
	// have archived something since the last kill: on a loaded machine a
	// restarted runner may take longer to start than the pause, and kills
	// that outpace all progress test nothing. So there is no deadline of
	// the test's own; only the suite's, checked so it fails saying why.
	kills, atLastKill := 0, -1
	for done := archived(); done < len(want); done = archived() {
		if end, ok := t.Deadline(); ok && time.Until(end) < 30*time.Second {
			t.Fatalf("only %d of %d messages archived after %d kills, and the suite's time is nearly out", done, len(want), kills)
		}
		time.Sleep(time.Duration(10+rand.IntN(120)) * time.Millisecond)
		if done == atLastKill {
			continue
		}
		atLastKill = done
		a := agents[rand.IntN(len(agents))]
		runners[a].Process.Kill()
		runners[a].Wait()
		kills++
		runners[a] = start(a)
	}
	for _, cmd := range runners {
		cmd.Process.Signal(os.Interrupt)
	}
	for a, cmd := range runners {
		// A runner restarted a moment ago may not handle SIGINT yet and
		// die of it; that is one more crash, which the checks below cover.
		if err := cmd.Wait(); err != nil && err.Error() != "signal: interrupt" {
			t.Errorf("runner of %s: %v", a, err)
		}
	}
	t.Logf("%d messages, %d SIGKILLs", len(want), kills)

	seen := map[string]int{}
	for _, a := range agents {
		mb, _ := mailbox.Open(root, a)
		c := counts(t, root, a)
		if c.Dead != 0 || c.Pending != 0 || c.Processing != 0 {
			t.Errorf("%s: %+v, want everything archived", a, c)
		}
		done, err := mb.List(mailbox.StateDone)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range done {
			seen[e.Message.ID]++
		}
		for _, e := range devlogOf(t, root, a) {
			if e.Outcome == "done" {
				seen["devlog:"+e.MessageID]++
			}
		}
	}
	for id := range want {
		if seen[id] != 1 || seen["devlog:"+id] != 1 {
			t.Errorf("%s archived %d times with %d devlog entries, want 1 and 1; its steps:\n%s", id, seen[id], seen["devlog:"+id], receiptsOf(root, id))
		}
		delete(seen, id)
		delete(seen, "devlog:"+id)
	}
	for id, n := range seen {
		t.Errorf("unexpected %s (%d times)", id, n)
	}
	lines := map[string]int{}
	for _, line := range auditOf(t, root) {
		if lines[line]++; lines[line] == 2 {
			t.Errorf("audited twice: %s", line)
		}
	}
	for k := 1; k <= chains; k++ {
		if tk := task(t, root, fmt.Sprintf("C-%d", k)); tk.Status != "done" || tk.Notes != "hop 0" {
			t.Errorf("C-%d = %s %q, want done, hop 0", k, tk.Status, tk.Notes)
		}
	}
}

// receiptsOf shows every archived step log of message id, to tell how a
// failed check came about.
func receiptsOf(root, id string) string {
	paths, _ := filepath.Glob(filepath.Join(root, "agent_mailboxes", "*", mailbox.ArchiveDir, "*", mailbox.Stem(id)+mailbox.ReceiptSuffix))
	var b strings.Builder
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s:\n%s", p, data)
	}
	return b.String()
}
