package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
)

func TestTurnCrossesToTheSeatAndBack(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	var submitted atomic.Int32
	var used atomic.Pointer[cursor.Usage]
	turn := cursor.Turn{ID: "m1/1", Prompt: "P", OnStage: func(s cursor.Stage) error {
		if s == cursor.StageSubmitted {
			submitted.Add(1)
		}
		return nil
	}, OnUsage: func(u cursor.Usage) { used.Store(&u) }}
	got := askTurn(context.Background(), d, turn)
	c.waitRunning(t)
	c.gate <- struct{}{}
	a := result(t, got)
	if a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run = %q, %v; want the seat's reply", a.reply, a.err)
	}
	if n := submitted.Load(); n != 1 {
		t.Errorf("the hub heard of the submission %d times, want once", n)
	}
	if sent, _ := c.counts("m1/1"); sent != 1 {
		t.Errorf("prompt sent %d times", sent)
	}
	// What the turn used crosses with the reply, for the hub's cost ledger.
	if u := used.Load(); u == nil || *u != (cursor.Usage{InputTokens: 1, OutputTokens: 7, CostUSD: 0.25, Model: "chat-1"}) {
		t.Errorf("the hub heard usage %+v, want the seat's", u)
	}
}

// A seat stopped mid-turn (its machine restarted, say) comes back, finds
// the turn in its journal and resumes it: the prompt is not sent again.
func TestSeatStoppedMidTurnResumesWithoutSendingAgain(t *testing.T) {
	r := newRig(t)
	c := r.chat
	got := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	r.stopSeat()
	r.startSeat(t)
	c.waitRunning(t) // the new seat took the turn up again at once
	c.gate <- struct{}{}
	if a := result(t, got); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run = %q, %v", a.reply, a.err)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 1 {
		t.Errorf("prompt sent %d times and resumed %d times; want sent once, resumed once", sent, resumed)
	}
}

// A seat asked to stop mid-turn (its machine shutting down, 'agentctl
// down') gives the turn its shutdown grace, as a runner does: the turn
// finishes, the hub gets its reply at once, and nothing is resumed or sent
// again. A seat stopped that way used to cut the turn off, which an exec
// seat cannot resume.
func TestSeatStoppingMidTurnLetsItFinishWithinTheGrace(t *testing.T) {
	r := newRig(t)
	r.stopSeat()
	c := r.chat
	stop, stopped := startSeatWith(t, testConn(t, r.url), c, r.journal, time.Minute)
	got := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	stop()
	c.gate <- struct{}{} // the turn ends within the grace
	if a := result(t, got); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run = %q, %v; want the reply of the turn the seat finished as it stopped", a.reply, a.err)
	}
	stopped()
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d; want sent once, never resumed", sent, resumed)
	}
}

// A hub that dies mid-turn (its connection gone, no cancel sent) and asks
// again once it is back gets the reply the seat finished meanwhile, from
// the stream or from the journal; the prompt was sent once.
func TestHubRestartedMidTurnGetsTheReplyOnce(t *testing.T) {
	r := newRig(t)
	c := r.chat
	dead := testConn(t, r.url)
	d1 := r.newDriver(t, dead)
	askTurn(context.Background(), d1, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	dead.Close()
	c.gate <- struct{}{} // the model finishes while no hub listens

	d2 := r.newDriver(t, testConn(t, r.url))
	if a := result(t, askTurn(context.Background(), d2, cursor.Turn{ID: "m1/1", Prompt: "P", Resume: true})); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run after the restart = %q, %v", a.reply, a.err)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d; want sent once and answered from the journal", sent, resumed)
	}
}

// A person skipped the turn: the seat stops it, and does not take it up
// again by itself.
func TestAbandonedTurnStopsOnTheSeat(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	ctx, cancel := context.WithCancelCause(context.Background())
	got := askTurn(ctx, d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	cancel(cursor.ErrAbandoned)
	if a := result(t, got); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", a.err)
	}
	// The next turn reaches the chat: the seat is free again.
	next := askTurn(context.Background(), d, cursor.Turn{ID: "m2/1", Prompt: "Q"})
	if id := c.waitRunning(t); id != "m2/1" {
		t.Fatalf("the chat got %s, want the next turn m2/1", id)
	}
	c.gate <- struct{}{}
	if a := result(t, next); a.err != nil || a.reply != "reply to Q" {
		t.Fatalf("next Run = %q, %v", a.reply, a.err)
	}
}

