package mailbox

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// nextChange waits for the watcher; a broken one hangs until the test
// binary's timeout.
func nextChange(t *testing.T, w *Watcher) Change {
	t.Helper()
	return <-w.C
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
	clk := clocktest.New(time.Now())
	w, err := Watch(mb, WatchOptions{Poll: true, PollInterval: time.Minute, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 3 {
		<-clk.Sleeping() // the watcher waits for its next look...
		select {
		case ch := <-w.C:
			t.Fatalf("poll mode reported %+v before its interval passed", ch)
		default:
		}
		clk.Advance(time.Minute) // ...which comes when the clock says
		if ch := <-w.C; !ch.Rescan || len(ch.Names) != 0 {
			t.Fatalf("poll mode reported %+v, want a bare rescan", ch)
		}
	}
}

// serveInBackground runs the real loop until the test ends, reporting each
// handled message id.
func serveInBackground(t *testing.T, mb *Mailbox, opts Options, wopts WatchOptions, clk clock.Clock) <-chan string {
	t.Helper()
	opts.Clock = clk
	c := consume(t, mb, opts, clk.Now())
	w, err := Watch(mb, wopts)
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, c, c, w.C, Worker{Handle: func(ctx context.Context, cl *Claim) error {
			handled <- cl.Message.ID
			return c.Complete(cl, Receipt{}, clk.Now())
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
		got = append(got, <-handled)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("handled %v, want %v", got, want)
	}
}

// The loop picks up a delivered message, a dropped Markdown message once it
// settles, and a held-back message once its time comes, all without
// polling: it sleeps on its clock until then.
func TestServePicksUpEverything(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	clk := clocktest.New(time.Now())
	handled := serveInBackground(t, mb, Options{Known: []string{"Agent-1"}, Settle: 200 * time.Millisecond},
		WatchOptions{RescanInterval: time.Hour}, clk)
	if err := mb.Deliver(testMessage("delivered", "Agent-1", Normal)); err != nil {
		t.Fatal(err)
	}
	waitHandled(t, handled, "delivered")
	writeFile(t, inboxPath(mb, "note.md"), []byte("# Hello\n**From**: Agent-2\n**Message ID**: md-1\n---\nhi\n"))
	<-clk.Sleeping() // until the file settles
	notYet(t, handled, "md-1")
	// The loop may have seen the file half written (its creation before
	// its write) and, seeing the rest, wait once more from then.
	for waits := 1; ; waits++ {
		clk.Advance(time.Minute)
		var id string
		select {
		case id = <-handled:
		case <-clk.Sleeping():
			if waits == 3 {
				t.Fatal("the settled file was not handled after three waits of the loop")
			}
			continue
		}
		if id != "md-1" {
			t.Fatalf("handled %s, want md-1", id)
		}
		break
	}
	later := clk.Now().Add(time.Hour)
	m := testMessage("later", "Agent-1", Normal)
	m.DeliverAfter = &later
	if err := mb.Deliver(m); err != nil {
		t.Fatal(err)
	}
	<-clk.Sleeping() // until the message's time
	notYet(t, handled, "later")
	clk.Advance(time.Hour)
	waitHandled(t, handled, "later")
}

// notYet fails if anything was handled while the loop sleeps.
func notYet(t *testing.T, handled <-chan string, what string) {
	t.Helper()
	select {
	case id := <-handled:
		t.Fatalf("%s was handled before its time (waiting for %s)", id, what)
	default:
	}
}

// In poll mode, where no events arrive, messages are still picked up.
func TestServeInPollMode(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	handled := serveInBackground(t, mb, Options{Known: []string{"Agent-1"}},
		WatchOptions{Poll: true, PollInterval: 20 * time.Millisecond}, clock.System)
	for _, id := range []string{"p1", "p2"} {
		if err := mb.Deliver(testMessage(id, "Agent-1", Normal)); err != nil {
			t.Fatal(err)
		}
	}
	waitHandled(t, handled, "p1", "p2")
}

// A mailbox folder removed is repaired only once the folders have been
// still for layoutRecheck, never while rm -r may still be removing the
// mailbox around it: a folder made again meanwhile would make rm fail.
func TestWatcherWaitsForARemovalToEndBeforeTheRepair(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	clk := clocktest.New(time.Now())
	w, err := Watch(mb, WatchOptions{RescanInterval: time.Hour, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-clk.Sleeping() // the periodic rescan's wait

	if err := os.Remove(mb.path(ProcessingDir)); err != nil {
		t.Fatal(err)
	}
	<-clk.Sleeping() // the removal seen: its rescan waits
	select {
	case ch := <-w.C:
		t.Fatalf("asked for %+v while the removal may go on", ch)
	default:
	}
	clk.Advance(layoutRecheck)
	if ch := nextChange(t, w); !ch.Rescan {
		t.Fatalf("got %+v after the folders were still, want a rescan", ch)
	}
}
