//go:build linux

package cursor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// cdpRoundTrips runs two turns on one page (the second must not take the
// first's reply for its own) and checks each reply is exactly what the
// page answered, and that the page received each prompt exactly, once.
func cdpRoundTrips(t *testing.T, d Driver, c *chatPageTab, s shape) {
	t.Helper()
	for turn := 1; turn <= 2; turn++ {
		prompt := fmt.Sprintf("turn %d, %s", turn, shapePrompt(s))
		start := time.Now()
		reply, err := d.Run(context.Background(), Turn{Prompt: prompt})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		got := c.prompts(t)
		if len(got) != turn || got[turn-1] != prompt {
			t.Fatalf("turn %d: the page received %q", turn, got)
		}
		answered := c.replies(t)
		if len(answered) != turn {
			t.Fatalf("turn %d: the driver returned before the page finished its reply (%d of %d replies finished)", turn, len(answered), turn)
		}
		if reply != answered[turn-1] {
			t.Fatalf("turn %d: reply of %d bytes differs from the page's %d-byte reply:\n%q\nwant\n%q", turn, len(reply), len(answered[turn-1]), clip(reply), clip(answered[turn-1]))
		}
		t.Logf("turn %d: %d-byte reply in %s", turn, len(reply), time.Since(start).Round(time.Millisecond))
	}
}

func TestCDPShapes(t *testing.T) {
	b := startCDPBrowser(t)
	for _, s := range shapes {
		for _, way := range []string{"busy", "stillness", "busy-text"} {
			if way == "stillness" && (s.name == "long-think" || s.name == "50KB") {
				continue // stillness alone adds nothing for these beyond long-pause
			}
			name := s.name + "/" + way
			t.Run(name, func(t *testing.T) {
				t.Parallel() // no desktop input lock: seats work at once
				c := b.openChatPage(t, "Cursor - "+name, s, 0)
				seat := c.seat()
				switch way {
				case "stillness":
					seat.Busy = "#never-there"
				case "busy-text": // the reply's own text, its code block written back as a fence
					seat.Copy, seat.Read = "", ReadRendered
				}
				cdpRoundTrips(t, newTestCDP(t, seat), c, s)
			})
		}
	}
}

