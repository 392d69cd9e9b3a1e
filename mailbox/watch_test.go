package mailbox

import (
	"context"
	"slices"
	"testing"
	"time"
)

// nextChange waits for the watcher, with a deadline so a broken watcher
// fails the test instead of hanging it.
func nextChange(t *testing.T, w *Watcher) Change {
	t.Helper()
	select {
	case ch := <-w.C:
		return ch
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10s")
		return Change{}
	}
}

func TestWatcherReportsInboxAndInboxJSON(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	w, err := Watch(mb, WatchOptions{RescanInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	writeFile(t, mb.path(StatusJSON), []byte("{}")) // not a message: never reported
	writeFile(t, inboxPath(mb, "a.json"), []byte("{}"))
	got := map[string]bool{}
	for !got["a.json"] {
		ch := nextChange(t, w)
		for _, n := range ch.Names {
			got[n] = true
		}
	}
	writeFile(t, mb.path(InboxJSON), []byte("[]"))
	for !got[InboxJSON] {
		for _, n := range nextChange(t, w).Names {
			got[n] = true
		}
	}
	if got[StatusJSON] {
		t.Errorf("status.json was reported: %v", got)
	}
}

func TestWatcherPollModeAsksForRescans(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	w, err := Watch(mb, WatchOptions{Poll: true, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 3 {
		if ch := nextChange(t, w); !ch.Rescan || len(ch.Names) != 0 {
			t.Fatalf("poll mode reported %+v, want a bare rescan", ch)
		}
	}
}

// serveInBackground runs the real loop until the test ends, reporting each
// handled message id.
func serveInBackground(t *testing.T, mb *Mailbox, opts Options, wopts WatchOptions) <-chan string {
	t.Helper()
	c := consume(t, mb, opts, time.Now())
	w, err := Watch(mb, wopts)
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, c, w.C, SystemClock, Worker{Handle: func(ctx context.Context, cl *Claim) error {
			handled <- cl.Message.ID
			return c.Complete(cl, Receipt{}, time.Now())
		}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		w.Close()
	})
	return handled
}

func waitHandled(t *testing.T, handled <-chan string, want ...string) {
	t.Helper()
	var got []string
	for len(got) < len(want) {
		select {
		case id := <-handled:
			got = append(got, id)
		case <-time.After(10 * time.Second):
			t.Fatalf("handled %v, still waiting for %v", got, want)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("handled %v, want %v", got, want)
	}
}

// The loop picks up a delivered message, a dropped Markdown message once it
// settles, and a retry once its backoff ends, all without polling.
func TestServePicksUpEverything(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	handled := serveInBackground(t, mb, Options{Known: []string{"Agent-1"}, Settle: 200 * time.Millisecond},
		WatchOptions{RescanInterval: time.Hour})
	if err := mb.Deliver(testMessage("delivered", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	waitHandled(t, handled, "delivered")
	writeFile(t, inboxPath(mb, "note.md"), []byte("# Hello\n**From**: Agent-2\n**Message ID**: md-1\n---\nhi\n"))
	waitHandled(t, handled, "md-1")
	later := time.Now().Add(300 * time.Millisecond)
	m := testMessage("later", "Agent-1", Normal)
	m.DeliverAfter = &later
	if err := mb.Deliver(m); err != nil {
		t.Fatal(err)
	}
	waitHandled(t, handled, "later")
	if time.Now().Before(later) {
		t.Error("a held-back message was handled before its time")
	}
}

// In poll mode, where no events arrive, messages are still picked up.
func TestServeInPollMode(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	handled := serveInBackground(t, mb, Options{Known: []string{"Agent-1"}},
		WatchOptions{Poll: true, PollInterval: 20 * time.Millisecond})
	for _, id := range []string{"p1", "p2"} {
		if err := mb.Deliver(testMessage(id, "Agent-1", Normal)); err != nil {
			t.Fatal(err)
		}
	}
	waitHandled(t, handled, "p1", "p2")
}
