package cursor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
)

// Composers come in three kinds, told apart in the page: a textarea or
// input ("field"), a contenteditable element ("editable"), and a Monaco
// editor, whose input is a hidden textarea holding only a window of the
// text around the cursor (about 500 characters) ("monaco").
const composerMonaco = "monaco"

// insert puts the prompt into the composer as text input, never by
// setting a value: a paste event the page handles (editors read its
// data), else CDP's Input.insertText, as an input method would. It then
// proves the composer holds it: exactly, or with its line ends as the
// composer stores them (CRLF and CR as LF), which is noted. Anything else
// is cleared from the composer, and the error says what it held.
//
// A Monaco editor's textarea cannot prove a long prompt, so the proof
// there is the editor's own copy of all its text (select all, then a copy
// event on its textarea, which Monaco answers with the text of its
// model): the whole prompt as the editor holds it, byte for byte. Its one
// limit: it proves what the editor holds, not what the app will make of
// it on sending (see vscodeRefusal).
func (s *cdpTurn) insert(ctx context.Context) error {
	s.wait(ErrNotSubmitted, "the prompt to be put into the composer (cdp.composer %q)", s.c.cfg.Composer)
	if why := s.c.refusal(s.t.Prompt); why != "" {
		return fmt.Errorf("%w: %s; nothing was sent", ErrNotSubmitted, why)
	}
	a := s.args()
	var k struct {
		Found bool   `json:"found"`
		Kind  string `json:"kind"`
	}
	if err := s.p.eval(ctx, jsComposerKind, a, &k); err != nil {
		return err
	}
	if !k.Found {
		return fmt.Errorf("%w: cdp.composer %q matches nothing; nothing was sent", ErrNotCalibrated, s.c.cfg.Composer)
	}
	s.kind = k.Kind
	if k.Kind == composerMonaco {
		if err := s.p.pressKey(ctx, selectAll); err != nil { // the paste replaces what a person left there
			return err
		}
	}
	a["kind"], a["text"] = k.Kind, s.t.Prompt
	var pasted struct {
		Handled bool `json:"handled"`
	}
	if err := s.p.eval(ctx, jsPaste, a, &pasted); err != nil {
		return err
	}
	if !pasted.Handled {
		if err := s.p.call(ctx, "Input.insertText", map[string]any{"text": s.t.Prompt}, nil); err != nil {
			return err
		}
	}
	held, err := s.settledText(ctx)
	if err != nil {
		return err
	}
	switch held {
	case s.t.Prompt:
	case fieldLineEnds(s.t.Prompt):
		s.t.note("the composer stored the prompt's CRLF (or CR) line ends as LF, so the chat received them as LF")
		s.c.logf("the composer stored the prompt's CRLF line ends as LF")
	default:
		after := "the composer was cleared"
		if err := s.clear(ctx); err != nil {
			after = "the composer could not be cleared (" + err.Error() + "): empty it before the next turn"
		}
		return fmt.Errorf("%w: the composer (%s) took %s; %s and nothing was sent", ErrNotSubmitted, k.Kind, composerDiff(s.t.Prompt, held), after)
	}
	s.stored = held
	s.c.logf("prompt inserted (%d bytes, %s composer)", len(s.t.Prompt), k.Kind)
	return nil
}

// settledText waits, up to gui.submit, for the composer to hold the
// prompt: an editor may apply a paste later than the event (VS Code's
// chat runs its paste handlers first). It returns what the composer
// holds at the end.
func (s *cdpTurn) settledText(ctx context.Context) (string, error) {
	deadline := time.Now().Add(s.c.submitWait)
	for {
		held, err := s.composerText(ctx)
		if err != nil || held == s.t.Prompt || held == fieldLineEnds(s.t.Prompt) || time.Now().After(deadline) {
			return held, err
		}
		if err := pause(ctx, 4*cdpPoll); err != nil {
			return held, err
		}
	}
}

// composerText is all the text the composer holds; for Monaco, the
// editor's own copy of it, after which the cursor goes back to the end
// (so the textarea's window is the prompt's tail again).
func (s *cdpTurn) composerText(ctx context.Context) (string, error) {
	var r struct {
		Found  bool   `json:"found"`
		Copied bool   `json:"copied"`
		Text   string `json:"text"`
	}
	if s.kind != composerMonaco {
		if err := s.p.eval(ctx, jsComposerText, s.args(), &r); err != nil {
			return "", err
		}
		return r.Text, nil
	}
	if err := s.p.pressKey(ctx, selectAll); err != nil {
		return "", err
	}
	if err := s.p.eval(ctx, jsEditorCopy, s.args(), &r); err != nil {
		return "", err
	}
	if err := s.p.pressKey(ctx, toEnd); err != nil {
		return "", err
	}
	if !r.Copied {
		return "", fmt.Errorf("%w: the Monaco editor of cdp.composer %q did not answer a copy of its text, so the prompt in it cannot be proven; nothing was sent", ErrNotSubmitted, s.c.cfg.Composer)
	}
	return r.Text, nil
}

