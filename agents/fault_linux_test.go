//go:build linux

package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
	"github.com/agentctl/agentctl/mailbox"
)

// smallFS mounts a tmpfs of 1 MiB for a runtime the test can fill and
// remount read-only. Only root can mount; CI runs as root and sets
// AGENTCTL_REQUIRE_FAULT_FS, which makes a skip a failure.
func smallFS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("AGENTCTL_REQUIRE_FAULT_FS") != "" {
			t.Fatal("AGENTCTL_REQUIRE_FAULT_FS is set, but only root can mount the small file system this test fills")
		}
		t.Skip("mounting a small tmpfs to fill needs root (CI runs as root); set AGENTCTL_REQUIRE_FAULT_FS to make this a failure")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes into dir until its file system is full and returns the
// file to remove to free it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return p
		}
	}
}

// faultRunner starts a runner of Agent-1 on a runtime in dir with a person
// to tell, a driver that holds the turn of a body "hold" until release is
// closed, and a log the test reads. turns counts the turns of each body.
func faultRunner(t *testing.T, dir string) (root string, clk *clocktest.Clock, log *syncbuf.Buffer, inTurn chan struct{}, release chan struct{}, turns func(string) int) {
	t.Helper()
	agents := []string{"Agent-1", "Agent-2"}
	root = filepath.Join(dir, "runtime")
	for _, a := range append(agents, "human") {
		if err := mailbox.Create(root, a); err != nil {
			t.Fatal(err)
		}
	}
	clk = clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	log = &syncbuf.Buffer{}
	inTurn, release = make(chan struct{}, 1), make(chan struct{})
	var mu sync.Mutex
	seen := map[string]int{}
	s := testSettings(root, "Agent-1", agents, replyDriver(func(prompt string) (string, error) {
		mu.Lock()
		for _, w := range strings.Fields(prompt) {
			if strings.HasPrefix(w, "body-") {
				seen[w]++
			}
		}
		mu.Unlock()
		if strings.Contains(prompt, "body-hold") {
			select {
			case inTurn <- struct{}{}:
			default:
			}
			<-release
		}
		return "done", nil
	}))
	s.People, s.Human = []string{"human"}, "human"
	s.Clock, s.Log = clk, zerolog.New(log)
	s.TemplatesDir = ""
	startRunner(t, s)
	return root, clk, log, inTurn, release, func(body string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[body]
	}
}

// noticesTo counts the messages in person's mailbox, in any state, whose
// subject holds sub.
func noticesTo(t *testing.T, root, person, sub string) int {
	t.Helper()
	mb, err := mailbox.Open(root, person)
	if err != nil {
		return 0
	}
	n := 0
	for _, st := range []string{mailbox.StatePending, mailbox.StateDone} {
		es, err := mb.List(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if strings.Contains(e.Message.Subject, sub) {
				n++
			}
		}
	}
	return n
}

// archivedOnce says whether every id is in Agent-1's archive exactly once
// and nothing else is anywhere but there.
func archivedOnce(t *testing.T, root string, ids ...string) bool {
	t.Helper()
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		return false
	}
	c, err := mb.Count()
	if err != nil || c.Done != len(ids) || c.Pending+c.Processing+c.Dead != 0 {
		return false
	}
	done, err := mb.List(mailbox.StateDone)
	if err != nil {
		return false
	}
	got := map[string]int{}
	for _, e := range done {
		got[e.Message.ID]++
	}
	for _, id := range ids {
		if got[id] != 1 {
			return false
		}
	}
	return true
}

