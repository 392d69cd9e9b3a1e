package hub

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// progressMsg is an ask whose "in progress" words are counted.
type progressMsg struct {
	jetstream.Msg
	said chan struct{}
}

func (m *progressMsg) InProgress() error {
	m.said <- struct{}{}
	return nil
}

// A seat at work on a turn tells the server so every third of the ack
// wait on its clock, and stops when the turn ends.
func TestKeepaliveSpeaksEveryThirdOfTheAckWait(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	m := &progressMsg{said: make(chan struct{}, 4)}
	stop := keepalive(context.Background(), clk, m)
	quiet := func(when string) {
		t.Helper()
		select {
		case <-m.said:
			t.Fatalf("in progress said %s", when)
		default:
		}
	}
	for i := range 3 {
		clk.BlockUntil(1)
		clk.Advance(askAckWait/3 - time.Millisecond)
		quiet("before a third of the ack wait")
		clk.Advance(time.Millisecond)
		<-m.said
		if i == 0 {
			quiet("twice for one third")
		}
	}
	stop()
	clk.Advance(askAckWait)
	quiet("after the turn ended")
}

// Connect says it is still waiting for the hub once two seconds of its
// clock have passed, not before, however many real attempts fail first.
func TestConnectSaysItWaitsOnItsClock(t *testing.T) {
	var logs syncBuffer
	clk := clocktest.New(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		nc, err := Connect(ctx, ClientSettings{URLs: []string{"nats://" + freeAddr(t)}, Name: t.Name(), Log: zerolog.New(&logs), Clock: clk})
		if nc != nil {
			nc.Close()
		}
		done <- err
	}()
	warned := func() bool { return strings.Contains(logs.String(), "trying until it answers") }
	// nats.go waits reconnectWait between rounds over the one URL, so six
	// failed attempts take longer than two seconds of real time: a
	// wall-clock timer would have fired by then.
	poll.Until(t, "six failed attempts logged", func() bool { return strings.Count(logs.String(), `"level":"debug"`) >= 6 })
	if warned() {
		t.Fatalf("warned before two seconds of the clock:\n%s", logs.String())
	}
	clk.BlockUntil(1)
	clk.Advance(2 * time.Second)
	poll.Until(t, "the warning that Connect still waits", warned)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect = %v, want context.Canceled", err)
	}
}

// The hub stamps each beat with its own clock as it hears it, and writes
// hub/seats.json again every beat of that clock.
func TestFollowSeatsStampsAndRewritesOnItsClock(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowSeats(ctx, SeatsSettings{Root: dir, Machine: "hub-1", Remote: []string{"Agent-5"}, Conn: testConn(t, srv.ClientURL()), Clock: clk})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("FollowSeats: %v", err)
		}
	}()
	read := func() Seats {
		s, _, _ := hubseats.Read(dir)
		return s
	}
	seat := testConn(t, srv.ClientURL())
	beat, _ := json.Marshal(Beat{Agent: "Agent-5", Machine: "desk-2", State: "idle", At: start.Add(-time.Hour)})
	// Beats are core NATS: published until the hub's subscription has one.
	poll.Until(t, "the hub to hear a beat", func() bool {
		if err := seat.Publish(beatSubject("Agent-5"), beat); err != nil {
			t.Fatal(err)
		}
		_ = seat.Flush()
		_, ok := read().Beats["Agent-5"]
		return ok
	})
	// A beat on Agent-5's subject that says it is another agent's is
	// Agent-5's; one on an agent the hub has no runner for is not kept.
	// Published in this order and handled in it: once Agent-5 shows
	// working, Agent-9's beat was handled.
	for _, beat := range []struct {
		subject string
		body    Beat
	}{{beatSubject("Agent-9"), Beat{Agent: "Agent-9", State: "idle"}}, {beatSubject("Agent-5"), Beat{Agent: "Agent-7", Machine: "desk-2", State: "working"}}} {
		data, _ := json.Marshal(beat.body)
		if err := seat.Publish(beat.subject, data); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, "Agent-5's beat saying working", func() bool { return read().Beats["Agent-5"].State == "working" })
	s := read()
	if _, ok := s.Beats["Agent-7"]; ok || len(s.Beats) != 1 {
		t.Fatalf("beats %+v; want Agent-5's alone", s.Beats)
	}
	if b := s.Beats["Agent-5"]; !b.At.Equal(start) {
		t.Fatalf("beat stamped %v, want the hub's clock %v", b.At, start)
	}
	if _, present := s.Seen("Agent-5", clk.Now()); !present || !s.UpdatedAt.Equal(start) || s.Machine != "hub-1" {
		t.Fatalf("seats %+v; want Agent-5 present, written at %v by hub-1", s, start)
	}
	clk.BlockUntil(1)
	clk.Advance(DefaultBeat)
	poll.Until(t, "the seats file rewritten a beat later", func() bool { return read().UpdatedAt.Equal(start.Add(DefaultBeat)) })
	if _, present := read().Seen("Agent-5", clk.Now().Add(3*DefaultBeat)); present {
		t.Error("a seat silent for three beats of the hub's clock still shows as present")
	}
}