func TestCDPPromptOf50KBAndTheReplyTextWithoutCopyButton(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - big", shape{name: "big", think: 0.1, chunks: 3, pause: 0.05}, 0)
	seat := c.seat()
	seat.Copy, seat.Read = "", ReadRendered // the reply element's own text: exact for text without Markdown
	var sb strings.Builder
	for i := 0; sb.Len() < 50*1024; i++ {
		fmt.Fprintf(&sb, "line %d: ünïcode 😀\tand a tab   \n", i)
	}
	prompt := sb.String()
	var heard []string
	reply, err := newTestCDP(t, seat).Run(context.Background(), Turn{Prompt: prompt, OnNote: func(n string) { heard = append(heard, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 || !strings.Contains(heard[0], "read from the page's rendering") {
		t.Fatalf("notes %q, want one saying the reply was read from the rendering", heard)
	}
	if got := c.prompts(t); len(got) != 1 || got[0] != prompt {
		t.Fatalf("the page received %d prompts, the first of %d bytes; want one of %d", len(got), len(got[0]), len(prompt))
	}
	if want := "You wrote:\n" + prompt; reply != want {
		t.Fatalf("reply of %d bytes, want %d:\n%q", len(reply), len(want), clip(reply))
	}
}

func TestCDPThreeAgentsAtOnceMisrouteNothing(t *testing.T) {
	b := startCDPBrowser(t)
	s := shape{name: "agents", think: 0.4, chunks: 3, pause: 0.1}
	agents := []string{"Agent-1", "Agent-2", "Agent-3"}
	pages := map[string]*chatPageTab{}
	for _, a := range agents {
		pages[a] = b.openChatPage(t, a+" - Cursor", s, 0)
	}
	const turns = 4
	var wg sync.WaitGroup
	errs := make(chan error, len(agents)*turns)
	for _, a := range agents {
		seat := pages[a].seat()
		seat.Target = a + ".*Cursor"
		seat.Submit = "#send" // clicked, where the shapes press Enter
		d := newTestCDP(t, seat)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= turns; i++ {
				prompt := fmt.Sprintf("for %s, turn %d", a, i)
				reply, err := d.Run(context.Background(), Turn{Prompt: prompt})
				if err == nil && reply != "You wrote:\n"+prompt {
					err = fmt.Errorf("%s turn %d: reply %q", a, i, reply)
				}
				if err != nil {
					errs <- fmt.Errorf("%s turn %d: %w", a, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, a := range agents {
		got := pages[a].prompts(t)
		if len(got) != turns {
			t.Errorf("%s's page received %d prompts, want %d: %q", a, len(got), turns, got)
		}
		for i, p := range got {
			if want := fmt.Sprintf("for %s, turn %d", a, i+1); p != want {
				t.Errorf("%s's page received %q as prompt %d, want %q", a, p, i+1, want)
			}
		}
	}
	// The seats worked at the same time: some page received a prompt
	// while another was still answering one.
	type span struct{ from, to float64 }
	var spans [][]span
	for _, a := range agents {
		ev := recordedEvents(t, pages[a].log)
		var ss []span
		for i, e := range ev {
			if e["event"] == "prompt" && i+1 < len(ev) {
				ss = append(ss, span{e["at"].(float64), ev[i+1]["at"].(float64)})
			}
		}
		spans = append(spans, ss)
	}
	overlap := false
	for i := range spans {
		for j := range spans {
			for _, x := range spans[i] {
				for _, y := range spans[j] {
					overlap = overlap || (i != j && x.from < y.to && y.from < x.to)
				}
			}
		}
	}
	if !overlap {
		t.Error("no two seats were ever answering at the same time: turns were serialised")
	}
}

func TestCDPTargetVanishingMidTurnFailsAtOnce(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - vanishing", shape{name: "slow", think: 30, chunks: 1}, 0)
	d := newTestCDP(t, c.seat())
	done := make(chan error, 1)
	submitted := make(chan struct{})
	var stages []Stage
	go func() {
		_, err := d.Run(context.Background(), Turn{Prompt: "hello", OnStage: func(s Stage) error {
			stages = append(stages, s)
			if s == StageSubmitted {
				close(submitted)
			}
			return nil
		}})
		done <- err
	}()
	select {
	case <-submitted:
	case err := <-done:
		t.Fatalf("the turn ended before its submission was proven: %v", err)
	}
	c.closePage(t)
	select {
	case err := <-done:
		if !errors.Is(err, ErrWindowNotFound) || !strings.Contains(err.Error(), "after the prompt was sent") {
			t.Fatalf("err = %v, want the page closed after the prompt was sent", err)
		}
		if stagesString(stages) != "injected pressed submitted" {
			t.Fatalf("stages %v, want injected, pressed and submitted recorded before the page went", stages)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the turn went on waiting for a page that is gone")
	}
}

func TestCDPSelectorsThatMatchNothingSendNothing(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - selectors", shape{name: "quick", think: 0.1, chunks: 1}, 0)
	other := b.openChatPage(t, "Cursor - selectors too", shape{name: "quick", think: 0.1, chunks: 1}, 0)
	for _, tc := range []struct {
		name string
		edit func(*seatEdit)
		want error
		says string
	}{
		{"composer", func(s *seatEdit) { s.Composer = "#no-such-composer" }, ErrNotCalibrated, "cdp.composer"},
		{"invalid css", func(s *seatEdit) { s.Composer = "##" }, ErrNotCalibrated, "not a valid CSS selector"},
		{"submit", func(s *seatEdit) { s.Submit = "#no-such-button" }, ErrNotCalibrated, "cdp.submit"},
		{"no page", func(s *seatEdit) { s.Target = "^Agent-9$" }, ErrWindowNotFound, "Cursor - selectors"},
		{"two pages", func(s *seatEdit) { s.Target = "selectors" }, ErrWindowNotConfirmed, "exactly one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seat := c.seat()
			tc.edit(&seat)
			_, err := newTestCDP(t, seat).Run(context.Background(), Turn{Prompt: "must not be sent"})
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, tc.says)
			}
			t.Logf("%v", err)
		})
	}
	for _, p := range []*chatPageTab{c, other} {
		if got := p.prompts(t); len(got) != 0 {
			t.Fatalf("page %q received %q", p.title, got)
		}
	}
}

type seatEdit = CDPSettings

func TestCDPPageThatReloads(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - reloading", shape{name: "slow", think: 2, chunks: 1}, 0)
	d := newTestCDP(t, c.seat())
	// Mid-turn: the reply the page was working on is gone with it.
	done := make(chan error, 1)
	go func() {
		_, err := d.Run(context.Background(), Turn{Prompt: "first"})
		done <- err
	}()
	c.awaitPrompts(t, 1)
	c.script(t, "location.reload()")
	if err := <-done; !errors.Is(err, ErrReplyLost) {
		t.Fatalf("err = %v, want the reply lost to the reload", err)
	}
	// Between turns: the next turn works on the fresh page, once it has
	// loaded. The browser's list of pages can show the title before the
	// new document has one, and a turn refuses a page without its title.
	c.await(t, func(p PageTarget) bool { return p.ID == c.id && p.Title == c.title })
	c.awaitLoaded(t)
	reply, err := d.Run(context.Background(), Turn{Prompt: "second"})
	if err != nil || reply != "You wrote:\nsecond" {
		t.Fatalf("after a reload: %q, %v", reply, err)
	}
}

// promptThenCrash takes a turn on the page, then sends "resumed prompt" and
// dies, as a runner killed right after it recorded the submission; it
// returns the turn's resume state.
func promptThenCrash(t *testing.T, c *chatPageTab) (state string) {
	t.Helper()
	d := newTestCDP(t, c.seat())
	if _, err := d.Run(context.Background(), Turn{Prompt: "before"}); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("killed")
	_, err := d.Run(context.Background(), Turn{Prompt: "resumed prompt",
		OnResumeState: func(s string) error { state = s; return nil },
		OnStage: func(s Stage) error {
			if s == StageSubmitted {
				return crash
			}
			return nil
		}})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v", err)
	}
	return state
}

func TestCDPResumedTurnNeverSendsAgain(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - resumed", shape{name: "classic", think: 1, chunks: 3, pause: 0.2}, 0)
	state := promptThenCrash(t, c)
	reply, err := newTestCDP(t, c.seat()).Run(context.Background(), Turn{Prompt: "resumed prompt", Resume: true, ResumeState: state})
	if err != nil || reply != "You wrote:\nresumed prompt" {
		t.Fatalf("resumed: %q, %v", reply, err)
	}
	if got := c.prompts(t); len(got) != 2 {
		t.Fatalf("the page received %q", got)
	}
}

// A turn resumed on a page reloaded since its prompt was sent cannot tell
// the reply from those before it, whose marks went with the reload: its
// reply is lost, said at once. It used to take the last reply shown, or
// wait out the turn for one.
func TestCDPResumeOnAReloadedPageLosesTheReply(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - reloaded before the resume", shape{name: "classic", think: 1, chunks: 3, pause: 0.2}, 0)
	state := promptThenCrash(t, c)
	c.awaitPrompts(t, 2)
	c.reload(t)
	// A bound for the old way, which waited for a reply that never came.
	ctx, cancel := poll.Context(t)
	defer cancel()
	// Twice: the first resume's look at the page leaves it watched, not
	// marked.
	for range 2 {
		reply, err := newTestCDP(t, c.seat()).Run(ctx, Turn{Prompt: "resumed prompt", Resume: true, ResumeState: state})
		if !errors.Is(err, ErrReplyLost) || !strings.Contains(err.Error(), "reloaded") {
			t.Fatalf("resumed on a reloaded page: %q, %v; want the reply lost to the reload", reply, err)
		}
	}
	if got := c.prompts(t); len(got) != 2 {
		t.Fatalf("the page received %q", got)
	}
}

// slowPageTurn takes one turn with prompt on a stand-in page opened with
// extra (its Enter handling: accept_ms, accept_busy), ignoring its first
// ignoreSubmits submissions, at gui.submit submit, and requires the
// page's echo of the prompt as the reply.
func slowPageTurn(t *testing.T, title string, ignoreSubmits int, extra url.Values, submit time.Duration, prompt string) *chatPageTab {
	t.Helper()
	c := startCDPBrowser(t).openChatPageWith(t, title, shape{name: "quick", think: 0.1, chunks: 1}, ignoreSubmits, extra)
	gui := cdpTestGUI()
	gui.Submit = submit
	reply, err := newTestCDPWith(t, c.seat(), gui).Run(context.Background(), Turn{Prompt: prompt})
	if err != nil || reply != "You wrote:\n"+prompt {
		t.Fatalf("%q, %v", reply, err)
	}
	return c
}

// A page that takes the Enter at once but shows the prompt sent only after
// gui.submit (a loaded VS Code) gets no second Enter: it would send the
// prompt again.
func TestCDPSlowPageThatTookTheEnterGetsNoSecond(t *testing.T) {
	c := slowPageTurn(t, "Cursor - slow to show", 0, url.Values{"accept_ms": {"1200"}}, 300*time.Millisecond, "once only")
	if got := c.prompts(t); len(got) != 1 {
		t.Fatalf("the page received %q, want the prompt once", got)
	}
}

// Nor does one that is still at work on the Enter (its timers run late)
// however long it takes to show the prompt sent: here past the five
// gui.submit periods after which an idle page gets a second Enter.
func TestCDPPageAtWorkOnTheEnterGetsNoSecond(t *testing.T) {
	c := slowPageTurn(t, "Cursor - at work", 0, url.Values{"accept_ms": {"3000"}, "accept_busy": {"1"}}, 300*time.Millisecond, "once only")
	// A second Enter would send the prompt again 3 s after it.
	if got := texts(recordedEvents(t, c.log), "enter"); len(got) != 1 {
		t.Fatalf("the page took %d Enters, want one", len(got))
	}
}

// A page at work for longer than thirty gui.submit periods after an Enter
// it took gets the second one all the same, while still at work: here it
// had dropped the first.
func TestCDPPageAtWorkTooLongGetsASecondEnter(t *testing.T) {
	c := slowPageTurn(t, "Cursor - at work, key lost", 1, url.Values{"accept_ms": {"8000"}, "accept_busy": {"1"}}, 100*time.Millisecond, "sent at last")
	var at []float64
	for _, e := range recordedEvents(t, c.log) {
		if e["event"] == "enter" {
			at = append(at, e["at"].(float64))
		}
	}
	// The cap is 3 s; the page is at work for 8 s after each Enter.
	if len(at) != 2 || at[1]-at[0] > 6 {
		t.Fatalf("the page took Enters at %v s, want two, the second while it was at work on the first", at)
	}
	if got := c.prompts(t); len(got) != 1 {
		t.Fatalf("the page received %q, want the prompt once", got)
	}
}

func TestCDPLostSubmitIsSentOnceMore(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPage(t, "Cursor - lost submit", shape{name: "quick", think: 0.1, chunks: 1}, 1)
	reply, err := newTestCDP(t, c.seat()).Run(context.Background(), Turn{Prompt: "once"})
	if err != nil || reply != "You wrote:\nonce" {
		t.Fatalf("%q, %v", reply, err)
	}
	// A page deaf to both Enters still holds the prompt: that is known
	// not sent, though the key was pressed.
	deaf := b.openChatPage(t, "Cursor - deaf", shape{name: "quick", think: 0.1, chunks: 1}, 2)
	var stages []Stage
	_, err = newTestCDP(t, deaf.seat()).Run(context.Background(), Turn{Prompt: "never", OnStage: func(s Stage) error {
		stages = append(stages, s)
		return nil
	}})
	if !errors.Is(err, ErrNotSubmitted) || !strings.Contains(err.Error(), "still holds the prompt") {
		t.Fatalf("err = %v, want not submitted, the composer still holding the prompt", err)
	}
	if s := stagesString(stages); s != "injected pressed" {
		t.Errorf("stages = %q, want injected pressed", s)
	}
	if got := append(c.prompts(t), deaf.prompts(t)...); len(got) != 1 {
		t.Fatalf("the pages received %q, want the one prompt once", got)
	}
}

// A page that takes the prompt and shows nothing of it leaves the driver
// unsure: the turn fails as maybe submitted, never as not submitted (which
// would have the prompt sent again), and the Enter is not pressed twice.
func TestCDPPromptTakenUnseenIsNotCalledUnsent(t *testing.T) {
	b := startCDPBrowser(t)
	c := b.openChatPageWith(t, "Cursor - swallows", shape{name: "quick", think: 0.1, chunks: 1}, 0, url.Values{"swallow": {"1"}})
	var stages []Stage
	_, err := newTestCDP(t, c.seat()).Run(context.Background(), Turn{Prompt: "taken unseen", OnStage: func(s Stage) error {
		stages = append(stages, s)
		return nil
	}})
	if !errors.Is(err, ErrSubmitUnknown) || errors.Is(err, ErrNotSubmitted) {
		t.Fatalf("err = %v, want the submission unknown", err)
	}
	if s := stagesString(stages); s != "injected pressed" {
		t.Errorf("stages = %q, want injected pressed", s)
	}
	if got := c.prompts(t); len(got) != 1 {
		t.Fatalf("the page received %q, want the prompt once", got)
	}
}