// On a full disk the seat stops, keeps the message it was working in
// processing/, tells the log at once and the person once space returns,
// probes on its clock, and goes on by itself: every message is done once.
// The same file system remounted read-only is waited out the same way.
func TestSeatWaitsOutAFullDiskAndAReadOnlyRuntime(t *testing.T) {
	fsDir := smallFS(t)
	root, clk, log, inTurn, release, turns := faultRunner(t, fsDir)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "body-hold", CreatedAt: clk.Now()})
	deliverTo(t, root, mailbox.Message{ID: "m2", From: "Agent-2", To: "Agent-1", Body: "body-two", CreatedAt: clk.Now()})
	<-inTurn
	filler := fill(t, fsDir)
	close(release)
	clk.Pump(t, "the disk-full fault in the log", func() bool { return strings.Contains(log.String(), `"fault":"disk-full"`) })
	if c := counts(t, root, "Agent-1"); c.Processing != 1 || c.Done != 0 {
		t.Fatalf("on a full disk: counts %+v, want m1 still in processing/", c)
	}
	// Probes fail while the disk stays full: many seconds of the clock,
	// past the back-off's cap, and the seat still waits.
	for range 90 {
		clk.Advance(time.Second)
	}
	clk.Pump(t, "a failed probe", func() bool { return strings.Contains(log.String(), `"event":"fault-probe"`) })
	if strings.Contains(log.String(), "fault-passed") || noticesTo(t, root, "human", "waits") != 0 {
		t.Fatalf("the fault passed, or a notice was stored, on a full disk:\n%s", log.String())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	clk.Pump(t, "m1 and m2 done", func() bool { return archivedOnce(t, root, "m1", "m2") })
	clk.Pump(t, "both notices", func() bool {
		return noticesTo(t, root, "human", "waits") == 1 && noticesTo(t, root, "human", "goes on") == 1
	})
	if turns("body-two") != 1 || turns("body-hold") != 1 {
		t.Errorf("m1 took %d turns and m2 %d, want 1 each: m1's reply was recorded before the disk filled", turns("body-hold"), turns("body-two"))
	}
	done, err := mustOpen(t, root, "Agent-1").List(mailbox.StateDone)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range done {
		if e.Receipt == nil || e.Receipt.Attempts != 1 {
			t.Errorf("%s: receipt %+v, want one attempt: a fault costs the message none", e.Message.ID, e.Receipt)
		}
	}

	// Read-only: the next heartbeat meets it.
	remountReadOnly(t, fsDir)
	clk.Pump(t, "the read-only fault in the log", func() bool { return strings.Contains(log.String(), `"fault":"read-only"`) })
	if err := syscall.Mount("tmpfs", fsDir, "", syscall.MS_REMOUNT, "size=1m"); err != nil {
		t.Fatalf("remount read-write: %v", err)
	}
	clk.Pump(t, "the read-only fault passed", func() bool { return log.Count(`"event":"fault-passed"`) == 2 })
	deliverTo(t, root, mailbox.Message{ID: "m3", From: "Agent-2", To: "Agent-1", Body: "body-three", CreatedAt: clk.Now()})
	clk.Pump(t, "m3 done", func() bool { return archivedOnce(t, root, "m1", "m2", "m3") })
	clk.Pump(t, "the read-only notices", func() bool {
		return noticesTo(t, root, "human", "waits") == 2 && noticesTo(t, root, "human", "goes on") == 2
	})
	if st, err := mustOpen(t, root, "Agent-1").ReadStatus(); err != nil || st.Waiting != "" {
		t.Errorf("status after the faults: %+v, %v; want no wait", st, err)
	}
	t.Logf("the runner's log:\n%s", log.String())
}

