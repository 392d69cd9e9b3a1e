package agents

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

func init() {
	roles["board-runner"] = boardRunnerProcess
	roles["board-agent"] = boardAgent
}

var boardTaskLine = regexp.MustCompile(`(?m)^Board task: (\S+) ·`)

// boardAgent is a scripted headless agent: it finishes the board task its
// prompt names and says who did it in the task's notes.
func boardAgent() int {
	prompt, _ := io.ReadAll(os.Stdin)
	me := hopMe.FindSubmatch(prompt)
	m := boardTaskLine.FindSubmatch(prompt)
	if me == nil || m == nil {
		fmt.Printf("Nothing to do.\n")
		return 0
	}
	fmt.Printf("Finished.\n```agentctl\n{\"board\": [{\"id\": %q, \"status\": \"done\", \"notes\": \"done by %s\"}]}\n```\n", m[1], me[1])
	return 0
}

// boardRunnerProcess is a runner taking work from the boards, in a process
// of its own.
func boardRunnerProcess() int {
	root, agent := os.Getenv("AGENTS_ROOT"), os.Getenv("AGENTS_AGENT")
	d, err := cursor.NewExec(cursor.ExecSettings{Command: []string{"/usr/bin/env", "AGENTS_TEST_ROLE=board-agent", os.Args[0]}, Timeout: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := testSettings(root, agent, strings.Split(os.Getenv("AGENTS_ALL"), ","), d)
	s.TakeWork, s.BoardLook = true, 10*time.Millisecond
	return runUntilStopped("board-runner", s)
}

// writeBoard replaces the demo board with one of the test's own.
func writeBoard(t *testing.T, root, name, text string) {
	t.Helper()
	if err := os.Remove(filepath.Join(projectboard.Dir(root), "demo.yaml")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(projectboard.Dir(root), name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestIdleRunnerTakesWorkFromTheBoard: an idle runner takes, one at a
// time, the tasks it may do (its own, unowned ones with its label, those
// whose dependencies are done), most pressing first, and nothing else.
func TestIdleRunnerTakesWorkFromTheBoard(t *testing.T) {
	root := newRuntime(t, demoAgents)
	writeBoard(t, root, "work.yaml", `tasks:
  - id: W-1
    title: docs for the parser
    status: todo
    owner:
    labels: [docs]
  - id: W-2
    title: after the docs
    status: todo
    owner:
    labels: [docs]
    depends_on: [W-1]
  - id: W-3
    title: urgent and mine
    status: todo
    owner: Agent-1
    priority: urgent
  - id: W-4
    title: someone else's
    status: todo
    owner: Agent-2
  - id: W-5
    title: backend, not for a docs agent
    status: todo
    owner:
    labels: [backend]
  - id: W-6
    title: waits on a task that is not done
    status: todo
    owner: Agent-1
    depends_on: [W-4]
`)
	var mu sync.Mutex
	var order []string
	s := testSettings(root, "Agent-1", demoAgents, replyDriver(func(p string) (string, error) {
		m := boardTaskLine.FindStringSubmatch(p)
		if m == nil {
			return "", fmt.Errorf("no board task in the prompt:\n%s", p)
		}
		mu.Lock()
		order = append(order, m[1])
		mu.Unlock()
		if tk := task(t, root, m[1]); tk.Status != projectboard.InProgress || tk.Owner != "Agent-1" {
			t.Errorf("%s during its turn: %s, owner %q; want in_progress, Agent-1", m[1], tk.Status, tk.Owner)
		}
		return block(fmt.Sprintf(`{"board": [{"id": %q, "status": "done"}]}`, m[1])), nil
	}))
	s.TakeWork, s.WorkLabels = true, []string{"docs"}
	startRunner(t, s)
	poll.Until(t, "three tasks done", func() bool { return counts(t, root, "Agent-1").Done == 3 })
	stopAfterIdle(t, root, "Agent-1")
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, ","); got != "W-3,W-1,W-2" {
		t.Errorf("took %s, want W-3,W-1,W-2", got)
	}
	for id, owner := range map[string]string{"W-4": "Agent-2", "W-5": "", "W-6": "Agent-1"} {
		if tk := task(t, root, id); tk.Status != projectboard.Todo || tk.Owner != owner {
			t.Errorf("%s = %s, owner %q; want it left alone", id, tk.Status, tk.Owner)
		}
	}
	for _, e := range devlogOf(t, root, "Agent-1") {
		if e.Outcome != outcomeDone {
			t.Errorf("devlog entry %s: %s", e.MessageID, e.Outcome)
		}
	}
}

// stopAfterIdle waits until agent's runner says it is idle with nothing
// pending, so that a test sees what it would take next.
func stopAfterIdle(t *testing.T, root, agent string) {
	t.Helper()
	mb, _ := mailbox.Open(root, agent)
	poll.Until(t, agent+" idle", func() bool {
		st, err := mb.ReadStatus()
		c := counts(t, root, agent)
		return err == nil && st.State == "idle" && c.Pending == 0 && c.Processing == 0
	})
}

// TestTakeRefusedWhenSomeoneWasFirst: a board-task message whose task
// someone else took meanwhile is settled by the runner, without a turn.
func TestTakeRefusedWhenSomeoneWasFirst(t *testing.T) {
	root := newRuntime(t, demoAgents)
	writeBoard(t, root, "work.yaml", "tasks:\n  - id: W-1\n    title: contested\n    status: in_progress\n    owner: Agent-2\n")
	var turns atomic.Int32
	startRunner(t, testSettings(root, "Agent-1", demoAgents, replyDriver(func(string) (string, error) {
		turns.Add(1)
		return "done", nil
	})))
	deliverTo(t, root, mailbox.Message{ID: "take", From: "Agent-1", To: "Agent-1", Type: typeBoardTask, TaskID: "W-1", Body: "take W-1"})
	poll.Until(t, "the offer settled", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if r := receiptOf(t, root, "Agent-1", "take"); r.Outcome != "not taken: W-1 is in_progress now" || turns.Load() != 0 {
		t.Errorf("receipt %+v after %d turns, want not taken without a turn", r, turns.Load())
	}
	if tk := task(t, root, "W-1"); tk.Owner != "Agent-2" {
		t.Errorf("W-1 owner %q, want Agent-2's still", tk.Owner)
	}
}

// TestTwoRunnerProcessesNeverTakeOneTask: two runners in processes of their
// own take work from one board at once; every task is taken and done by
// exactly one of them.
func TestTwoRunnerProcessesNeverTakeOneTask(t *testing.T) {
	const n = 30
	agents := []string{"Agent-1", "Agent-2"}
	root := newRuntime(t, agents)
	var b strings.Builder
	b.WriteString("tasks:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: R-%d\n    title: race %d\n    status: todo\n    owner:\n", i, i)
	}
	writeBoard(t, root, "race.yaml", b.String())
	var cmds []*exec.Cmd
	for _, a := range agents {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_TEST_ROLE=board-runner", "AGENTS_ROOT="+root, "AGENTS_AGENT="+a, "AGENTS_ALL="+strings.Join(agents, ","))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	defer func() {
		for _, cmd := range cmds {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	}()
	store := projectboard.Store{Root: root}
	poll.Until(t, "every task done", func() bool {
		tasks, err := store.Tasks()
		if err != nil {
			return false
		}
		for _, tk := range tasks {
			if tk.Status != projectboard.Done {
				return false
			}
		}
		return true
	})
	for _, a := range agents {
		stopAfterIdle(t, root, a)
	}
	took := map[string][]string{}
	refused := 0
	for _, a := range agents {
		mb, _ := mailbox.Open(root, a)
		done, err := mb.List(mailbox.StateDone)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range done {
			switch {
			case e.Receipt.Outcome == outcomeDone:
				took[e.Message.TaskID] = append(took[e.Message.TaskID], a)
			case strings.HasPrefix(e.Receipt.Outcome, "not taken"):
				refused++
			default:
				t.Errorf("%s: %s ended %q", a, e.Message.ID, e.Receipt.Outcome)
			}
		}
	}
	per := map[string]int{}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("R-%d", i)
		tk := task(t, root, id)
		if len(took[id]) != 1 || tk.Owner != took[id][0] || tk.Notes != "done by "+tk.Owner {
			t.Errorf("%s taken by %v; on the board owner %q, notes %q", id, took[id], tk.Owner, tk.Notes)
			continue
		}
		per[tk.Owner]++
	}
	t.Logf("%d tasks: %v; %d offers found the task taken by the other runner first", n, per, refused)
}
