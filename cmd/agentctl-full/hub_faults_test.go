//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/agents/hub"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/projectboard"
)

// countingAgent is an exec agent whose every run can be counted and whose
// every effect can be found exactly once: it appends "<message id> <pid>"
// to its invocation log ($1), works for 100 to 700 ms, and replies with a
// devlog line, a board change and a notice to human, each carrying the
// token of the message ("TOKEN tok TASK id" in its body).
const countingAgent = `prompt=$(cat)
id=$(printf '%s\n' "$prompt" | sed -n 's/^Message-ID: //p' | head -n 1)
tok=$(printf '%s\n' "$prompt" | sed -n 's/^TOKEN \([^ ]*\) TASK .*/\1/p' | head -n 1)
task=$(printf '%s\n' "$prompt" | sed -n 's/^TOKEN [^ ]* TASK \([^ ]*\)$/\1/p' | head -n 1)
echo "$id $$" >> "$1"
sleep $(printf '0.%03d' $(( $(od -An -N2 -tu2 /dev/urandom) % 601 + 100 )))
fence='` + "```" + `'
cat <<EOF
Done with $task.

${fence}agentctl
{"send": [{"to": "human", "subject": "done $task", "body": "notice $tok"}],
 "board": [{"id": "$task", "status": "done", "notes": "token $tok"}],
 "devlog": "finished $tok"}
$fence
EOF
`

// faultSwarm is a hub and two remote agents, Agent-1 on m1 and Agent-2 on
// m2, each running countingAgent, and the jobs sent to them.
type faultSwarm struct {
	t                *testing.T
	dir, hub, m1, m2 string
	invocations      map[string]string // agent → its invocation log
	jobs             map[string]job    // message id → job
}

type job struct{ agent, token, task string }

const faultJobs = 30