// A runtime folder removed under a running seat is waited for, not a
// reason to end; once it is back (here: made again, empty) the seat makes
// its mailbox and the person's again and works what comes.
func TestSeatWaitsForARemovedRuntime(t *testing.T) {
	root, clk, log, _, _, _ := faultRunner(t, t.TempDir())
	defer func() {
		if t.Failed() {
			t.Logf("the runner's log:\n%s", log.String())
		}
	}()
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "body-one", CreatedAt: clk.Now()})
	clk.Pump(t, "m1 done", func() bool { return archivedOnce(t, root, "m1") })
	gone := func() {
		// At once, as an unmount does: a folder removed file by file
		// races the runner, which makes the mailbox's folders again.
		if err := os.Rename(root, root+".gone"); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(root + ".gone"); err != nil {
			t.Fatal(err)
		}
	}
	gone()
	clk.Pump(t, "the runtime-gone fault in the log", func() bool { return strings.Contains(log.String(), `"fault":"runtime-gone"`) })
	for range 90 {
		clk.Advance(time.Second)
	}
	if strings.Contains(log.String(), "fault-passed") {
		t.Fatal("the fault passed with no runtime folder")
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	clk.Pump(t, "the fault passed", func() bool { return strings.Contains(log.String(), `"event":"fault-passed"`) })
	deliverTo(t, root, mailbox.Message{ID: "m2", From: "Agent-2", To: "Agent-1", Body: "body-two", CreatedAt: clk.Now()})
	clk.Pump(t, "m2 done", func() bool { return archivedOnce(t, root, "m2") })
	clk.Pump(t, "both notices", func() bool {
		return noticesTo(t, root, "human", "waits") == 1 && noticesTo(t, root, "human", "goes on") == 1
	})
}

func mustOpen(t *testing.T, root, agent string) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.Open(root, agent)
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

// remountReadOnly makes the file system at dir read-only. The kernel
// refuses (EBUSY) while a file there is open for writing, which the
// runner does for a moment at a time (a heartbeat, a notice): the remount
// is tried again until it finds none.
func remountReadOnly(t *testing.T, dir string) {
	t.Helper()
	for tries := 1; ; tries++ {
		err := syscall.Mount("tmpfs", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=1m")
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.EBUSY) || tries == 1000 {
			t.Fatalf("remount read-only (try %d): %v", tries, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A press of the send key whose record the disk, full for a moment, could
// not take never happened: the key goes only once it is on record. The
// message is taken up again from its record, once the seat has sat the
// fault out, and its prompt sent as new; it used to be dead-lettered
// saying the prompt may have been submitted.
func TestAPressNotRecordedOnAFullDiskIsSentAsNew(t *testing.T) {
	fsDir := smallFS(t)
	agents := []string{"Agent-1", "Agent-2"}
	root := filepath.Join(fsDir, "runtime")
	for _, a := range append(agents, "human") {
		if err := mailbox.Create(root, a); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var turns []cursor.Turn
	pressErr := make(chan error, 1)
	s := testSettings(root, "Agent-1", agents, hookDriver(func(turn cursor.Turn) (string, error) {
		mu.Lock()
		turns = append(turns, turn)
		first := len(turns) == 1
		mu.Unlock()
		if turn.Resume {
			return "", errors.New("resumed, but the key never went")
		}
		if err := turn.OnStage(cursor.StageInjected); err != nil {
			return "", err
		}
		// A state larger than a page, so that the press's record, which
		// carries it, needs room the full disk does not have.
		if err := turn.OnResumeState(strings.Repeat("s", 3*4096)); err != nil {
			return "", err
		}
		var filler string
		if first {
			var err error
			if filler, err = fillQuietly(fsDir); err != nil {
				return "", err
			}
		}
		err := turn.OnStage(cursor.StagePressed)
		if first {
			os.Remove(filler)
			pressErr <- err
		}
		if err != nil {
			return "", err // the key does not go
		}
		if err := turn.OnStage(cursor.StageSubmitted); err != nil {
			return "", err
		}
		return "Done; nothing to send.", nil
	}))
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	log := &syncbuf.Buffer{}
	s.People, s.Human = []string{"human"}, "human"
	s.Clock, s.Log = clk, zerolog.New(log)
	s.Resend = false // as for any chat window
	s.TemplatesDir = ""
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "Agent-2", To: "Agent-1", Body: "Say hello.", CreatedAt: clk.Now()})
	if err := <-pressErr; !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the press's record on a full disk gave %v; want it refused for want of space", err)
	}
	clk.Pump(t, "m1 done", func() bool { return archivedOnce(t, root, "m1") })
	mu.Lock()
	defer mu.Unlock()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want the failed one and one more", len(turns))
	}
}

// fillQuietly is fill for a driver's goroutine: it returns its error.
func fillQuietly(dir string) (string, error) {
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return "", err
			}
			return p, nil
		}
	}
}
