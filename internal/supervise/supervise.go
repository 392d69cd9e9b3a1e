package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/agentctl/agentctl/mailbox"
)

// Settings are what the supervisor is given.
type Settings struct {
	Root   string
	Agents []string
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
	// Now and After are the clock; nil means the real one.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// RunnerPID finds a live runner of agent; nil means the consumer
	// lock's record (mailbox.RunnerPID).
	RunnerPID func(root, agent string) (int, bool)
}

func (s *Settings) defaults() {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.After == nil {
		s.After = time.After
	}
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
	if len(s.Agents) == 0 {
		return errors.New("no agents to run")
	}
	if s.Command == nil || s.Log == nil {
		return errors.New("supervise: Settings need a Command and a Log")
	}
	s.defaults()
	// The real clock: a test's After that fires at once would spin here.
	ctx, cancel := untilStopRequested(ctx, s.Root, s.Policy.WatchEvery, time.After)
	defer cancel()
	out := &combined{w: s.Log, width: longest(s.Agents), json: s.JSON, now: s.Now}
	var wg sync.WaitGroup
	for _, agent := range s.Agents {
		seat := &seat{s: &s, agent: agent, out: out}
		wg.Add(1)
		go func() {
			defer wg.Done()
			seat.run(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// seat keeps one agent's runner alive.
type seat struct {
	s     *Settings
	agent string
	out   *combined
}

func (st *seat) logf(format string, args ...any) {
	st.out.say(st.agent, fmt.Sprintf(format, args...))
}

// run is the one place that acts on Next's verdicts.
func (st *seat) run(ctx context.Context) {
	deaths := 0
	for ctx.Err() == nil {
		if pid, ok := st.s.RunnerPID(st.s.Root, st.agent); ok {
			st.watchHandRunner(ctx, pid)
			continue
		}
		started := st.s.Now()
		end, err := st.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		ran := st.s.Now().Sub(started)
		if pid, ok := st.s.RunnerPID(st.s.Root, st.agent); ok {
			// It lost the race for the lock to a runner started by hand;
			// that is no death.
			st.logf("a runner started by hand (pid %d) took the mailbox first", pid)
			continue
		}
		if err != nil {
			end.status = "could not start: " + err.Error()
		}
		v := Next(st.s.Policy, deaths, ran, end.clean)
		deaths = v.Deaths
		st.logf("runner ended (%s) after %s; restarting in %s", end.status, ran.Round(time.Millisecond), v.Delay)
		if v.Notify {
			if err := tellCrashLoop(st.s.Root, st.s.Human, st.agent, v.Deaths, end.status, end.tail, v.Delay, st.s.Now()); err != nil {
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
		case <-st.s.After(v.Delay):
		}
	}
}

// watchHandRunner waits while a runner that up did not start serves the
// agent.
func (st *seat) watchHandRunner(ctx context.Context, pid int) {
	st.logf("a runner started by hand (pid %d) serves it; watching it, not starting another", pid)
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.s.After(st.s.Policy.WatchEvery):
		}
		if now, ok := st.s.RunnerPID(st.s.Root, st.agent); !ok || now != pid {
			st.logf("the runner started by hand (pid %d) is gone", pid)
			return
		}
	}
}

// ending is how a child ended.
type ending struct {
	status string   // as the system says it: "exit status 3", "signal: killed"
	clean  bool     // it exited with status 0
	tail   []string // the last lines it wrote
}

// runOnce runs one child to its end, or until ctx ends and it is stopped.
func (st *seat) runOnce(ctx context.Context) (ending, error) {
	cmd := st.s.Command(st.agent)
	lw := st.out.writer(st.agent)
	cmd.Stdout, cmd.Stderr = lw, lw
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return ending{}, err
	}
	st.logf("started runner, pid %d", cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ended := func(err error) ending {
		lw.flush()
		return ending{status: exitStatus(err), clean: err == nil, tail: lw.tail()}
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
	case <-st.s.After(st.s.Grace):
		st.logf("runner pid %d did not stop within %s; killing it", cmd.Process.Pid, st.s.Grace)
		cmd.Process.Kill()
		err = <-done
	}
	e := ended(err)
	st.logf("runner stopped (%s)", e.status)
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