// The server goes away mid-turn and comes back on its store: the seat
// keeps the answer until it can send it, and the prompt is sent once. The
// journal says the answer is unsent until the hub has it, so that a seat
// away for longer than the journal keeps turns still has it then.
func TestServerStoppedMidTurnLosesNothing(t *testing.T) {
	r := newRig(t)
	c := r.chat
	got := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	r.srv.Shutdown()
	c.gate <- struct{}{} // answered while the server is down
	j, err := OpenJournal(r.journal)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the seat to hold the answer it cannot send yet", func() bool {
		e, ok, err := j.Load("m1/1")
		return err == nil && ok && e.Stage == stageAnswered && e.Unsent
	})
	testServer(t, hostPort(t, r.url), r.store)
	if a := result(t, got); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run = %q, %v", a.reply, a.err)
	}
	poll.Until(t, "the held answer sent", func() bool {
		e, ok, err := j.Load("m1/1")
		return err == nil && ok && e.Stage == stageAnswered && !e.Unsent
	})
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d", sent, resumed)
	}
}

// A turn that failed on the seat before the agent had its prompt (its
// window missing, a model API refusing) is asked again by the hub once it
// has waited: the seat takes it again rather than replay its old failure,
// which would fail the turn for ever without trying.
func TestTurnThatFailedBeforeThePromptIsTakenAgain(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	c.set(func(c *chat) { c.failEarly = cursor.ErrWindowNotFound })
	if a := result(t, askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P"})); !errors.Is(a.err, cursor.ErrWindowNotFound) {
		t.Fatalf("first Run = %q, %v; want the window's absence", a.reply, a.err)
	}
	c.set(func(c *chat) { c.failEarly = nil }) // the window is back
	again := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	c.gate <- struct{}{}
	if a := result(t, again); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run asked again = %q, %v; want the turn taken again", a.reply, a.err)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d; want sent once", sent, resumed)
	}
}

// A seat that stops just as its driver has the reply keeps the reply: it is
// answered from the journal when the seat is back, not resumed, which not
// every driver can do.
func TestSeatStoppingWithTheReplyInHandKeepsIt(t *testing.T) {
	r := newRig(t)
	c := r.chat
	c.set(func(c *chat) { c.finishOnStop = true })
	got := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	stopped := make(chan struct{})
	go func() {
		r.stopSeat()
		close(stopped)
	}()
	<-c.stopSeen
	c.gate <- struct{}{} // the reply comes as the seat stops
	<-stopped
	c.set(func(c *chat) { c.finishOnStop = false })
	r.startSeat(t)
	if a := result(t, got); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run = %q, %v", a.reply, a.err)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d; want sent once and answered from the journal", sent, resumed)
	}
}

// A reply larger than the hub's server takes in one message comes to the
// hub as output that cannot be used, with the reason, so the message is
// dead-lettered rather than the seat trying to send it for ever. A prompt
// too big is refused on the hub's side at once.
func TestTooBigForTheHubIsSaidAtOnce(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	c.set(func(c *chat) { c.bigReply = 2 << 20 })
	got := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	c.gate <- struct{}{}
	a := result(t, got)
	if !errors.Is(a.err, cursor.ErrBadOutput) || cursor.FailureOf(a.err).Kind != cursor.FailureBadOutput || !strings.Contains(a.err.Error(), "more than the hub's server takes") {
		t.Fatalf("Run = %v; want output that cannot be used, too big for the hub", a.err)
	}
	a = result(t, askTurn(context.Background(), d, cursor.Turn{ID: "m2/1", Prompt: strings.Repeat("p", 2<<20)}))
	if !errors.Is(a.err, cursor.ErrPromptRefused) || !strings.Contains(a.err.Error(), "the ask carrying the prompt is") {
		t.Fatalf("Run of a 2 MiB prompt = %v; want it refused as too big", a.err)
	}
	if sent, _ := c.counts("m2/1"); sent != 0 {
		t.Errorf("the 2 MiB prompt reached the chat %d times", sent)
	}
}

// A turn that fails on the seat fails on the hub with the same driver
// error, so the runner judges it as its own driver's.
func TestSeatFailureKeepsItsKind(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	c.failWith(cursor.ErrNoReply)
	var submitted atomic.Bool
	got := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P", OnStage: func(s cursor.Stage) error {
		submitted.Store(s == cursor.StageSubmitted)
		return nil
	}})
	c.waitRunning(t)
	c.gate <- struct{}{}
	a := result(t, got)
	if !errors.Is(a.err, cursor.ErrNoReply) {
		t.Fatalf("Run = %v, want an error that is cursor.ErrNoReply", a.err)
	}
	if !submitted.Load() {
		t.Error("the hub was not told the prompt was submitted")
	}
}

