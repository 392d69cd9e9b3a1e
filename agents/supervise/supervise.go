package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentctl/agentctl/internal/childthread"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/mailbox"
)

// Settings are what the supervisor is given.
type Settings struct {
	Root   string
	Agents []string
	// Hub lists the agents whose turns are taken on other machines: when
	// there are any, one more child is kept alive, named HubName, that runs
	// `agentctl hub`, whose runners serve them. A hub started by hand holds
	// their consumer locks, and is watched, never duplicated.
	Hub []string
	// Human gets the crash-loop notice in their mailbox; "" sends it to
	// the devlog only.
	Human string
	// Command makes the command that runs agent's runner; it is called
	// for every start, since an exec.Cmd runs once.
	Command func(agent string) *exec.Cmd
	// Log is the combined log: the children's output and the
	// supervisor's own lines, each prefixed with its agent, or all as
	// JSON objects with JSON set.
	Log    io.Writer
	JSON   bool
	Policy Policy
	// Grace is how long a child asked to stop may take before it is
	// killed.
	Grace time.Duration
	// Clock times the backoffs, the watches and the grace, and stamps the
	// log; clock.System when nil.
	Clock clock.Clock
	// RunnerPID finds a live runner of agent; nil means the consumer
	// lock's record (mailbox.RunnerPID).
	RunnerPID func(root, agent string) (int, bool)
	// Watch lists what a person edits to mend a child that stopped
	// needing them (ExitNeedsPerson): agentctl.yaml, the credentials. A
	// change to any of them (looked at every Policy.WatchEvery) starts
	// the child again; with none, it waits for up to be restarted.
	Watch []string
}

func (s *Settings) defaults() {
	s.Clock = clock.Or(s.Clock)
	if s.RunnerPID == nil {
		s.RunnerPID = mailbox.RunnerPID
	}
	if s.Policy == (Policy{}) {
		s.Policy = DefaultPolicy()
	}
}