// A seat that falls silent for three beats of the hub's clock is told to
// the person once, and once more when it is heard again; a seat never
// heard from is not told.
func TestFollowSeatsTellsThePersonOfASilentSeat(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowSeats(ctx, SeatsSettings{Root: dir, Machine: "hub-1", Remote: []string{"Agent-5", "Agent-6"}, Conn: testConn(t, srv.ClientURL()), Clock: clk, Human: "human"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("FollowSeats: %v", err)
		}
	}()
	seat := testConn(t, srv.ClientURL())
	// The seats file is written once the hub listens for beats. One beat
	// at a time: a copy arriving late would be heard at a later time of
	// the clock, the hub's, and break the silence the test makes.
	poll.Until(t, "the seats file", func() bool { _, ok, _ := hubseats.Read(dir); return ok })
	beatOnce := func() {
		t.Helper()
		at := clk.Now()
		beat, _ := json.Marshal(Beat{Agent: "Agent-5", Machine: "desk-2", State: "idle", At: at})
		if err := seat.Publish(beatSubject("Agent-5"), beat); err != nil {
			t.Fatal(err)
		}
		_ = seat.Flush()
		poll.Until(t, "the beat heard", func() bool {
			s, _, _ := hubseats.Read(dir)
			b, ok := s.Beats["Agent-5"]
			return ok && !b.At.Before(at)
		})
	}
	subjects := func() []string {
		mb, err := mailbox.Open(dir, "human")
		if err != nil {
			return nil
		}
		pending, _ := mb.List(mailbox.StatePending)
		var out []string
		for _, p := range pending {
			out = append(out, p.Message.Subject)
		}
		return out
	}
	beatOnce()
	for range 4 { // silent for four beats
		clk.BlockUntil(1)
		clk.Advance(DefaultBeat)
	}
	poll.Until(t, "the notice of the silent seat", func() bool { return len(subjects()) == 1 })
	if got := subjects(); got[0] != "Agent-5's seat on desk-2 is not heard from" {
		t.Fatalf("the person got %q", got)
	}
	beatOnce()
	poll.Until(t, "the notice of the seat heard again", func() bool { return len(subjects()) == 2 })
	// Heard on time for more than three beats: nothing more to tell. Each
	// beat says a new state, so the hub writes it down at once and the
	// test knows it was heard before the clock moves on.
	for i := range 4 {
		at, state := clk.Now(), []string{"working", "idle"}[i%2]
		beat, _ := json.Marshal(Beat{Agent: "Agent-5", Machine: "desk-2", State: state, At: at})
		if err := seat.Publish(beatSubject("Agent-5"), beat); err != nil {
			t.Fatal(err)
		}
		_ = seat.Flush()
		poll.Until(t, "the beat saying "+state+" heard", func() bool {
			s, _, _ := hubseats.Read(dir)
			b := s.Beats["Agent-5"]
			return b.State == state && !b.At.Before(at)
		})
		clk.BlockUntil(1)
		clk.Advance(DefaultBeat)
		poll.Until(t, "the seats file rewritten at the clock's time", func() bool {
			s, _, _ := hubseats.Read(dir)
			return s.UpdatedAt.Equal(clk.Now())
		})
	}
	if got := subjects(); len(got) != 2 || !slices.Contains(got, "Agent-5's seat on desk-2 is back") {
		t.Fatalf("the person got %q, want the silence and the return, once each", got)
	}
}

// An ask carries the time of the driver's clock.
func TestAskIsStampedByTheDriversClock(t *testing.T) {
	r := newRig(t)
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	r.driver.Clock = clock.Fixed(at)
	got := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m1/1", Prompt: "P"})
	r.chat.waitRunning(t)
	j, err := OpenJournal(r.journal)
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := j.Load("m1/1")
	if err != nil || !ok || e.Ask == nil {
		t.Fatalf("journal of m1/1: %+v, %v, %v", e, ok, err)
	}
	if !e.Ask.AskedAt.Equal(at) {
		t.Errorf("asked at %v, want the driver's clock %v", e.Ask.AskedAt, at)
	}
	r.chat.gate <- struct{}{}
	if a := result(t, got); a.err != nil {
		t.Fatal(a.err)
	}
}

