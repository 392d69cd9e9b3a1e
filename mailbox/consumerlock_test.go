package mailbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/lockfile"
)

// holdConsumerLock holds mb's consumer lock until stdin closes: as a real
// runner ("runner"), or as a process that is not agentctl at all and only
// flocks the file ("stranger"; MAILBOX_LOCK names another lock file for
// it). It says "held" once it holds it.
func holdConsumerLock(mb *Mailbox, role string) error {
	if role == "runner" {
		c, err := mb.Consume(Options{Runner: true, Known: []string{mb.Agent}}, time.Now())
		if err != nil {
			return err
		}
		defer c.Close()
	} else {
		if err := os.MkdirAll(LocksDir(mb.Root), 0o755); err != nil {
			return err
		}
		path := ConsumerLockPath(mb.Root, mb.Agent)
		if p := os.Getenv("MAILBOX_LOCK"); p != "" {
			path = p
		}
		l := flock.New(path)
		if err := l.Lock(); err != nil {
			return err
		}
		defer l.Unlock()
	}
	fmt.Println("held")
	_, err := io.Copy(io.Discard, os.Stdin)
	return err
}

// holdInChild starts a child process that holds the consumer lock of
// Agent-1 under root in role; release lets it go and waits for it to end.
func holdInChild(t *testing.T, root, role string, env ...string) (cmd *exec.Cmd, release func()) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "MAILBOX_TEST_ROLE="+role, "MAILBOX_ROOT="+root, "MAILBOX_AGENT=Agent-1"), env...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("%s: %v", role, err)
			}
		})
	}
	t.Cleanup(release)
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the %s said %q", role, line)
	}
	return cmd, release
}

// A second runner is refused at once, naming the live runner's pid.
func TestSecondRunnerIsRefusedNamingTheFirst(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	first, _ := holdInChild(t, root, "runner")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := mb.Consume(Options{Runner: true, Wait: ctx, ConsumerWait: time.Hour, OnWait: func(h string) {
		t.Errorf("waited for a live runner: %s", h)
	}}, t0)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != first.Process.Pid {
		t.Fatalf("second runner: %v, want a LockedError naming pid %d", err, first.Process.Pid)
	}
}