// clear empties the composer after a prompt that did not go in exactly.
func (s *cdpTurn) clear(ctx context.Context) error {
	if s.kind == composerMonaco {
		for _, k := range []pageKey{selectAll, deleteKey} {
			if err := s.p.pressKey(ctx, k); err != nil {
				return err
			}
		}
	} else {
		var ok bool
		if err := s.p.eval(ctx, jsClear, s.args(), &ok); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("cdp.composer %q went away", s.c.cfg.Composer)
		}
	}
	held, err := s.composerText(ctx)
	if err != nil {
		return err
	}
	if strings.TrimSpace(held) != "" { // an emptied contenteditable may keep a line break
		return fmt.Errorf("it still holds %d bytes", len(held))
	}
	return nil
}

// holdsPrompt says whether text, the composer's text as a look reads it,
// is still the prompt inserted: for Monaco the textarea's window, which
// holds the prompt's tail (its first character may be half of a UTF-16
// pair, which arrives as U+FFFD).
func (s *cdpTurn) holdsPrompt(text string) bool {
	if s.kind != composerMonaco {
		return text == s.stored
	}
	tail := strings.TrimPrefix(text, "\uFFFD")
	return tail != "" && strings.HasSuffix(s.stored, tail)
}

// refusal says why the seat's app would not pass prompt on as written,
// or "". VS Code's chat drops a prompt's leading whitespace, and takes a
// leading / or @ as a command or a participant to route the prompt to.
func (c *CDP) refusal(prompt string) string {
	if c.cfg.Profile != config.ProfileVSCode {
		return ""
	}
	switch {
	case prompt != strings.TrimLeft(prompt, " \t\r\n"):
		return "the prompt starts with whitespace, which VS Code's chat drops before passing it on"
	case strings.HasPrefix(prompt, "/"):
		return "the prompt starts with /, which VS Code's chat takes as a slash command"
	case strings.HasPrefix(prompt, "@"):
		return "the prompt starts with @, which VS Code's chat takes as the name of a participant to send it to"
	}
	return ""
}

// Keys the driver presses in a Monaco composer. Select all is Cmd+A on
// macOS, where the app runs beside agentctl (its DevTools port is on
// loopback).
var (
	selectAll = pageKey{key: "a", code: "KeyA", vk: 65, mod: cdpPrimaryModifier()}
	toEnd     = pageKey{key: "End", code: "End", vk: 35, mod: cdpPrimaryModifier()}
	deleteKey = pageKey{key: "Delete", code: "Delete", vk: 46}
)

func cdpPrimaryModifier() int {
	if primaryModifier() == "cmd" {
		return 4 // Meta
	}
	return 2 // Ctrl
}

// jsComposerKind focuses the composer and says what kind it is.
var jsComposerKind = jsFunc(`
const c = document.querySelector(a.composer);
if (!c) return {found: false};
c.focus();
const kind = c.tagName === "TEXTAREA" && c.closest(".monaco-editor") ? "monaco" : isField(c) ? "field" : "editable";
return {found: true, kind};`)

// jsPaste selects what the composer holds (Monaco: done by a key before)
// and dispatches a paste of a.text to it; handled says the page took the
// paste itself. The desktop's clipboard is never involved.
var jsPaste = jsFunc(`
const c = document.querySelector(a.composer);
if (!c) return {handled: false};
c.focus();
if (a.kind === "field") c.select();
if (a.kind === "editable") {
  const sel = getSelection(), range = document.createRange();
  range.selectNodeContents(c);
  sel.removeAllRanges(); sel.addRange(range);
}
const dt = new DataTransfer();
dt.setData("text/plain", a.text);
const ev = new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true});
return {handled: !c.dispatchEvent(ev)};`)

// jsComposerText is the text a field or contenteditable composer holds.
var jsComposerText = jsFunc(`
const c = document.querySelector(a.composer);
return c ? {found: true, text: fieldText(c)} : {found: false, text: ""};`)

// jsEditorCopy asks the Monaco editor for a copy of its selection (all of
// it, selected by a key before) through a copy event of our own: the
// desktop's clipboard is never written.
var jsEditorCopy = jsFunc(`
const c = document.querySelector(a.composer);
if (!c) return {found: false};
c.focus();
const dt = new DataTransfer();
const ev = new ClipboardEvent("copy", {clipboardData: dt, bubbles: true, cancelable: true});
const copied = !c.dispatchEvent(ev);
return {found: true, copied, text: dt.getData("text/plain")};`)

// jsClear empties a field or contenteditable composer.
var jsClear = jsFunc(`
const c = document.querySelector(a.composer);
if (!c) return false;
c.focus();
if (isField(c)) c.select();
else { const sel = getSelection(), range = document.createRange(); range.selectNodeContents(c); sel.removeAllRanges(); sel.addRange(range); }
document.execCommand("delete");
return true;`)
