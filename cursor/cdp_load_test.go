//go:build linux

package cursor

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// notes collects a turn's notes.
type notes struct {
	mu   sync.Mutex
	said []string
}

func (n *notes) hear(s string) { n.mu.Lock(); n.said = append(n.said, s); n.mu.Unlock() }
func (n *notes) all() string   { n.mu.Lock(); defer n.mu.Unlock(); return strings.Join(n.said, " | ") }

// A page starved right as it says it is done: it drops its busy state with
// its last chunk still to draw from a timer, and its main thread is then
// blocked, so by the page's clock the reply has been still for far longer
// than cdp.quiet when the driver next looks. The driver must wait for the
// page to have run what it had queued.
func TestCDPPageStarvedAsItSaysDoneIsWaitedFor(t *testing.T) {
	b := startCDPBrowser(t)
	s := shape{name: "starved", think: 0.1, chunks: 2, pause: 0.05}
	for _, way := range []string{"busy", "busy-text"} {
		t.Run(way, func(t *testing.T) {
			c := b.openChatPageWith(t, "Cursor - starved "+way, s, 0, url.Values{"late_ms": {"400"}})
			seat := c.seat()
			if way == "busy-text" {
				seat.Copy, seat.Read = "", ReadRendered
			}
			d := newTestCDP(t, seat)
			for turn := 1; turn <= 2; turn++ {
				prompt := "starved turn " + itoa(turn)
				reply, err := d.Run(context.Background(), Turn{Prompt: prompt})
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				if want := "You wrote:\n" + prompt; reply != want {
					t.Fatalf("turn %d: reply %q, want %q: the driver took the reply before the page drew its end", turn, reply, want)
				}
			}
		})
	}
}

// Two identical replies in a row are both taken: the second is a new
// reply element, whatever its text.
func TestCDPIdenticalRepliesInARowAreBothTaken(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - identical", shape{name: "quick", think: 0.1, chunks: 2, pause: 0.05}, 0)
	for _, copy := range []bool{true, false} {
		seat := c.seat()
		if !copy {
			seat.Copy, seat.Read = "", ReadRendered
		}
		d := newTestCDP(t, seat)
		for range 2 {
			reply, err := d.Run(context.Background(), Turn{Prompt: "say the same"})
			if err != nil || reply != "You wrote:\nsay the same" {
				t.Fatalf("copy %v: %q, %v", copy, reply, err)
			}
		}
	}
	if got := c.prompts(t); len(got) != 4 {
		t.Fatalf("the page received %q", got)
	}
}

// A page that has finished but offers no reply the driver can read fails
// the turn on its own, within seconds, saying why; not at the turn's
// timeout (a minute here).
func TestCDPUnreadableReplyFailsSayingWhy(t *testing.T) {
	b := startCDPBrowser(t)
	for _, tc := range []struct {
		name string
		edit func(*CDPSettings)
		want error
		says []string
	}{
		{"reply matches nothing", func(s *CDPSettings) { s.Copy, s.Read, s.Reply = "", ReadRendered, "#transcript .no-such-reply" }, ErrNotCalibrated,
			[]string{"cdp.reply", "matches nothing"}},
		{"copy matches nothing", func(s *CDPSettings) { s.Copy = "#no-such-copy" }, ErrNotCalibrated,
			[]string{"cdp.copy", "matches nothing"}},
		{"copy gives nothing", func(s *CDPSettings) { s.Copy = "#transcript .who" }, ErrNoReply,
			[]string{"gave nothing", "cdp.copy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.openChatPage(t, "Cursor - unreadable "+tc.name, shape{name: "quick", think: 0.1, chunks: 1}, 0)
			seat := c.seat()
			tc.edit(&seat)
			_, err := newTestCDP(t, seat).Run(context.Background(), Turn{Prompt: "read me"})
			if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "turn_timeout") {
				t.Fatalf("err = %v, want %v before the turn's timeout", err, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("err = %v, want it to say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "empty copy") {
				t.Fatalf("err = %v speaks of an empty copy", err)
			}
			t.Log(err)
		})
	}
}

// A deadline that strikes while the driver waits for the page to answer
// (its main thread blocked) still says what the turn was waiting for. The
// page hangs once the model has thought for a second, so the turn is
// normally waiting for the reply by then; on a machine so loaded that it
// is still proving the submission, the error must name that instead.
func TestCDPDeadlineSaysWhatTheTurnWaitedFor(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPageWith(t, "Cursor - hung", shape{name: "quick", think: 1, chunks: 1}, 0, url.Values{"hang_ms": {"8000"}})
	gui := cdpTestGUI()
	gui.TurnTimeout = 4 * time.Second
	_, err := newTestCDPWith(t, c.seat(), gui).Run(context.Background(), Turn{Prompt: "hang"})
	waited := (errors.Is(err, ErrNoReply) && strings.Contains(err.Error(), "while waiting for the model to finish")) ||
		(errors.Is(err, ErrSubmitUnknown) && strings.Contains(err.Error(), "while waiting for a sign that the page took the prompt"))
	if !waited || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the prompt had been sent") {
		t.Fatalf("err = %v, want it to name what the turn waited for", err)
	}
	t.Log(err)
}