// A turn whose send key the seat's driver pressed may be with the agent:
// failing with nothing to show whether the chat took the prompt, or with
// no reply before any proof of it, it comes to the hub as pressed (not as
// submitted), so the runner does not send it again and says no more than
// it knows; failing with the prompt seen still in the chat's input, it
// comes as not submitted, to be tried again.
func TestSeatTellsWhetherAPressedPromptMayBeWithTheAgent(t *testing.T) {
	for _, tc := range []struct {
		err   error
		heard string // the stages the hub's runner hears
	}{
		{cursor.ErrSubmitUnknown, "pressed"},
		{cursor.ErrNoReply, "pressed"},
		{cursor.ErrNotSubmitted, ""},
	} {
		t.Run(kindOf(tc.err), func(t *testing.T) {
			r := newRig(t)
			c, d := r.chat, r.driver
			c.set(func(c *chat) { c.pressedOnly = true })
			c.failWith(fmt.Errorf("%w: as the driver saw it", tc.err))
			var heard stagesHeard
			got := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P", OnStage: heard.hear})
			c.waitRunning(t)
			c.gate <- struct{}{}
			if a := result(t, got); !errors.Is(a.err, tc.err) {
				t.Fatalf("Run = %v, want %v", a.err, tc.err)
			}
			if got := strings.Join(heard.list(), " "); got != tc.heard {
				t.Errorf("the hub heard stages %q, want %q", got, tc.heard)
			}
		})
	}
}

// A press of the send key whose record the seat could not write (a full
// disk for a moment) never happened: the key goes only once it is on
// record. The hub hears that the prompt was not sent, so it may send it
// again; it used to hear "pressed", which keeps a prompt from being sent
// again for good.
func TestSeatWhosePressWasNotRecordedSaysThePromptWasNotSent(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	// A link to nowhere where the turn's record goes: the turn reads as
	// new, and its first record fails.
	blocked := (&Journal{dir: r.journal}).file("m1/1")
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone", "record"), blocked); err != nil {
		t.Fatal(err)
	}
	c.set(func(c *chat) {
		c.pressedOnly = true
		c.afterPress = func() { os.Remove(blocked) }
	})
	var heard stagesHeard
	got := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P", OnStage: heard.hear})
	if a := result(t, got); a.err == nil {
		t.Fatalf("Run = %q; want the turn failed", a.reply)
	}
	if got := heard.list(); len(got) != 0 {
		t.Errorf("the hub heard stages %q, want none: the key never went", got)
	}
}

// stagesHeard are the stages the hub's runner hears of a turn (its
// OnStage), but the hand-overs to the seat.
type stagesHeard struct {
	mu    sync.Mutex
	heard []string
}

func (h *stagesHeard) hear(s cursor.Stage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s != cursor.StageHanded {
		h.heard = append(h.heard, string(s))
	}
	return nil
}

func (h *stagesHeard) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.heard)
}

// What a seat read from its command's output (a model API's refusal)
// crosses to the hub's runner, which waits as it would for its own.
func TestSeatFailureKeepsItsClassification(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	want := cursor.Failure{Kind: cursor.FailureRateLimited, Status: 429, RetryAfter: 30 * time.Second}
	c.failWith(cursor.WithFailure(fmt.Errorf("%w: gemini: exit status 1", cursor.ErrExecFailed), want))
	got := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	c.gate <- struct{}{}
	a := result(t, got)
	if !errors.Is(a.err, cursor.ErrExecFailed) || cursor.FailureOf(a.err) != want {
		t.Fatalf("Run = %v, carrying %+v; want %+v", a.err, cursor.FailureOf(a.err), want)
	}
}

// A hub that got the reply and died before recording it asks again: the
// seat answers from its journal, without touching the chat.
func TestAskAgainIsAnsweredFromTheJournal(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	first := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	c.gate <- struct{}{}
	if a := result(t, first); a.err != nil {
		t.Fatal(a.err)
	}
	again := askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P", Resume: true})
	select {
	case a := <-again:
		if a.err != nil || a.reply != "reply to P" {
			t.Fatalf("Run again = %q, %v", a.reply, a.err)
		}
	case id := <-c.running:
		t.Fatalf("the chat was asked for %s again", id)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d", sent, resumed)
	}
}

