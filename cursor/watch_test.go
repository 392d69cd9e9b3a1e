package cursor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeScreen plays a scripted chat: from times[i] on it shows replies[i]
// in the reply region and busies[i] in the busy indicator, on a clock that
// only moves when the watcher sleeps.
type fakeScreen struct {
	now     time.Time
	times   []time.Duration
	replies []string
	busies  []string
	closed  time.Duration // when the window disappears; 0 = never
	start   time.Time
}

// newFakeScreen takes triples: time, reply region, busy indicator ("" for
// a window without one).
func newFakeScreen(script ...any) *fakeScreen {
	f := &fakeScreen{start: time.Unix(0, 0)}
	f.now = f.start
	for i := 0; i < len(script); i += 3 {
		f.times = append(f.times, script[i].(time.Duration))
		f.replies = append(f.replies, script[i+1].(string))
		f.busies = append(f.busies, script[i+2].(string))
	}
	return f
}

func (f *fakeScreen) watcher() *watcher {
	return &watcher{
		look: func() (look, error) {
			at := f.now.Sub(f.start)
			var l look
			for i, t := range f.times {
				if at >= t {
					l.reply = []byte(f.replies[i])
					l.busy = nil
					if f.busies[i] != "" {
						l.busy = []byte(f.busies[i])
					}
				}
			}
			return l, nil
		},
		alive: func() error {
			if f.closed > 0 && f.now.Sub(f.start) >= f.closed {
				return ErrWindowNotFound
			}
			return nil
		},
		Clock: screenClock{f},
		every: 40 * time.Millisecond,
	}
}

// screenClock is the fake screen's time, which a wait on it moves at once
// to the time waited for.
type screenClock struct{ f *fakeScreen }

func (c screenClock) Now() time.Time { return c.f.now }

func (c screenClock) At(t time.Time) <-chan time.Time {
	if t.After(c.f.now) {
		c.f.now = t
	}
	ch := make(chan time.Time, 1)
	ch <- c.f.now
	return ch
}

// screenDeadline is a context whose deadline is reached once the fake
// screen's clock has moved past at.
type screenDeadline struct {
	context.Context
	f  *fakeScreen
	at time.Duration
}

func (d screenDeadline) Done() <-chan struct{} {
	if d.Err() == nil {
		return nil
	}
	done := make(chan struct{})
	close(done)
	return done
}

func (d screenDeadline) Err() error {
	if d.f.elapsed() > d.at {
		return context.DeadlineExceeded
	}
	return nil
}

func (f *fakeScreen) elapsed() time.Duration { return f.now.Sub(f.start) }

const ms = time.Millisecond

func withBusy(settle time.Duration) *finishRule {
	return &finishRule{idle: fingerprintText("send"), settle: settle}
}

func stillness(maxPause time.Duration) *finishRule { return &finishRule{settle: maxPause} }

func TestFinishWaitsForTheBusyIndicatorThroughALongPause(t *testing.T) {
	// No echo, the reply starts 300 ms after Enter, pauses 2.5 s mid-stream
	// while the model still works, and ends at 3.2 s.
	f := newFakeScreen(
		0*ms, "", "stop",
		300*ms, "a", "stop",
		400*ms, "ab", "stop",
		2900*ms, "abc", "stop",
		3200*ms, "abcd", "send")
	if _, err := f.watcher().finished(context.Background(), withBusy(100*ms)); err != nil {
		t.Fatal(err)
	}
	if got := f.elapsed(); got < 3300*ms || got > 3400*ms {
		t.Errorf("finished at %s, want just after 3.3s (indicator at rest at 3.2s, then 100ms unchanged)", got)
	}
}

