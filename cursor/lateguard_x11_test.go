//go:build linux && !nogui

package cursor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
)

// A copy that lands after the turn stopped waiting for it, and holds what
// the chat said, is the chat's: the user's text is put back over it, and
// the next turn takes the guard over. A copy the chat did not make, or
// made while another turn holds the desktop, stays.
func TestGUILateCopyIsPutBackAndThePersonsOwnStays(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "copy-gate")
	chat := startChat(t, chatOptions{title: "Cursor - late copy", copyGate: gate})
	log := syncbuf.OnFailure(t, "the driver's log")
	lockDir := t.TempDir()
	g, err := NewGUI(chat.window(), testGUI(), Options{LockDir: lockDir, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	ctx := context.Background()
	setUserClipboard(t, "the user's own clipboard")
	if _, err := g.Run(ctx, Turn{Prompt: "the chat says this"}); err != nil {
		t.Fatal(err)
	}

	until := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("seen: %s", what)
	}
	const putBack, leftAlone = "the user's text is put back", "not the chat's late one took the clipboard"
	lateCopy := func() (land func(), landed func() bool) {
		t.Helper()
		land, landed = beginLateCopy(t, g, chat, gate)
		assertClipboard(t, "the user's own clipboard")
		return land, landed
	}

	land, landed := lateCopy()
	land()
	until("the chat's late copy", landed)
	until("the guard's put back", func() bool { return log.Count(putBack) == 1 })
	assertClipboard(t, "the user's own clipboard")

	// A turn that begins while the guard holds the text guards it again
	// at its end.
	s, err := g.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !s.lateCopy {
		t.Error("a session begun during the guard does not take it over")
	}
	var endErr error
	if s.end(ctx, &endErr); endErr != nil || g.late == nil {
		t.Fatalf("the session's end: %v; guard running: %v", endErr, g.late != nil)
	}
	// The person copies something of their own meanwhile.
	xclipCopies("the person's new text")
	until("the person's copy", func() bool { return xclip(t, "", "-o") == "the person's new text" })
	until("the guard to end", func() bool { return log.Count(leftAlone) == 1 })
	assertClipboard(t, "the person's new text")

	// The chat's copy while another agent's turn holds the desktop is that
	// turn's: the guard leaves it.
	setUserClipboard(t, "the user's own clipboard")
	land, landed = lateCopy()
	other := NewInputLock(lockDir, time.Second)
	if err := other.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	land()
	until("the chat's late copy", landed)
	until("the guard to end", func() bool { return log.Count(leftAlone) == 2 })
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if got := xclip(t, "", "-o"); got != "You wrote:\nthe chat says this" {
		t.Errorf("the clipboard holds %q, want the chat's copy made during another turn", got)
	}
	if log.Count(putBack) != 1 {
		t.Errorf("the user's text was put back %d times, want once", log.Count(putBack))
	}
}