// A hub stopping cuts its wait short but not the seat's turn: the model
// finishes, and the restarted hub's ask of the turn gets that reply.
func TestHubShutdownLeavesTheSeatsTurnRunning(t *testing.T) {
	r := newRig(t)
	c, d := r.chat, r.driver
	listener := testConn(t, r.url)
	cancels, err := listener.SubscribeSync(cancelSubject("Agent-5"))
	if err != nil || listener.Flush() != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := askTurn(ctx, d, cursor.Turn{ID: "m1/1", Prompt: "P"})
	c.waitRunning(t)
	cancel()
	if a := result(t, got); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", a.err)
	}
	// A cancel the hub had sent is at the server once the hub's
	// connection is flushed, and with the listener once the listener's is.
	if err := d.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := listener.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := cancels.Pending(); n != 0 {
		t.Fatalf("the hub sent %d cancels on shutting down, want none", n)
	}
	c.gate <- struct{}{}
	if a := result(t, askTurn(context.Background(), d, cursor.Turn{ID: "m1/1", Prompt: "P", Resume: true})); a.err != nil || a.reply != "reply to P" {
		t.Fatalf("Run again = %q, %v", a.reply, a.err)
	}
	if sent, resumed := c.counts("m1/1"); sent != 1 || resumed != 0 {
		t.Errorf("prompt sent %d times, resumed %d; want once, never resumed", sent, resumed)
	}
}

// A cancel can come before the ask it cancels (they travel by different
// ways): the seat keeps it and drops that ask when it comes, and only that
// one; a cancel naming no ask stops only the turn being taken.
func TestCancelBeforeItsAskDropsTheAsk(t *testing.T) {
	st := &seat{}
	cancelOf := func(c Cancel) *nats.Msg {
		data, _ := json.Marshal(c)
		return &nats.Msg{Data: data}
	}
	st.onCancel(cancelOf(Cancel{Turn: "m1/1", Ask: "a1"}))
	st.onCancel(cancelOf(Cancel{Turn: "m9/1"}))
	if st.begin(Ask{Turn: "m1/1", Ask: "a1"}, func() {}) || !st.wasDropped() {
		t.Fatal("an ask cancelled before it came was begun")
	}
	stopped := false
	if !st.begin(Ask{Turn: "m1/1", Ask: "a2"}, func() { stopped = true }) || st.wasDropped() {
		t.Fatal("the turn's next ask was not begun")
	}
	st.onCancel(cancelOf(Cancel{Turn: "m1/1", Ask: "a1"}))
	if stopped {
		t.Fatal("a cancel of the turn's earlier ask stopped its next one")
	}
	st.onCancel(cancelOf(Cancel{Turn: "m1/1"}))
	if !stopped || !st.wasDropped() {
		t.Fatal("a cancel naming the turn alone did not stop it")
	}
	st.end()
	if !st.begin(Ask{Turn: "m9/1", Ask: "a9"}, func() {}) {
		t.Error("a cancel naming no ask, for a turn not begun, dropped it when it came")
	}
}