func newFaultSwarm(t *testing.T, hubSection, resend string) *faultSwarm {
	t.Helper()
	dir := t.TempDir()
	s := &faultSwarm{t: t, dir: dir, hub: filepath.Join(dir, "hub"), m1: filepath.Join(dir, "m1"), m2: filepath.Join(dir, "m2"),
		invocations: map[string]string{}, jobs: map[string]job{}}
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(countingAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := hubSection + "agents:\n"
	for i, m := range []string{"m1", "m2"} {
		a := fmt.Sprintf("Agent-%d", i+1)
		s.invocations[a] = filepath.Join(dir, a+".invocations")
		cfg += fmt.Sprintf("  - {name: %s, machine: %s, driver: exec, exec: {command: [sh, %s, %s]}}\n", a, m, script, s.invocations[a])
	}
	cfg += "people: [human]\nrate_limit: {per_minute: 0, per_hour: 0}\nrun: {resend: " + resend + "}\n"
	board := "tasks:\n"
	for k := 1; k <= faultJobs; k++ {
		board += fmt.Sprintf("  - id: F-%d\n    title: job %d\n    status: todo\n    owner: Agent-%d\n", k, k, 1+k%2)
	}
	for _, root := range []string{s.hub, s.m1, s.m2} {
		machine(t, root, cfg)
	}
	mustAgentctl(t, s.hub, "init")
	if err := os.WriteFile(filepath.Join(s.hub, "project_board", "board.yaml"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// send sends the jobs, alternating between the agents.
func (s *faultSwarm) send() {
	for k := 1; k <= faultJobs; k++ {
		j := job{agent: fmt.Sprintf("Agent-%d", 1+k%2), token: fmt.Sprintf("tok-%d-%x", k, rand.Uint32()), task: fmt.Sprintf("F-%d", k)}
		id := strings.TrimSpace(mustAgentctl(s.t, s.hub, "send", "--to", j.agent, "--subject", "job "+j.task, "TOKEN "+j.token+" TASK "+j.task))
		s.jobs[id] = j
	}
}

// runs reads an agent's invocation log: the message ids, one per run.
func (s *faultSwarm) runs(agent string) []string {
	var ids []string
	for _, line := range strings.Split(readFile(s.t, s.invocations[agent]), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// strikeMidTurn waits until agent's command starts once more (after a
// random number of further runs, from 0 to 2) and then calls strike with
// the message of that run, while its command works; it returns the
// message.
func (s *faultSwarm) strikeMidTurn(agent string, strike func(id string)) string {
	s.t.Helper()
	want := len(s.runs(agent)) + 1 + rand.IntN(3)
	var ids []string
	poll.Until(s.t, agent+"'s command to start", func() bool {
		ids = s.runs(agent)
		return len(ids) >= want
	})
	strike(ids[len(ids)-1])
	return ids[len(ids)-1]
}

// settled waits until every job is out of the agents' inboxes and
// processing folders at the hub.
func (s *faultSwarm) settled() {
	s.t.Helper()
	poll.Until(s.t, "every job to be settled at the hub", func() bool {
		n := 0
		for _, a := range []string{"Agent-1", "Agent-2"} {
			got := mailboxes(s.t, s.hub, a)
			n += len(got[mailbox.StateDone]) + len(got[mailbox.StateDead])
		}
		return n == faultJobs
	})
}

// check asserts that nothing was lost or doubled: every job archived once
// at the hub (or dead-lettered, when dead says so), its devlog entry, its
// notice to human and its board change there once; and that each job's
// command ran once, except the jobs of reruns, which ran once or twice.
func (s *faultSwarm) check(dead func(id, reason string) bool, reruns map[string]bool) {
	t := s.t
	t.Helper()
	where := map[string][]string{}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		mb, err := mailbox.Open(s.hub, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, state := range mailbox.States {
			entries, err := mb.List(state)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				where[e.Message.ID] = append(where[e.Message.ID], a+" "+state)
				if state == mailbox.StateDead && !dead(e.Message.ID, e.Reason) {
					t.Errorf("%s dead-lettered at the hub: %s", e.Message.ID, e.Reason)
				}
				if state == mailbox.StateDone && (e.Receipt == nil || e.Receipt.Outcome != "done") {
					t.Errorf("%s archived with receipt %+v", e.Message.ID, e.Receipt)
				}
			}
		}
	}
	notices := map[string]int{}
	human, err := mailbox.Open(s.hub, "human")
	if err != nil {
		t.Fatal(err)
	}
	pending, err := human.List(mailbox.StatePending)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range pending {
		notices[e.Message.Body]++
	}
	devlogs := readFile(t, filepath.Join(s.hub, "devlogs", "Agent-1.md")) + readFile(t, filepath.Join(s.hub, "devlogs", "Agent-2.md"))
	ran := map[string]int{}
	for _, a := range []string{"Agent-1", "Agent-2"} {
		for _, id := range s.runs(a) {
			ran[id]++
		}
	}
	for id, j := range s.jobs {
		state := strings.Join(where[id], ", ")
		if len(where[id]) != 1 {
			t.Errorf("%s (%s) is in %d places at the hub: %s", id, j.task, len(where[id]), state)
			continue
		}
		isDead := strings.HasSuffix(state, mailbox.StateDead)
		if want := j.agent + " " + mailbox.StateDone; state != want && !isDead {
			t.Errorf("%s (%s) is in %s, want %s", id, j.task, state, want)
		}
		if reruns[id] && (ran[id] < 1 || ran[id] > 2) || !reruns[id] && ran[id] != 1 {
			t.Errorf("%s (%s) ran %d times on its seat (rerun allowed: %v)", id, j.task, ran[id], reruns[id])
		}
		if isDead {
			continue
		}
		if n := strings.Count(devlogs, "> finished "+j.token+"\n"); n != 1 {
			t.Errorf("%s's devlog line is there %d times", j.token, n)
		}
		if n := strings.Count(devlogs, " · msg "+id+" · "); n != 1 {
			t.Errorf("%s has %d devlog entries", id, n)
		}
		if n := notices["notice "+j.token]; n != 1 {
			t.Errorf("human got the notice of %s %d times", j.token, n)
		}
		if task, err := (&projectboard.Store{Root: s.hub}).Find(j.task); err != nil || task.Status != "done" || task.Notes != "token "+j.token {
			t.Errorf("%s on the board: %+v, %v; want done, with %s", j.task, task, err, j.token)
		}
	}
	if len(ran) != len(s.jobs) {
		t.Errorf("the seats ran %d messages, want the %d jobs", len(ran), len(s.jobs))
	}
}

// TestHubFaultsNothingLostNothingDoubled feeds jobs to two remote agents
// and kills, mid-turn, the hub, a seat and the NATS server, each with
// SIGKILL, and starts them again: every job is settled exactly once.
func TestHubFaultsNothingLostNothingDoubled(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		addr := freeAddr(t)
		s := newFaultSwarm(t, "hub: {machine: hubm, listen: "+addr+"}\n", "auto")
		giveCredentials(t, s.hub, s.m1, "m1")
		giveCredentials(t, s.hub, s.m2, "m2")
		hub := startHub(t, s.dir, "hub", s.hub)
		url := hub.url()
		seats := map[string]*proc{}
		seat := func(agent, root string) *proc {
			return startAgentctl(t, s.dir, "seat-"+agent, root, "run", agent, "--hub", url, "--log-format", "json")
		}
		seats["Agent-1"], seats["Agent-2"] = seat("Agent-1", s.m1), seat("Agent-2", s.m2)
		s.send()

		// The hub, and its embedded server with it, dies mid-turn: the
		// restarted hub asks again, and the seat answers from its journal.
		s.strikeMidTurn("Agent-2", func(string) {
			hub.kill()
			hub = startHub(t, s.dir, "hub", s.hub)
		})
		// A seat dies while its command works. The command died with it;
		// with run.resend auto an exec agent's prompt may be sent again,
		// so the job runs a second time rather than being lost.
		rerun := s.strikeMidTurn("Agent-1", func(string) {
			seats["Agent-1"].kill()
			seats["Agent-1"] = seat("Agent-1", s.m1)
		})
		s.settled()
		s.check(func(string, string) bool { return false }, map[string]bool{rerun: true})
	})
	t.Run("external", func(t *testing.T) {
		t.Parallel()
		addr := freeAddr(t)
		serverDir := t.TempDir()
		serverRoot := filepath.Join(serverDir, "nats")
		machine(t, serverRoot, "hub: {user: swarm, password_file: pw}\n")
		swarmLogin(t, serverRoot)
		server := startHub(t, serverDir, "nats", serverRoot, "--server-only", "--listen", addr)
		url := server.url()
		s := newFaultSwarm(t, "hub: {machine: hubm, nats: "+url+", user: swarm, password_file: pw}\n", "never")
		swarmLogin(t, s.hub, s.m1, s.m2)
		hub := startHub(t, s.dir, "hub", s.hub)
		seats := map[string]*proc{}
		seat := func(agent, root string) *proc {
			return startAgentctl(t, s.dir, "seat-"+agent, root, "run", agent, "--hub", url, "--log-format", "json")
		}
		seats["Agent-1"], seats["Agent-2"] = seat("Agent-1", s.m1), seat("Agent-2", s.m2)
		s.send()

		// The server dies mid-turn and comes back on the same store: the
		// seat keeps its answer until the server takes it, and no command
		// runs again.
		s.strikeMidTurn("Agent-1", func(string) {
			server.kill()
			server = startHub(t, serverDir, "nats", serverRoot, "--server-only", "--listen", addr)
		})
		// The hub alone dies mid-turn and stays away until the seat has
		// answered: the answer waits in the stream for the restarted hub,
		// whose new ask the seat answers from its journal; no command
		// runs again (run.resend is never: nothing could send it again).
		s.strikeMidTurn("Agent-2", func(id string) {
			hub.kill()
			replied := regexp.MustCompile(`"turn":"` + id + `/[^"]*","event":"replied"`)
			poll.Until(t, "Agent-2's seat to answer "+id, func() bool { return replied.MatchString(readFile(t, seats["Agent-2"].log)) })
			hub = startHub(t, s.dir, "hub", s.hub)
		})
		// A seat dies while its command works; with run.resend never the
		// prompt is not sent again: the job is dead-lettered, saying so,
		// unless its answer was in the journal before the kill.
		struck := s.strikeMidTurn("Agent-2", func(string) {
			seats["Agent-2"].kill()
			seats["Agent-2"] = seat("Agent-2", s.m2)
		})
		s.settled()
		s.check(func(id, reason string) bool {
			return id == struck && strings.Contains(reason, "reply was lost")
		}, nil)
	})
}

// turnsLeader is the index of the node (named n1, n2, n3) leading the
// turns stream.
func turnsLeader(t *testing.T, urls string) int {
	t.Helper()
	ctx, cancel := poll.Context(t)
	defer cancel()
	nc, err := hub.Connect(ctx, hub.ClientSettings{URLs: strings.Split(urls, ","), Credentials: hub.Credentials{User: "swarm", Password: "s3cret-of-the-swarm"}})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, hub.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("the turns stream is not on three nodes: %+v", info.Cluster)
	}
	if _, err := fmt.Sscanf(info.Cluster.Leader, "n%d", &n); err != nil || n < 1 || n > 3 {
		t.Fatalf("the turns stream's leader is %q", info.Cluster.Leader)
	}
	return n - 1
}

// TestHubClusterLosesANode runs the hub's streams on a cluster of three
// 'agentctl hub --server-only' nodes, each with its own store, kept on all
// three (hub.replicas: 3), and kills one node mid-turn for good: the two
// left keep the streams, and every job is settled exactly once.
func TestHubClusterLosesANode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newCluster(t, dir)
	nodes := []*proc{c.start(0), c.start(1), c.start(2)}
	for _, n := range nodes {
		n.url()
	}
	list := c.urls()
	s := newFaultSwarm(t, "hub: {machine: hubm, nats: '"+list+"', replicas: 3, user: swarm, password_file: pw}\n", "never")
	swarmLogin(t, s.hub, s.m1, s.m2)
	startHub(t, s.dir, "hub", s.hub)
	startAgentctl(t, s.dir, "seat-Agent-1", s.m1, "run", "Agent-1", "--hub", list, "--log-format", "json")
	startAgentctl(t, s.dir, "seat-Agent-2", s.m2, "run", "Agent-2", "--hub", list, "--log-format", "json")
	s.send()

	// The node that leads the turns stream goes, the hardest loss: the
	// two left elect another leader mid-turn.
	s.strikeMidTurn("Agent-1", func(string) { nodes[turnsLeader(t, list)].kill() })
	s.settled()
	s.check(func(string, string) bool { return false }, nil)
}

// A hub started while its cluster is still forming, here with two of its
// three servers up, waits for the third, saying why, rather than failing:
// the swarm's streams keep three replicas, one on every server.
func TestHubWaitsForItsClusterToForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newCluster(t, dir)
	c.start(0).url()
	c.start(1).url()
	root := filepath.Join(dir, "hub")
	machine(t, root, "hub: {machine: hubm, nats: '"+c.urls()+"', replicas: 3, user: swarm, password_file: pw}\n")
	swarmLogin(t, root)
	hub := startAgentctl(t, dir, "hub", root, "hub", "--log-format", "json")
	hub.awaitLog(`on 3 servers yet: nats: API error: code=400 err_code=10005 description=no suitable peers for placement"`)
	c.start(2).url()
	hub.url() // fails at once, with the hub's log, had the hub ended
}