// The late copy of a reply that no copy of the turn had given yet is not
// known as the chat's when it lands, so the guard ends and leaves it. Once
// a copy of the chat's gives the same text, it is known, and the person's
// text goes back at the end of that copy's session.
func TestGUILateCopyOfAReplyNotYetCopiedIsPutBack(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "copy-gate")
	chat := startChat(t, chatOptions{title: "Cursor - late reply", copyGate: gate})
	log := syncbuf.OnFailure(t, "the driver's log")
	g, err := NewGUI(chat.window(), testGUI(), Options{LockDir: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	ctx := context.Background()
	if _, err := g.Run(ctx, Turn{Prompt: "the chat says this"}); err != nil {
		t.Fatal(err)
	}
	setUserClipboard(t, "the user's own clipboard")
	g.said = chatSaid{} // as if the reply had not been copied yet

	land, landed := beginLateCopy(t, g, chat, gate)
	land()
	for !landed() {
		time.Sleep(10 * time.Millisecond)
	}
	for log.Count("not the chat's late one took the clipboard") == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	assertClipboard(t, "You wrote:\nthe chat says this")

	// The next session's copy gives the same text: the person's goes back.
	s, err := g.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.copyBy(ctx, nil, "copy"); err != nil || got != "You wrote:\nthe chat says this" {
		t.Fatalf("the copy gave %q, %v", got, err)
	}
	var endErr error
	if s.end(ctx, &endErr); endErr != nil {
		t.Fatal(endErr)
	}
	assertClipboard(t, "the user's own clipboard")
}

// beginLateCopy makes a copy that gives nothing within copyWait: with the
// chat's copy held behind gate, a session copies and ends, which starts
// the late-copy guard. land lets the chat make the copy, and landed
// reports it made.
func beginLateCopy(t *testing.T, g *GUI, chat *chatWindow, gate string) (land func(), landed func() bool) {
	t.Helper()
	ctx := context.Background()
	copies := func() int { return len(texts(chat.events(t), "copied")) }
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before := copies()
	s, err := g.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.copyBy(ctx, nil, "copy"); !isNothingCopied(err) {
		t.Fatalf("a copy that comes late gave %v, want nothing copied", err)
	}
	var endErr error
	if s.end(ctx, &endErr); endErr != nil || g.late == nil {
		t.Fatalf("the session's end: %v; guard running: %v", endErr, g.late != nil)
	}
	land = func() {
		if err := os.Remove(gate); err != nil {
			t.Fatal(err)
		}
	}
	return land, func() bool { return copies() == before+1 }
}

// takenClipboard is the desktop's clipboard, saying that the last write
// was taken from it by a copy of text: the chat's copy of the reply
// before, landing late between the prompt's write and its paste, or (with
// the prompt itself) a clipboard manager keeping it.
type takenClipboard struct {
	clipboardBackend
	text string
}

func (c takenClipboard) replaced() (bool, bool) { return true, true }

func (c takenClipboard) read(context.Context) (string, error) { return c.text, nil }

// TestGUIPasteOfATakenClipboardIsNotSubmitted: a copy of the chat's that
// lands late takes the clipboard from the prompt, and the paste may then
// have put that copy in the input box. Such a paste is never submitted:
// the turn fails as not submitted, and the chat receives nothing.
func TestGUIPasteOfATakenClipboardIsNotSubmitted(t *testing.T) {
	chat := startChat(t, chatOptions{title: "Cursor - taken clipboard"})
	g := newTestGUI(t, chat.window(), t.TempDir())
	real := systemClipboard
	defer func() { systemClipboard = real }()
	systemClipboard = func() clipboardBackend { return takenClipboard{real(), "the reply before"} }
	_, err := g.Run(context.Background(), Turn{Prompt: "a prompt that must not go"})
	if !errors.Is(err, ErrNotSubmitted) || !strings.Contains(err.Error(), "took the clipboard from the prompt") {
		t.Fatalf("Run = %v; want not submitted, the clipboard taken", err)
	}
	if got := chat.prompts(t); len(got) != 0 {
		t.Fatalf("the chat received %q", got)
	}

	// A clipboard manager that keeps the prompt itself did no harm. In a
	// chat and a driver of their own: the first chat's copy from before
	// its prompt, landing late on a loaded machine, took the clipboard from
	// the next turn's prompt as it was written, which rightly failed that
	// turn.
	g.Close()
	chat.close()
	kept := startChat(t, chatOptions{title: "Cursor - clipboard manager"})
	g = newTestGUI(t, kept.window(), t.TempDir())
	const prompt = "a prompt a clipboard manager keeps"
	systemClipboard = func() clipboardBackend { return takenClipboard{real(), prompt} }
	if _, err := g.Run(context.Background(), Turn{Prompt: prompt}); err != nil {
		t.Fatalf("Run with the prompt kept by a clipboard manager = %v", err)
	}
	if got := kept.prompts(t); len(got) != 1 || got[0] != prompt {
		t.Fatalf("the chat received %q", got)
	}
}