func TestFinishWithoutIndicatorOutlastsMaxPause(t *testing.T) {
	f := newFakeScreen(
		0*ms, "", "",
		300*ms, "a", "",
		2800*ms, "ab", "", // a 2.5 s pause
		3000*ms, "abc", "")
	if _, err := f.watcher().finished(context.Background(), stillness(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := f.elapsed(); got < 13*time.Second || got > 13100*ms {
		t.Errorf("finished at %s, want just after 13s (last change at 3s, then max_pause)", got)
	}
}

func TestFinishWaitsOutAnIndicatorAnimatedInTheReplyRegion(t *testing.T) {
	// A "Generating" line animates inside the reply region for 5 s; no
	// busy indicator is calibrated: the animation itself keeps it waiting.
	var script []any
	for i := 0; i < 50; i++ {
		script = append(script, time.Duration(i)*100*ms, "Generating"+strings.Repeat(".", i%4), "")
	}
	script = append(script, 5*time.Second, "the reply", "")
	f := newFakeScreen(script...)
	if _, err := f.watcher().finished(context.Background(), stillness(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := f.elapsed(); got < 6*time.Second {
		t.Errorf("finished at %s, before the animation had ended and a second passed", got)
	}
}

func TestFinishedIsNotFooledByARestingIndicatorWhileTheRegionMoves(t *testing.T) {
	// The indicator is at rest but the reply is still being drawn: wait.
	f := newFakeScreen(0*ms, "a", "send", 50*ms, "ab", "send", 90*ms, "abc", "send", 130*ms, "abcd", "send")
	if _, err := f.watcher().finished(context.Background(), withBusy(100*ms)); err != nil {
		t.Fatal(err)
	}
	if got := f.elapsed(); got < 230*ms {
		t.Errorf("finished at %s, before the region was unchanged for 100ms after its last change at 130ms", got)
	}
}

func TestTimeoutNamesTheMissingSignal(t *testing.T) {
	f := newFakeScreen(0*ms, "", "stop")
	ctx := screenDeadline{Context: context.Background(), f: f, at: 2 * time.Second}
	_, err := f.watcher().finished(ctx, withBusy(100*ms))
	if !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), "the model still working") {
		t.Fatalf("err = %v, want ErrNoReply naming the busy indicator", err)
	}
}

func TestWatcherWindowClosed(t *testing.T) {
	f := newFakeScreen(0*ms, "prompt", "", 500*ms, "p+a", "")
	f.closed = 800 * ms
	_, err := f.watcher().finished(context.Background(), stillness(10*time.Second))
	if !errors.Is(err, ErrWindowNotFound) {
		t.Fatalf("err = %v, want ErrWindowNotFound", err)
	}
	if f.elapsed() > 900*ms {
		t.Errorf("noticed the closed window at %s, want at once", f.elapsed())
	}
}

func TestWithinGivesUp(t *testing.T) {
	f := newFakeScreen(0*ms, "x", "")
	ok, err := f.watcher().within(context.Background(), time.Second, func(l look) bool { return string(l.reply) != "x" })
	if ok || err != nil {
		t.Fatalf("within = %v, %v; want false, nil", ok, err)
	}
	if f.elapsed() < time.Second || f.elapsed() > 1100*ms {
		t.Errorf("gave up at %s, want after 1s", f.elapsed())
	}
}

func TestStaleCopies(t *testing.T) {
	st := turnState{Prev: fingerprintText("the old reply"), PrevKnown: true}
	prompt := "do the thing\r\n"
	for _, c := range []struct {
		copied string
		stale  bool
	}{
		{"", true},
		{"the old reply", true},
		{"do the thing\r\n", true},
		{"do the thing", true}, // the echo, as the chat trimmed it
		{"the new reply", false},
		{"the old reply, and more", false},
	} {
		if got := st.stale(prompt, c.copied) != ""; got != c.stale {
			t.Errorf("stale(%q) = %v, want %v", c.copied, got, c.stale)
		}
	}
	unknown := decodeState("")
	if unknown.stale(prompt, "the old reply") != "" {
		t.Errorf("a resumed turn without a record refused a reply it cannot know to be old")
	}
}

func TestStateRoundTripAndOldFormat(t *testing.T) {
	st := turnState{Prev: fingerprintText("x"), PrevKnown: true, Idle: fingerprintText("send")}
	if got := decodeState(st.encode()); got != st {
		t.Errorf("decoded %+v, want %+v", got, st)
	}
	// An older agentctl recorded a bare screenshot fingerprint.
	if got := decodeState(fingerprintText("frame")); got != (turnState{}) {
		t.Errorf("an old state decoded to %+v, want one that knows nothing", got)
	}
}

func TestSubmissionSignals(t *testing.T) {
	empty := []byte("empty box")
	pasted := look{reply: []byte("transcript"), busy: []byte("send"), input: []byte("box with prompt")}
	for _, c := range []struct {
		name      string
		now       look
		pasteSeen bool
		want      string
	}{
		{"nothing yet", pasted, true, ""},
		{"input emptied", look{reply: pasted.reply, busy: pasted.busy, input: empty}, true, "the input box emptied"},
		{"input looks empty but the paste was never seen", look{reply: pasted.reply, busy: pasted.busy, input: empty}, false, ""},
		{"stop button", look{reply: pasted.reply, busy: []byte("stop"), input: pasted.input}, true, "the busy indicator changed"},
		{"transcript", look{reply: []byte("transcript+echo"), busy: pasted.busy, input: pasted.input}, true, "the transcript changed"},
	} {
		if got := submissionSignal(pasted, c.now, empty, c.pasteSeen, false); got != c.want {
			t.Errorf("%s: signal %q, want %q", c.name, got, c.want)
		}
		if c.name == "transcript" {
			c.want = "" // a transcript that moves when the input box is clicked proves nothing
		}
		if got := submissionSignal(pasted, c.now, empty, c.pasteSeen, true); got != c.want {
			t.Errorf("%s: signal %q, want %q", c.name, got, c.want)
		}
	}
}

// The quiet period a checked copy overlaps: the indicator must be at rest
// in every look until it is over, and is looked at at least once even
// when it is over already.
func TestRestHeld(t *testing.T) {
	idle := fingerprintText("send")
	for _, c := range []struct {
		name  string
		f     *fakeScreen
		until time.Duration
		held  bool
		at    time.Duration // when the answer comes
	}{
		{"at rest throughout", newFakeScreen(0*ms, "r", "send"), 100 * ms, true, 100 * ms},
		{"busy again within", newFakeScreen(0*ms, "r", "send", 50*ms, "r", "stop"), 100 * ms, false, 80 * ms},
		{"busy again after", newFakeScreen(0*ms, "r", "send", 150*ms, "r", "stop"), 100 * ms, true, 100 * ms},
		{"over already, at rest", newFakeScreen(0*ms, "r", "send"), 0, true, 0},
		{"over already, busy", newFakeScreen(0*ms, "r", "stop"), 0, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.f.watcher()
			held, err := w.restHeld(context.Background(), idle, c.f.start.Add(c.until))
			if err != nil || held != c.held || c.f.elapsed() != c.at {
				t.Errorf("held %v (%v) at %s, want %v at %s", held, err, c.f.elapsed(), c.held, c.at)
			}
		})
	}
}

// A checked copy is taken once the indicator rests after it was seen
// busy, or, for a model too quick to be seen working, once the chat held
// still for max_pause; never while the app may still be starting the
// reply.
func TestAwaitRest(t *testing.T) {
	g := &GUI{maxPause: time.Second}
	rule := withBusy(100 * ms)
	for _, c := range []struct {
		name    string
		f       *fakeScreen
		started bool
		rested  time.Duration
	}{
		// The input box emptied at 0; the stop button shows at 300 ms,
		// the reply streams, and the button goes at 900 ms.
		{"seen busy", newFakeScreen(0*ms, "", "send", 300*ms, "a", "stop", 600*ms, "ab", "stop", 900*ms, "abc", "send"), false, 900 * ms},
		// Never seen busy: the chat changed last at 200 ms.
		{"too quick", newFakeScreen(0*ms, "", "send", 200*ms, "abc", "send"), false, 200 * ms},
		// A copy was taken already: only the indicator counts.
		{"started", newFakeScreen(0*ms, "abc", "stop", 50*ms, "abc", "send"), true, 50 * ms},
	} {
		t.Run(c.name, func(t *testing.T) {
			watch, busy := c.f.watcher(), c.f.watcher()
			busy.every = 10 * ms
			rested, seen, err := g.awaitRest(context.Background(), watch, busy, rule, c.started)
			if err != nil || rested.Sub(c.f.start) != c.rested {
				t.Errorf("rested at %s (%v), want %s", rested.Sub(c.f.start), err, c.rested)
			}
			if want := c.name != "too quick"; seen != want {
				t.Errorf("seen busy = %v, want %v", seen, want)
			}
			if c.name == "too quick" && c.f.elapsed() < c.rested+g.maxPause {
				t.Errorf("a chat never seen busy was taken as rested after %s, before max_pause", c.f.elapsed())
			}
		})
	}
}