// cluster is three NATS servers (agentctl hub --server-only) on loopback,
// each a machine of its own under a folder, routed to each other.
type cluster struct {
	t               *testing.T
	dir             string
	clients, routes []string
}

func newCluster(t *testing.T, dir string) *cluster {
	c := &cluster{t: t, dir: dir}
	for range 3 {
		c.clients, c.routes = append(c.clients, freeAddr(t)), append(c.routes, freeAddr(t))
	}
	return c
}

// start starts server i (0, 1 or 2).
func (c *cluster) start(i int) *proc {
	c.t.Helper()
	var others []string
	for j, r := range c.routes {
		if j != i {
			others = append(others, "nats-route://"+r)
		}
	}
	root := filepath.Join(c.dir, fmt.Sprintf("n%d", i+1))
	machine(c.t, root, fmt.Sprintf("hub: {machine: n%d, listen: %s, user: swarm, password_file: pw, cluster: {name: swarm, listen: %s, routes: [%s]}}\n",
		i+1, c.clients[i], c.routes[i], strings.Join(others, ", ")))
	swarmLogin(c.t, root)
	return startAgentctl(c.t, c.dir, filepath.Base(root), root, "hub", "--server-only", "--log-format", "json")
}

// urls is the servers' client URLs, as a hub's nats setting lists them.
func (c *cluster) urls() string {
	var urls []string
	for _, a := range c.clients {
		urls = append(urls, "nats://"+a)
	}
	return strings.Join(urls, ",")
}

