package cursor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeScreen plays a scripted reply region: frames[i] is shown from
// times[i] on, on a clock that only moves when the watcher sleeps.
type fakeScreen struct {
	now    time.Time
	times  []time.Duration
	frames []string
	closed time.Duration // when the window disappears; 0 = never
	start  time.Time
}

func newFakeScreen(script ...any) *fakeScreen {
	f := &fakeScreen{start: time.Unix(0, 0)}
	f.now = f.start
	for i := 0; i < len(script); i += 2 {
		f.times = append(f.times, script[i].(time.Duration))
		f.frames = append(f.frames, script[i+1].(string))
	}
	return f
}

func (f *fakeScreen) watcher() *watcher {
	return &watcher{
		capture: func() ([]byte, error) {
			at := f.now.Sub(f.start)
			shown := ""
			for i, t := range f.times {
				if at >= t {
					shown = f.frames[i]
				}
			}
			return []byte(shown), nil
		},
		alive: func() error {
			if f.closed > 0 && f.now.Sub(f.start) >= f.closed {
				return ErrWindowNotFound
			}
			return nil
		},
		now: func() time.Time { return f.now },
		sleep: func(ctx context.Context, d time.Duration) error {
			f.now = f.now.Add(d)
			return ctx.Err()
		},
		every: 40 * time.Millisecond,
	}
}

func (f *fakeScreen) elapsed() time.Duration { return f.now.Sub(f.start) }

const ms = time.Millisecond

func TestWatcherWaitsOutPausesInTheStream(t *testing.T) {
	// Prompt drawn at once, 2 s thinking, then chunks 600 ms apart.
	f := newFakeScreen(0*ms, "prompt", 2000*ms, "p+a", 2600*ms, "p+ab", 3200*ms, "p+abc")
	if err := f.watcher().reply(context.Background(), 200*ms, time.Minute, 700*ms); err != nil {
		t.Fatal(err)
	}
	// Done means: the last chunk was seen and nothing changed for 700 ms.
	if got := f.elapsed(); got < 3900*ms || got > 4000*ms {
		t.Errorf("finished at %s, want just after 3.9s", got)
	}
}

func TestWatcherQuietShorterThanAPauseStopsEarly(t *testing.T) {
	// The rule's other side: a quiet period below the longest pause ends
	// the wait mid-reply, which is why config refuses quiet < 700ms.
	f := newFakeScreen(0*ms, "prompt", 100*ms, "p+a", 700*ms, "p+ab")
	if err := f.watcher().reply(context.Background(), 50*ms, time.Minute, 300*ms); err != nil {
		t.Fatal(err)
	}
	if f.elapsed() >= 700*ms {
		t.Errorf("finished at %s; expected the short quiet period to stop before the second chunk", f.elapsed())
	}
}

func TestWatcherNoReplyWithinFirstChange(t *testing.T) {
	f := newFakeScreen(0*ms, "prompt")
	err := f.watcher().reply(context.Background(), 200*ms, 5*time.Second, 700*ms)
	if !errors.Is(err, ErrNoReply) {
		t.Fatalf("err = %v, want ErrNoReply", err)
	}
	if f.elapsed() < 5*time.Second || f.elapsed() > 6*time.Second {
		t.Errorf("gave up at %s, want after the 5s first-change timeout", f.elapsed())
	}
}

func TestWatcherWindowClosed(t *testing.T) {
	f := newFakeScreen(0*ms, "prompt", 500*ms, "p+a")
	f.closed = 800 * ms
	err := f.watcher().reply(context.Background(), 200*ms, time.Minute, 700*ms)
	if !errors.Is(err, ErrWindowNotFound) {
		t.Fatalf("err = %v, want ErrWindowNotFound", err)
	}
	if f.elapsed() > 900*ms {
		t.Errorf("noticed the closed window at %s, want at once", f.elapsed())
	}
}

func TestWatcherTurnDeadline(t *testing.T) {
	// A region that never stops changing ends at the turn's deadline.
	f := newFakeScreen()
	for i := 0; i < 1000; i++ {
		f.times = append(f.times, time.Duration(i)*30*ms)
		f.frames = append(f.frames, string(rune('a'+i%26)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := f.watcher()
	sleep := w.sleep
	w.sleep = func(c context.Context, d time.Duration) error {
		if f.elapsed() > 3*time.Second {
			cancel()
		}
		return sleep(c, d)
	}
	if err := w.reply(ctx, 200*ms, time.Minute, 700*ms); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's error", err)
	}
}