// A seat that finds another seat of its machine forwarding a mailbox tries
// again after othersRetry of its clock, and then forwards it.
func TestForwardOthersTriesAgainOnItsClock(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	hubRoot, seatRoot := filepath.Join(dir, "hub"), filepath.Join(dir, "desk-2")
	known := []string{"Agent-5", "human"}
	for _, root := range []string{hubRoot, seatRoot} {
		if err := mailbox.Create(root, "human"); err != nil {
			t.Fatal(err)
		}
	}
	mb, err := mailbox.Open(seatRoot, "human")
	if err != nil {
		t.Fatal(err)
	}
	other, err := mb.Consume(mailbox.Options{Known: known, Runner: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	msg := mailbox.Message{ID: "msg_for_human", From: "Agent-5", To: "human", Subject: "s", Body: "b", CreatedAt: time.Now().UTC()}
	if err := mb.Deliver(msg); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	intakeDone := make(chan error, 1)
	go func() {
		intakeDone <- Intake(ctx, IntakeSettings{Root: hubRoot, Known: known, Senders: []string{"Agent-5"}, Conn: testConn(t, srv.ClientURL())})
	}()
	// An hour ahead of the files: the message dropped above has settled.
	clk := clocktest.New(time.Now().Add(time.Hour))
	fwdDone := make(chan error, 1)
	go func() {
		fwdDone <- ForwardOthers(ctx, ForwardSettings{Root: seatRoot, Senders: []string{"Agent-5"}, Consumer: mailbox.Options{Known: known},
			Conn: testConn(t, srv.ClientURL()), Log: zerolog.Nop(), Clock: clk}, []string{"human"})
	}()
	clk.BlockUntil(1) // refused the lock, waiting to try again
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(othersRetry)
	hubInbox := filepath.Join(mailbox.Dir(hubRoot, "human"), mailbox.InboxDir)
	poll.Until(t, "the message forwarded to the hub", func() bool {
		entries, _ := os.ReadDir(hubInbox)
		return len(entries) == 1
	})
	cancel()
	for _, done := range []chan error{intakeDone, fwdDone} {
		if err := <-done; err != nil {
			t.Errorf("stopped with %v", err)
		}
	}
}

// A hub started again keeps what the last one heard: a seat heard before
// is not shown as never heard, and one that fell silent while no hub ran
// is told to the person once the new hub has listened three beats.
func TestFollowSeatsRemembersTheLastHubsSeats(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, "127.0.0.1:0", filepath.Join(dir, "store"))
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	before := start.Add(-time.Hour)
	prev := Seats{PID: 1, Machine: "hub-1", UpdatedAt: before, Remote: []string{"Agent-5"},
		Beats: map[string]Beat{"Agent-5": {Agent: "Agent-5", Machine: "desk-2", State: "idle", At: before}}}
	data, _ := json.Marshal(prev)
	if err := os.MkdirAll(filepath.Dir(hubseats.File(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hubseats.File(dir), data, 0o600); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- FollowSeats(ctx, SeatsSettings{Root: dir, Machine: "hub-1", Remote: []string{"Agent-5"}, Conn: testConn(t, srv.ClientURL()), Clock: clk, Human: "human"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("FollowSeats: %v", err)
		}
	}()
	poll.Until(t, "the new hub's seats file", func() bool { s, _, _ := hubseats.Read(dir); return s.UpdatedAt.Equal(start) })
	if s, _, _ := hubseats.Read(dir); !s.Beats["Agent-5"].At.Equal(before) {
		t.Fatalf("the new hub's record %+v forgot Agent-5's last beat", s.Beats)
	}
	told := func() int {
		mb, err := mailbox.Open(dir, "human")
		if err != nil {
			return 0
		}
		pending, _ := mb.List(mailbox.StatePending)
		return len(pending)
	}
	if n := told(); n != 0 {
		t.Fatalf("told %d notices before the new hub listened three beats", n)
	}
	for range 3 {
		clk.BlockUntil(1)
		clk.Advance(DefaultBeat)
	}
	poll.Until(t, "one notice", func() bool { return told() == 1 })
}