// A lock held by something that is not a live runner is waited out: the
// runner says once what it waits for, and starts when the lock comes free.
// A record left in the lock file by a runner that is gone, or naming a pid
// now used by another process, is never taken for a live runner.
func TestRunnerWaitsOutALockThatIsNotARunners(t *testing.T) {
	cases := map[string]func(t *testing.T) lockfile.Record{
		"no record": func(t *testing.T) lockfile.Record { return lockfile.Record{} },
		"a runner that is gone": func(t *testing.T) lockfile.Record {
			gone := exec.Command(os.Args[0], "-test.run=^$")
			if err := gone.Run(); err != nil {
				t.Fatal(err)
			}
			return lockfile.Record{PID: gone.Process.Pid, Start: lockfile.Self("").Start, Role: "runner"}
		},
		"a reused pid": func(t *testing.T) lockfile.Record {
			self := lockfile.Self("runner")
			self.Start++ // this pid, but another process than the one recorded
			return self
		},
	}
	for name, record := range cases {
		t.Run(name, func(t *testing.T) {
			root := newRuntime(t, "Agent-1")
			mb := openMailbox(t, root, "Agent-1")
			path := ConsumerLockPath(root, "Agent-1")
			if r := record(t); r.PID != 0 {
				if err := os.MkdirAll(LocksDir(root), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(r.String()), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			stranger, release := holdInChild(t, root, "stranger")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			waiting := make(chan string, 2)
			type result struct {
				c   *Consumer
				err error
			}
			done := make(chan result, 1)
			go func() {
				c, err := mb.Consume(Options{Runner: true, Wait: ctx, ConsumerWait: 10 * time.Millisecond,
					OnWait: func(h string) { waiting <- h }}, t0)
				done <- result{c, err}
			}()
			var said string
			select {
			case said = <-waiting:
			case r := <-done:
				t.Fatalf("Consume returned %v, %v while a stranger held the lock", r.c, r.err)
			}
			if !strings.Contains(said, path) || !strings.Contains(said, "waiting") {
				t.Errorf("the runner said %q; want the lock %s and that it waits", said, path)
			}
			if want := fmt.Sprintf("pid %d", stranger.Process.Pid); runtime.GOOS == "linux" && !strings.Contains(said, want) {
				t.Errorf("the runner said %q; want the holder, %s", said, want)
			}
			release()
			r := <-done
			if r.err != nil {
				t.Fatalf("after the stranger let go: %v", r.err)
			}
			defer r.c.Close()
			if len(waiting) != 0 {
				t.Errorf("OnWait was called again: %q", <-waiting)
			}
			if rec, ok := lockfile.HeldBy(path); !ok || rec.PID != os.Getpid() || rec.Role != "runner" {
				t.Errorf("lock file records %+v, %v; want this runner", rec, ok)
			}
		})
	}
}

// A runner waiting for a lock stops when told to.
func TestRunnerWaitEndsWithItsContext(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	holdInChild(t, root, "stranger")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := mb.Consume(Options{Runner: true, Wait: ctx, OnWait: func(string) { cancel() }}, t0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Consume after its context ended: %v", err)
	}
	// Recovery visits never wait past ConsumerWait, and never name a
	// stranger's pid as a consumer's.
	var locked *LockedError
	if _, err := mb.Consume(Options{}, t0); !errors.As(err, &locked) || locked.PID != 0 {
		t.Fatalf("a visit to a mailbox a stranger locks: %v", err)
	}
}

// RunnerPID names a live runner holding the consumer lock, and nothing
// else: not a stranger's flock, not a runner that let go.
func TestRunnerPIDNamesOnlyALiveRunner(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	if pid, ok := RunnerPID(root, "Agent-1"); ok {
		t.Fatalf("no runner yet, got pid %d", pid)
	}
	stranger, release := holdInChild(t, root, "stranger")
	if pid, ok := RunnerPID(root, "Agent-1"); ok {
		t.Fatalf("a stranger (pid %d) taken for runner pid %d", stranger.Process.Pid, pid)
	}
	release()
	runner, release := holdInChild(t, root, "runner")
	if pid, ok := RunnerPID(root, "Agent-1"); !ok || pid != runner.Process.Pid {
		t.Fatalf("RunnerPID = %d, %v; want the runner's pid %d", pid, ok, runner.Process.Pid)
	}
	release()
	if pid, ok := RunnerPID(root, "Agent-1"); ok {
		t.Fatalf("a runner that let go still named: pid %d", pid)
	}
}

// The waits for the consumer lock run on the consumer's clock: a runner
// keeps silent for the whole of ConsumerWait, however long that is, then
// says once what it waits for and takes the lock at the next look after
// the holder lets go.
func TestConsumerLockWaitsOnItsClock(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	stranger, release := holdInChild(t, root, "stranger")
	clk := clocktest.New(t0)

	// A visit gives up once its clock has moved past ConsumerWait.
	visit := make(chan error, 1)
	go func() {
		_, err := mb.Consume(Options{ConsumerWait: time.Hour, Clock: clk}, t0)
		visit <- err
	}()
	<-clk.Sleeping()
	clk.Advance(time.Hour)
	var locked *LockedError
	if err := <-visit; !errors.As(err, &locked) || locked.PID != 0 {
		t.Fatalf("a visit after its wait: %v, want a LockedError naming no runner", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan string, 2)
	type result struct {
		c   *Consumer
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := mb.Consume(Options{Runner: true, Wait: ctx, ConsumerWait: time.Minute, Clock: clk,
			OnWait: func(h string) { waiting <- h }}, t0)
		done <- result{c, err}
	}()
	<-clk.Sleeping()
	clk.Advance(30 * time.Second)
	<-clk.Sleeping()
	if len(waiting) != 0 {
		t.Fatalf("the runner spoke half way through its silent wait: %q", <-waiting)
	}
	clk.Advance(30 * time.Second)
	said := <-waiting
	if want := fmt.Sprintf("pid %d", stranger.Process.Pid); runtime.GOOS == "linux" && !strings.Contains(said, want) {
		t.Errorf("the runner said %q; want the holder, %s", said, want)
	}
	<-clk.Sleeping()
	release()
	clk.Advance(consumerWaitPoll)
	r := <-done
	if r.err != nil {
		t.Fatalf("after the stranger let go: %v", r.err)
	}
	defer r.c.Close()
	if len(waiting) != 0 {
		t.Errorf("OnWait was called again: %q", <-waiting)
	}
}

// A consumer lock file a person removes no longer keeps a second consumer
// out: the next one creates the file anew and takes it. The holder looks
// at its lock before each claim and at each wake-up: where the file (or
// its folder) is gone it takes it afresh, and the second consumer is
// refused; where another took the new file first, the holder's loop ends
// before it claims anything more.
func TestAConsumerLockFileRemovedIsTakenAfreshOrEndsItsHolder(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	now := time.Now()
	first := consume(t, mb, Options{Runner: true}, now)
	path := ConsumerLockPath(mb.Root, mb.Agent)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := first.keepLock(); err != nil {
		t.Fatalf("the holder could not take its removed lock afresh: %v", err)
	}
	var locked *LockedError
	if _, err := mb.Consume(Options{Known: []string{"Agent-1"}}, now); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("a second consumer after the holder took its lock afresh: %v, want refused naming the holder", err)
	}
	// The whole locks folder, the same.
	if err := os.RemoveAll(LocksDir(mb.Root)); err != nil {
		t.Fatal(err)
	}
	if err := first.keepLock(); err != nil {
		t.Fatalf("the holder could not take its lock afresh in a removed locks folder: %v", err)
	}
	if _, err := mb.Consume(Options{Known: []string{"Agent-1"}}, now); !errors.As(err, &locked) {
		t.Fatalf("a second consumer after the locks folder came back: %v, want refused", err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	second := consume(t, mb, Options{}, now)
	if err := mb.Deliver(testMessage("m1", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	if err := first.Scan(now); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var claimed []string
	err := Serve(ctx, first, first, nil, Worker{Handle: func(_ context.Context, cl *Claim) error {
		claimed = append(claimed, cl.Message.ID)
		cancel()
		return first.Complete(cl, Receipt{}, now)
	}})
	if !errors.Is(err, ErrConsumerRunning) || len(claimed) > 0 {
		t.Fatalf("the holder whose removed lock another took: Serve gave %v after claiming %q; want it ended before any claim", err, claimed)
	}
	if !strings.Contains(err.Error(), "was removed") {
		t.Errorf("the error %q does not say the lock file was removed", err)
	}
	second.Close()
}

// A consumer that takes its removed lock afresh while something else (not
// a runner) holds the new file waits for it as Consume does, says so, and
// says when the wait is over, so that a runner's status.json does not
// show it waiting for ever after.
func TestAConsumerWaitingForItsRemovedLockSaysWhenItIsOver(t *testing.T) {
	root := newRuntime(t, "Agent-1")
	mb := openMailbox(t, root, "Agent-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	said := make(chan string, 4)
	first := consume(t, mb, Options{Runner: true, Wait: ctx, ConsumerWait: 10 * time.Millisecond,
		OnWait: func(h string) { said <- h }}, t0)
	if err := os.Remove(ConsumerLockPath(root, "Agent-1")); err != nil {
		t.Fatal(err)
	}
	_, release := holdInChild(t, root, "stranger")
	done := make(chan error, 1)
	go func() { done <- first.keepLock() }()
	select {
	case h := <-said:
		if h == "" || !strings.Contains(h, "waiting") {
			t.Fatalf("the consumer said %q; want what it waits for", h)
		}
	case err := <-done:
		t.Fatalf("keepLock returned %v while a stranger held the new lock", err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("after the stranger let go: %v", err)
	}
	select {
	case h := <-said:
		if h != "" {
			t.Errorf("the consumer said %q after its wait; want \"\", the wait over", h)
		}
	default:
		t.Error("the consumer did not say that its wait was over")
	}
}