// TestHubCrashesWhileASeatIsAwayDeadLetterNothing kills the hub with
// SIGKILL, more times than a message has attempts, while the message's
// turn waits for a seat that is not there: the hub only waited, so no
// crash counts, and the seat, once started, works the message.
func TestHubCrashesWhileASeatIsAwayDeadLetterNothing(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := newFaultSwarm(t, "hub: {machine: hubm, listen: "+addr+"}\n", "auto")
	giveCredentials(t, s.hub, s.m2, "m2")
	id := strings.TrimSpace(mustAgentctl(t, s.hub, "send", "--to", "Agent-2", "--subject", "job F-2", "TOKEN away TASK F-2"))
	var hub *proc
	for crash := 1; crash <= 4; crash++ {
		hub = startHub(t, s.dir, "hub", s.hub)
		poll.Until(t, "the hub to hand the turn to the seat", func() bool {
			return strings.Count(readFile(t, hub.log), `"event":"handed"`) >= crash
		})
		if crash < 4 {
			hub.kill()
		}
	}
	startAgentctl(t, s.dir, "seat-Agent-2", s.m2, "run", "Agent-2", "--hub", hub.url(), "--log-format", "json")
	mb, err := mailbox.Open(s.hub, "Agent-2")
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, id+" to be settled", func() bool {
		c, err := mb.Count()
		return err == nil && c.Done+c.Dead == 1
	})
	if c, _ := mb.Count(); c.Done != 1 {
		t.Fatalf("Agent-2 holds %+v; want the message done, not dead-lettered by the hub's crashes", c)
	}
}
