//go:build linux && !nogui

package cursor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// bigPrompt is about 20 KB of what prompts contain: Unicode, emoji, tabs,
// CRLF and LF line ends, code fences, trailing spaces.
func bigPrompt() string {
	var b strings.Builder
	for i := 0; b.Len() < 20*1024; i++ {
		fmt.Fprintf(&b, "line %d: héllo 😀 🚀 naïve café\tcol2\tcol3   \r\n", i)
		if i%20 == 0 {
			b.WriteString("```go\nfunc f() {\n\treturn \"x\"\n}\n```\n")
		}
	}
	return b.String()
}

func TestGUIRoundTripIsExact(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-1", x: 10, y: 10})
	g := newTestGUI(t, chat.window(), t.TempDir())
	setUserClipboard(t, "the user's own clipboard ✂")

	prompt := bigPrompt()
	var stages []Stage
	reply, err := g.Run(context.Background(), Turn{Prompt: prompt, OnStage: func(s Stage) error {
		stages = append(stages, s)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := chat.prompts(t)
	if len(got) != 1 || got[0] != prompt {
		t.Fatalf("the window received %d prompts; first differs from the %d-byte prompt", len(got), len(prompt))
	}
	if want := chat.replies(t); len(want) != 1 || reply != want[0] || reply != "You wrote:\n"+prompt {
		t.Fatalf("reply differs from what the window sent (%d bytes)", len(reply))
	}
	if s := stagesString(stages); s != "injected pressed submitted replied" {
		t.Errorf("stages = %s", s)
	}
	assertClipboard(t, "the user's own clipboard ✂")
}

func TestGUINeverTypesIntoADecoy(t *testing.T) {
	for _, si := range standIns {
		t.Run(si.name, func(t *testing.T) { neverTypesIntoADecoy(t, si.start) })
	}
}

func neverTypesIntoADecoy(t *testing.T, start func(testing.TB, chatOptions) *chatWindow) {
	decoy := start(t, chatOptions{title: "Terminal - decoy", x: 440, y: 10, decoy: true})
	// Calibrated for a window that is not open: the decoy has the focus.
	w := configWindow("Cursor - Agent-missing")
	g := newTestGUI(t, w, t.TempDir())
	setUserClipboard(t, "before")
	_, err := g.Run(context.Background(), Turn{Prompt: "rm -rf ~\n"})
	if !errors.Is(err, ErrWindowNotFound) {
		t.Fatalf("err = %v, want ErrWindowNotFound", err)
	}
	keys := func() (n int) {
		for _, e := range decoy.events(t) {
			if e["event"] != "layout" {
				n++
			}
		}
		return n
	}
	if n := keys(); n != 0 {
		t.Fatalf("the decoy received %d keys or pastes: %v", n, decoy.events(t))
	}
	assertClipboard(t, "before")
	// The decoy does notice keys: press one into it on purpose.
	pressInto(t, decoy.layout.Title, "x")
	// A decoy that never logs one proves nothing.
	poll.Until(t, "the decoy to log a key pressed into it", func() bool { return keys() > 0 })
}

// pressInto activates the window with exactly this title and presses key.
func pressInto(t *testing.T, title, key string) {
	t.Helper()
	d, err := openDesktop()
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	found, err := d.windows(regexp.MustCompile("^"+regexp.QuoteMeta(title)+"$"), 0)
	if err != nil || len(found) != 1 {
		t.Fatalf("windows titled %q: %v, %v", title, found, err)
	}
	ctx, cancel := poll.Context(t)
	defer cancel()
	if err := d.activate(ctx, found[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := d.key(mustChord(key)); err != nil {
		t.Fatal(err)
	}
}

func TestGUIRefusesAmbiguousWindows(t *testing.T) {
	a := startChat(t, chatOptions{title: "Cursor - Agent-7 (a)", x: 10, y: 400})
	b := startChat(t, chatOptions{title: "Cursor - Agent-7 (b)", x: 440, y: 400, decoy: true})
	w := a.window()
	w.Title, w.PID = "Agent-7", 0 // matches both
	g := newTestGUI(t, w, t.TempDir())
	if _, err := g.Run(context.Background(), Turn{Prompt: "hello"}); !errors.Is(err, ErrWindowNotConfirmed) {
		t.Fatalf("err = %v, want ErrWindowNotConfirmed", err)
	}
	if p := a.prompts(t); len(p) != 0 {
		t.Errorf("window a received %q", p)
	}
	if ev := b.events(t); len(ev) != 0 {
		t.Errorf("window b received input: %v", ev)
	}
}

func TestGUISubmitIsRetriedOnce(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-2", x: 440, y: 10, ignoreSubmits: 1})
	g := newTestGUI(t, chat.window(), t.TempDir())
	reply, err := g.Run(context.Background(), Turn{Prompt: "first Enter is lost"})
	if err != nil || reply != "You wrote:\nfirst Enter is lost" {
		t.Fatalf("reply %q, err %v", reply, err)
	}
	if p := chat.prompts(t); len(p) != 1 {
		t.Fatalf("window received %d prompts, want exactly 1", len(p))
	}
}

// An app starved of CPU takes the Enter but shows it late, after the
// second press's first period: the turn waits for it instead of calling
// the prompt not sent, and the prompt is sent once.
func TestGUISlowChatShowsTheSubmissionLate(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-2", x: 440, y: 10, submitLag: 3 * time.Second})
	g := newTestGUI(t, chat.window(), t.TempDir())
	reply, err := g.Run(context.Background(), Turn{Prompt: "shown late"})
	if err != nil || reply != "You wrote:\nshown late" {
		t.Fatalf("reply %q, err %v", reply, err)
	}
	if p := chat.prompts(t); len(p) != 1 {
		t.Fatalf("window received %d prompts, want exactly 1", len(p))
	}
}

// A chat starved of CPU takes the Enter at once but draws nothing of it
// (input box, busy indicator, transcript) for longer than both presses'
// waits: the composer's copy, empty, says the prompt was sent, and it is
// not sent again. Where the composer still holds the prompt, the submit
// key is pressed again as before (TestGUISubmitIsRetriedOnce).
func TestGUISubmissionUndrawnIsSeenInTheComposer(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-2", x: 440, y: 10, unseenSubmit: 8 * time.Second, copyLine: true})
	w := chat.window()
	w.Composer = ComposerMonaco
	g, err := NewGUI(w, testGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	reply, err := g.Run(context.Background(), Turn{Prompt: "drawn late"})
	if err != nil || reply != "You wrote:\ndrawn late" {
		t.Fatalf("reply %q, err %v", reply, err)
	}
	if p := chat.prompts(t); len(p) != 1 {
		t.Fatalf("window received %d prompts, want exactly 1", len(p))
	}
}

// Where the input box's copy gives nothing when empty, a chat that draws
// nothing of the Enter it took leaves the driver unsure: the turn fails
// as maybe submitted, never as not submitted, which would have the prompt
// sent again.
func TestGUISubmissionUnprovenIsNotCalledUnsent(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-2", x: 440, y: 10, unseenSubmit: 60 * time.Second})
	g, err := NewGUI(chat.window(), testGUI(), Options{LockDir: t.TempDir(), Log: driverLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	var stages []Stage
	_, err = g.Run(context.Background(), Turn{Prompt: "taken unseen", OnStage: func(s Stage) error {
		stages = append(stages, s)
		return nil
	}})
	if !errors.Is(err, ErrSubmitUnknown) || errors.Is(err, ErrNotSubmitted) {
		t.Fatalf("err = %v, want the submission unknown", err)
	}
	if s := stagesString(stages); s != "injected pressed" {
		t.Errorf("stages = %q, want injected pressed", s)
	}
	if p := chat.prompts(t); len(p) != 1 {
		t.Fatalf("window received %d prompts, want exactly 1", len(p))
	}
}

func TestGUIPastedButNotSubmitted(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-3", x: 870, y: 10, ignoreSubmits: 2})
	g := newTestGUI(t, chat.window(), t.TempDir())
	setUserClipboard(t, "keep me")
	var stages []Stage
	_, err := g.Run(context.Background(), Turn{Prompt: "never sent", OnStage: func(s Stage) error {
		stages = append(stages, s)
		return nil
	}})
	// The input box's own copy still holds the prompt: that is known not
	// sent, though the key was pressed.
	if !errors.Is(err, ErrNotSubmitted) || !strings.Contains(err.Error(), "still holds the prompt") {
		t.Fatalf("err = %v, want ErrNotSubmitted, the input box still holding the prompt", err)
	}
	if s := stagesString(stages); s != "injected pressed" {
		t.Errorf("stages = %q, want injected pressed", s)
	}
	if p := chat.prompts(t); len(p) != 0 {
		t.Errorf("window received %q", p)
	}
	assertClipboard(t, "keep me")
}

func TestGUIWindowClosedMidTurn(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-4", x: 10, y: 400, shape: shape{name: "slow", think: 2, pause: 0.2, chunks: 2}})
	g := newTestGUI(t, chat.window(), t.TempDir())
	setUserClipboard(t, "user text")
	_, err := g.Run(context.Background(), Turn{Prompt: "think long", OnStage: func(s Stage) error {
		if s == StageSubmitted {
			chat.close() // the user closes the window while the model thinks
		}
		return nil
	}})
	if !errors.Is(err, ErrWindowNotFound) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("err = %v, want ErrWindowNotFound saying the window was closed", err)
	}
	assertClipboard(t, "user text")
}

func TestGUIResumeReadsTheReplyWithoutPasting(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-5", x: 440, y: 400})
	g := newTestGUI(t, chat.window(), t.TempDir())
	crash := errors.New("process died")
	_, err := g.Run(context.Background(), Turn{Prompt: "resume me", OnStage: func(s Stage) error {
		if s == StageSubmitted {
			return crash
		}
		return nil
	}})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v, want the simulated crash", err)
	}
	reply, err := g.Run(context.Background(), Turn{Prompt: "resume me", Resume: true})
	if err != nil || reply != "You wrote:\nresume me" {
		t.Fatalf("resumed reply %q, err %v", reply, err)
	}
	if p := chat.prompts(t); len(p) != 1 {
		t.Fatalf("window received %d prompts, want 1: resume must not paste again", len(p))
	}
}

func TestGUINothingCopied(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - Agent-6", x: 870, y: 400})
	w := chat.window()
	w.Copy.X, w.Copy.Y = w.Reply.X+10, w.Reply.Y+10 // calibrated onto the transcript, not the button
	gui := testGUI()
	gui.TurnTimeout = 5 * time.Second
	g, err := NewGUI(w, gui, Options{LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	setUserClipboard(t, "mine")
	_, err = g.Run(context.Background(), Turn{Prompt: "hello"})
	if !errors.Is(err, ErrNoReply) || !errors.Is(err, ErrNothingCopied) {
		t.Fatalf("err = %v, want ErrNoReply naming ErrNothingCopied", err)
	}
	assertClipboard(t, "mine")
}

func TestGUIInputLockTimeout(t *testing.T) {
	needDisplay(t)
	dir := t.TempDir()
	held := NewInputLock(dir, time.Second)
	if err := held.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	gui := testGUI()
	gui.LockWait = 100 * time.Millisecond
	g, err := NewGUI(configWindow("whatever"), gui, Options{LockDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = g.Run(context.Background(), Turn{Prompt: "x"})
	if !errors.Is(err, ErrInputLockTimeout) {
		t.Fatalf("err = %v, want ErrInputLockTimeout", err)
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), held.Path()) {
		t.Errorf("err = %v, want the holder (%s) and the lock %s", err, want, held.Path())
	}
}

// TestGUIResumeNeverReturnsThePreviousReply crashes a turn while the model
// still thinks, after the turn recorded its state, and resumes it: the
// resumed turn must wait for the new reply, although the copy action gives
// the previous one at once. Without a busy indicator, the model thinks
// silently for longer than gui.max_pause, so stillness alone would copy
// the previous reply.
func TestGUIResumeNeverReturnsThePreviousReply(t *testing.T) {
	for _, si := range standIns {
		for _, busy := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/busy=%v", si.name, busy), func(t *testing.T) {
				resumeNeverReturnsThePreviousReply(t, si.start, busy)
			})
		}
	}
}

func resumeNeverReturnsThePreviousReply(t *testing.T, start func(testing.TB, chatOptions) *chatWindow, busy bool) {
	s := shape{name: "slow", noEcho: true, think: 2, chunks: 2, pause: 0.1}
	if !busy {
		s.think = testGUI().MaxPause.Seconds() + 1.5
	}
	chat := start(t, chatOptions{title: fmt.Sprintf("Cursor - resume %v", busy), x: 870, y: 10, shape: s})
	w := chat.window()
	if !busy {
		w.Busy = nil
	}
	g := newTestGUI(t, w, t.TempDir())
	if _, err := g.Run(context.Background(), Turn{Prompt: "first"}); err != nil {
		t.Fatal(err)
	}
	// The process dies once the prompt is sent, its resume state on
	// record.
	crash := errors.New("process died")
	var state string
	_, err := g.Run(context.Background(), Turn{Prompt: "second", OnResumeState: func(s string) error {
		state = s
		return nil
	}, OnStage: func(s Stage) error {
		if s == StageSubmitted {
			return crash
		}
		return nil
	}})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v, want the simulated crash", err)
	}
	reply, err := g.Run(context.Background(), Turn{Prompt: "second", Resume: true, ResumeState: state})
	if err != nil || reply != "You wrote:\nsecond" {
		t.Fatalf("resumed reply %q, err %v; want the second turn's reply", reply, err)
	}
	if p := chat.prompts(t); len(p) != 2 {
		t.Fatalf("window received %d prompts, want 2: resume must not paste again", len(p))
	}
}