// A textarea composer stores CRLF as LF: the prompt is taken, and the
// receipt says so. A composer that keeps only part of the prompt is
// emptied and the error says how the two differ.
func TestCDPComposerLineEndsAndTruncation(t *testing.T) {
	b := startCDPBrowser(t)
	s := shape{name: "quick", think: 0.1, chunks: 1}
	c := b.openChatPageWith(t, "Cursor - textarea", s, 0, url.Values{"composer": {"textarea"}})
	var n notes
	prompt := "first line\r\nsecond line\r\nthird"
	reply, err := newTestCDP(t, c.seat()).Run(context.Background(), Turn{Prompt: prompt, OnNote: n.hear})
	lf := "first line\nsecond line\nthird"
	if err != nil || reply != "You wrote:\n"+lf {
		t.Fatalf("%q, %v", reply, err)
	}
	if got := c.prompts(t); len(got) != 1 || got[0] != lf {
		t.Fatalf("the page received %q", got)
	}
	if !strings.Contains(n.all(), "CRLF") {
		t.Fatalf("notes %q do not say the line ends changed", n.all())
	}

	for _, composer := range []string{"textarea", "editable"} {
		t.Run("truncated "+composer, func(t *testing.T) {
			q := url.Values{"max_input": {"12"}}
			if composer == "textarea" {
				q.Set("composer", "textarea")
			}
			short := b.openChatPageWith(t, "Cursor - truncating "+composer, s, 0, q)
			_, err := newTestCDP(t, short.seat()).Run(context.Background(), Turn{Prompt: "a prompt longer than twelve"})
			if !errors.Is(err, ErrNotSubmitted) || !strings.Contains(err.Error(), "first differ at byte 12") ||
				!strings.Contains(err.Error(), "composer was cleared") {
				t.Fatalf("err = %v", err)
			}
			left := short.evalString(t, `(e => e.value !== undefined ? e.value : e.textContent)(document.querySelector("#composer"))`)
			if left != "" || len(short.prompts(t)) != 0 {
				t.Fatalf("the composer holds %q and the page received %q", left, short.prompts(t))
			}
			t.Log(err)
		})
	}
}

// A seat whose page shows nothing while the model works (cdp.busy none)
// ends a turn on its explicit cdp.quiet alone; one whose busy selector
// never shows is taken after gui.max_pause, and its receipt says so.
func TestCDPSeatWithoutBusyElement(t *testing.T) {
	b := startCDPBrowser(t)
	s := shape{name: "no-busy", think: 0.3, chunks: 3, pause: 0.1}
	c := b.openChatPage(t, "Cursor - no busy", s, 0)

	seat := c.seat()
	seat.Busy = NoBusy
	if _, err := NewCDP(seat, cdpTestGUI(), Options{}); !errors.Is(err, ErrNotCalibrated) || !strings.Contains(err.Error(), "cdp.quiet") {
		t.Fatalf("a seat with cdp.busy none and no cdp.quiet: err = %v", err)
	}
	seat.Quiet = time.Second
	var n notes
	reply, err := newTestCDP(t, seat).Run(context.Background(), Turn{Prompt: "no busy", OnNote: n.hear})
	if err != nil || reply != "You wrote:\nno busy" {
		t.Fatalf("%q, %v", reply, err)
	}
	if n.all() != "" {
		t.Fatalf("notes %q for a seat that says it has no busy element", n.all())
	}

	seat = c.seat()
	seat.Busy = "#never-there"
	reply, err = newTestCDP(t, seat).Run(context.Background(), Turn{Prompt: "never busy", OnNote: n.hear})
	if err != nil || reply != "You wrote:\nnever busy" {
		t.Fatalf("%q, %v", reply, err)
	}
	if !strings.Contains(n.all(), "never showed the model busy") || !strings.Contains(n.all(), "#never-there") {
		t.Fatalf("notes %q do not say the busy element never showed", n.all())
	}
}