// A seat away while its turns were settled without it takes none of them
// when it comes back: not a turn a person skipped, nor one the hub's
// runner left for another (an older ask of the agent is replaced by the
// newer one).
func TestASeatThatComesBackTakesOnlyTheTurnAskedNow(t *testing.T) {
	r := newRig(t)
	r.stopSeat()
	js, asks := turnsOf(t, r.url)
	ctx, cancel := context.WithCancelCause(context.Background())
	skipped := askTurn(ctx, r.driver, cursor.Turn{ID: "m1/1", Prompt: "skipped"})
	poll.Until(t, "the ask in the stream", func() bool { return asks() == 1 })
	cancel(cursor.ErrAbandoned)
	if a := result(t, skipped); !errors.Is(a.err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", a.err)
	}
	if n := asks(); n != 0 {
		t.Fatalf("%d asks left after the skip, want none", n)
	}
	// A turn left by a runner that stopped, then another turn asked.
	stop, stopped := context.WithCancel(context.Background())
	left := askTurn(stop, r.driver, cursor.Turn{ID: "m2/1", Prompt: "left"})
	poll.Until(t, "the ask in the stream", func() bool { return asks() == 1 })
	stopped()
	result(t, left)
	now := askTurn(context.Background(), r.driver, cursor.Turn{ID: "m3/1", Prompt: "now"})
	look, cancelLook := poll.Context(t)
	defer cancelLook()
	poll.Until(t, "the newer ask in place of the older", func() bool {
		s, err := js.Stream(look, TurnsStream)
		if err != nil {
			t.Fatal(err)
		}
		last, err := s.GetLastMsgForSubject(look, turnSubject("Agent-5"))
		return err == nil && asks() == 1 && strings.Contains(string(last.Data), `"m3/1"`)
	})

	r.stopSeat = r.startSeat(t)
	if id := r.chat.waitRunning(t); id != "m3/1" {
		t.Fatalf("the seat took %s, want m3/1 alone", id)
	}
	r.chat.gate <- struct{}{}
	if a := result(t, now); a.err != nil || a.reply != "reply to now" {
		t.Fatalf("Run = %q, %v", a.reply, a.err)
	}
	for _, turn := range []string{"m1/1", "m2/1"} {
		if sent, _ := r.chat.counts(turn); sent != 0 {
			t.Errorf("the seat took %s, settled while it was away", turn)
		}
	}
}

// A hub's runner that starts again withdraws the asks left from before:
// a turn settled while no hub ran (a skip) is not taken by a seat that
// comes back, and the turn the runner resumes is asked again.
func TestARestartedHubWithdrawsTheAsksLeftBefore(t *testing.T) {
	r := newRig(t)
	r.stopSeat()
	_, asks := turnsOf(t, r.url)
	stop, stopped := context.WithCancel(context.Background())
	left := askTurn(stop, r.driver, cursor.Turn{ID: "m1/1", Prompt: "skipped while no hub ran"})
	poll.Until(t, "the ask in the stream", func() bool { return asks() == 1 })
	stopped() // the hub stops; a person skips m1 with no runner up
	result(t, left)
	d := r.newDriver(t, testConn(t, r.url)) // the hub starts again
	if n := asks(); n != 0 {
		t.Fatalf("%d asks left after the hub started again, want none", n)
	}
	next := askTurn(context.Background(), d, cursor.Turn{ID: "m2/1", Prompt: "next"})
	r.stopSeat = r.startSeat(t)
	if id := r.chat.waitRunning(t); id != "m2/1" {
		t.Fatalf("the seat took %s, want m2/1", id)
	}
	r.chat.gate <- struct{}{}
	if a := result(t, next); a.err != nil {
		t.Fatal(a.err)
	}
}

// turnsOf is a JetStream view of the server at url, and how many asks its
// turns stream holds.
func turnsOf(t *testing.T, url string) (jetstream.JetStream, func() uint64) {
	t.Helper()
	js, err := jetstream.New(testConn(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := poll.Context(t)
	t.Cleanup(cancel)
	return js, func() uint64 {
		s, err := js.Stream(ctx, TurnsStream)
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().State.Msgs
	}
}

// An error that is two driver errors is named the same every time, an
// unsure submission first: the hub must hear that the agent may have the
// prompt.
func TestKindOfNamesAnUnsureSubmissionFirst(t *testing.T) {
	err := fmt.Errorf("%w: the second press failed: %w", cursor.ErrSubmitUnknown, cursor.ErrNotSubmitted)
	for range 20 {
		if k := kindOf(err); k != "submit_unknown" {
			t.Fatalf("kindOf = %q, want submit_unknown", k)
		}
	}
}

// How far an answer says the prompt got, as the hub's runner records it,
// also from a seat of an earlier release, which says "only pressed" by
// its error alone.
func TestAnswerStage(t *testing.T) {
	for _, c := range []struct {
		a    Answer
		want cursor.Stage
	}{
		{Answer{Reply: "r", Submitted: true}, cursor.StageSubmitted},
		{Answer{Error: "x", Kind: "no_reply", Submitted: true}, cursor.StageSubmitted},
		{Answer{Error: "x", Kind: "no_reply", Submitted: true, OnlyPressed: true}, cursor.StagePressed},
		{Answer{Error: "x", Kind: "submit_unknown", Submitted: true}, cursor.StagePressed},
		{Answer{Error: "x", Kind: "not_submitted"}, ""},
	} {
		if got := c.a.stage(); got != c.want {
			t.Errorf("%+v: stage %q, want %q", c.a, got, c.want)
		}
	}
}