// Run keeps a runner alive for every agent until ctx ends or a stop is
// requested (RequestStop), then stops them all and returns when every
// child has exited. It returns an error only if
// the supervisor itself could not work; a child's death is logged and
// handled, never returned.
func Run(ctx context.Context, s Settings) error {
	if len(s.Agents) == 0 && len(s.Hub) == 0 {
		return errors.New("no agents to run")
	}
	if s.Command == nil || s.Log == nil {
		return errors.New("supervise: Settings need a Command and a Log")
	}
	s.defaults()
	ctx, cancel := untilStopRequested(ctx, s.Root, s.Policy.WatchEvery, s.Clock)
	defer cancel()
	seats := make([]*seat, 0, len(s.Agents)+1)
	for _, agent := range s.Agents {
		seats = append(seats, &seat{s: &s, agent: agent, kind: "runner", byHand: "agentctl run " + agent})
	}
	if len(s.Hub) > 0 {
		seats = append(seats, &seat{s: &s, agent: HubName, kind: "hub", byHand: "agentctl hub", serves: s.Hub})
	}
	names := make([]string, len(seats))
	for i, st := range seats {
		names[i] = st.agent
	}
	out := &combined{w: s.Log, width: longest(names), json: s.JSON, Clock: s.Clock}
	var wg sync.WaitGroup
	for _, seat := range seats {
		seat.out = out
		wg.Add(1)
		go func() {
			defer wg.Done()
			seat.run(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// HubName is how the log and the notices name the hub's child, and the
// name Command is given for it.
const HubName = "hub"

// seat keeps one agent's runner, or the hub, alive.
type seat struct {
	s      *Settings
	agent  string   // the agent, or HubName
	kind   string   // what the log calls the child: runner or hub
	byHand string   // the command that runs it by hand
	serves []string // the hub's agents, whose locks a hub by hand holds
	out    *combined
}

// running finds the child's process started by hand: the agent's runner,
// or a hub holding any of its agents' consumer locks.
func (st *seat) running() (int, bool) {
	if st.serves == nil {
		return st.s.RunnerPID(st.s.Root, st.agent)
	}
	for _, agent := range st.serves {
		if pid, ok := st.s.RunnerPID(st.s.Root, agent); ok {
			return pid, true
		}
	}
	return 0, false
}

func (st *seat) logf(format string, args ...any) {
	st.out.say(st.agent, fmt.Sprintf(format, args...))
}

// run is the one place that acts on Next's verdicts.
func (st *seat) run(ctx context.Context) {
	deaths := 0
	for ctx.Err() == nil {
		if pid, ok := st.running(); ok {
			st.watchHandRunner(ctx, pid)
			continue
		}
		started := st.s.Clock.Now()
		end, err := st.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		ran := st.s.Clock.Now().Sub(started)
		if pid, ok := st.running(); ok {
			// It lost the race for the lock to a runner started by hand;
			// that is no death.
			st.logf("a %s started by hand (pid %d) took the mailbox first", st.kind, pid)
			continue
		}
		if err != nil {
			end.status = "could not start: " + err.Error()
		}
		v := Next(st.s.Policy, deaths, ran, end.clean, end.needsPerson)
		if v.Park {
			st.park(ctx, end)
			deaths = 0
			continue
		}
		deaths = v.Deaths
		st.logf("%s ended (%s) after %s; restarting in %s", st.kind, end.status, ran.Round(time.Millisecond), v.Delay)
		if v.Notify {
			if err := tellCrashLoop(st.s.Root, st.s.Human, st, v.Deaths, end.status, end.tail, v.Delay, st.s.Clock.Now()); err != nil {
				st.logf("%v", err)
			} else if st.s.Human != "" {
				st.logf("told %s and the devlog: %d deaths in a row", st.s.Human, v.Deaths)
			} else {
				st.logf("wrote the devlog: %d deaths in a row", v.Deaths)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-clock.After(st.s.Clock, v.Delay):
		}
	}
}

// watchHandRunner waits while a runner (or hub) that up did not start
// serves the agent.
func (st *seat) watchHandRunner(ctx context.Context, pid int) {
	st.logf("a %s started by hand (pid %d) serves it; watching it, not starting another", st.kind, pid)
	for {
		select {
		case <-ctx.Done():
			return
		case <-clock.After(st.s.Clock, st.s.Policy.WatchEvery):
		}
		if now, ok := st.running(); !ok || now != pid {
			st.logf("the %s started by hand (pid %d) is gone", st.kind, pid)
			return
		}
	}
}

// park waits, after the child stopped needing a person, until what the
// person would edit changes; they are told once, with its last lines.
func (st *seat) park(ctx context.Context, end ending) {
	before := fingerprint(st.s.Watch)
	if len(st.s.Watch) == 0 {
		st.logf("%s stopped and needs a person (%s); not restarting it until agentctl up is restarted", st.kind, end.status)
	} else {
		st.logf("%s stopped and needs a person (%s); not restarting it until %s changes", st.kind, end.status, strings.Join(st.s.Watch, " or "))
	}
	if err := tellNeedsPerson(st.s.Root, st.s.Human, st, end, st.s.Watch, st.s.Clock.Now()); err != nil {
		st.logf("%v", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-clock.After(st.s.Clock, st.s.Policy.WatchEvery):
		}
		if len(st.s.Watch) > 0 && fingerprint(st.s.Watch) != before {
			st.logf("%s changed; starting the %s again", strings.Join(st.s.Watch, " or "), st.kind)
			return
		}
	}
}

// ending is how a child ended.
type ending struct {
	status      string   // as the system says it: "exit status 3", "signal: killed"
	clean       bool     // it exited with status 0
	needsPerson bool     // it exited with ExitNeedsPerson
	tail        []string // the last lines it wrote
}

// runOnce runs one child to its end, or until ctx ends and it is stopped.
func (st *seat) runOnce(ctx context.Context) (ending, error) {
	cmd := st.s.Command(st.agent)
	lw := st.out.writer(st.agent)
	cmd.Stdout, cmd.Stderr = lw, lw
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, EnvSupervised+"=1")
	ownProcessGroup(cmd)
	done := make(chan error, 1)
	// On Linux the child dies with the thread that starts it (parentDeath),
	// which childthread keeps until the child is reaped.
	if err := childthread.Start(cmd, nil, func() { done <- cmd.Wait() }); err != nil {
		return ending{}, err
	}
	st.logf("started %s, pid %d", st.kind, cmd.Process.Pid)
	ended := func(err error) ending {
		lw.flush()
		var ee *exec.ExitError
		needsPerson := errors.As(err, &ee) && ee.ExitCode() == ExitNeedsPerson
		return ending{status: exitStatus(err), clean: err == nil, needsPerson: needsPerson, tail: lw.tail()}
	}
	select {
	case err := <-done:
		return ended(err), nil
	case <-ctx.Done():
	}
	if err := askToStop(cmd.Process); err != nil {
		cmd.Process.Kill()
	}
	var err error
	select {
	case err = <-done:
	case <-clock.After(st.s.Clock, st.s.Grace):
		st.logf("%s pid %d did not stop within %s; killing it", st.kind, cmd.Process.Pid, st.s.Grace)
		cmd.Process.Kill()
		err = <-done
	}
	e := ended(err)
	st.logf("%s stopped (%s)", st.kind, e.status)
	return e, nil
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}

func longest(names []string) int {
	n := 0
	for _, s := range names {
		n = max(n, len(s))
	}
	return n
}

// what names the child in a notice.
func (st *seat) what() string {
	if st.serves != nil {
		return "the hub (agentctl hub) of " + strings.Join(st.serves, ", ")
	}
	return "the runner of " + st.agent
}
