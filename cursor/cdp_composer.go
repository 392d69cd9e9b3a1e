package cursor

import (
	"context"
	"fmt"
	"strings"
	"time"
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
// event on its textarea, which Monaco answers with the text of its model
// and says whether the selection was empty): the whole prompt as the
// editor holds it, byte for byte. Its one limit: it proves what the editor
// holds, not what the app will make of it on sending (see vscodeRefusal).
// The editor's keys (select all, go to the end) are sent as page events,
// which cost nothing; an editor seen ignoring them gets them as input
// from then on (CDP.inputKeys), and the prompt is put in again.
func (s *cdpTurn) insert(ctx context.Context) error {
	s.wait(ErrNotSubmitted, "the prompt to be put into the composer (cdp.composer %q)", s.c.cfg.Composer)
	if why := s.c.refusal(s.t.Prompt); why != "" {
		return fmt.Errorf("%w: %s; nothing was sent", ErrPromptRefused, why)
	}
	if s.kind == "" { // (prepare may have found it)
		var k struct {
			Found bool   `json:"found"`
			Kind  string `json:"kind"`
		}
		if err := s.p.eval(ctx, jsComposerKind, s.args(), &k); err != nil {
			return err
		}
		if !k.Found {
			return fmt.Errorf("%w: cdp.composer %q matches nothing; nothing was sent", ErrNotCalibrated, s.c.cfg.Composer)
		}
		s.kind = k.Kind
	}
	held, err := s.put(ctx)
	if err == nil && !s.holds(held) && s.kind == composerMonaco && !s.c.inputKeys {
		s.c.inputKeys = true
		s.c.logf("the editor ignored keys sent as page events; pressing them as input from now on")
		held, err = s.put(ctx)
	}
	if err != nil {
		return err
	}
	switch {
	case held.text == s.t.Prompt:
	case s.holds(held):
		s.t.note("the composer stored the prompt's CRLF (or CR) line ends as LF, so the chat received them as LF")
		s.c.logf("the composer stored the prompt's CRLF line ends as LF")
	default:
		after := "the composer was cleared"
		if err := s.clear(ctx); err != nil {
			after = "the composer could not be cleared (" + err.Error() + "): empty it before the next turn"
		}
		return fmt.Errorf("%w: the composer (%s) took %s; %s and nothing was sent", ErrNotSubmitted, s.kind, composerDiff(s.t.Prompt, held.text), after)
	}
	s.stored = held.text
	s.c.logf("prompt inserted (%d bytes, %s composer)", len(s.t.Prompt), s.kind)
	return nil
}

// composerHeld is what a composer was found holding: its text, and for
// Monaco what the editor said of its copy: that it was of a selection
// (all of it), or of the line the cursor is on, which it copies when
// nothing is selected (a select-all key it ignored). An editor may say
// neither.
type composerHeld struct {
	text                string
	selection, lineCopy bool
}

// holds says whether the composer holds the prompt, exactly or with its
// line ends as a field stores them. A Monaco copy proves it only as a
// copy of a selection: proven so for a select-all sent as a page event,
// not denied for one pressed as input.
func (s *cdpTurn) holds(h composerHeld) bool {
	if s.kind == composerMonaco && (h.lineCopy || !h.selection && !s.c.inputKeys) {
		return false
	}
	return h.text == s.t.Prompt || h.text == fieldLineEnds(s.t.Prompt)
}

// put replaces what the composer holds with the prompt (a paste, or
// input) and returns what it then holds.
func (s *cdpTurn) put(ctx context.Context) (composerHeld, error) {
	a := s.args()
	if s.kind == composerMonaco && s.c.inputKeys {
		if err := s.p.pressKey(ctx, selectAll); err != nil { // the paste replaces what a person left there
			return composerHeld{}, err
		}
	}
	a["kind"], a["text"], a["keys"] = s.kind, s.t.Prompt, s.pageKeys()
	var pasted struct {
		Handled bool `json:"handled"`
		Ignored bool `json:"ignored"`
	}
	if err := s.p.eval(ctx, jsPaste, a, &pasted); err != nil {
		return composerHeld{}, err
	}
	if pasted.Ignored {
		return composerHeld{lineCopy: true}, nil // nothing pasted: insert presses the keys as input
	}
	if !pasted.Handled {
		if err := s.p.call(ctx, "Input.insertText", map[string]any{"text": s.t.Prompt}, nil); err != nil {
			return composerHeld{}, err
		}
	}
	return s.settledText(ctx)
}

// pageKeys are the Monaco keys the page scripts send as page events
// (nil: the driver presses them as input).
func (s *cdpTurn) pageKeys() map[string]any {
	if s.kind != composerMonaco || s.c.inputKeys {
		return nil
	}
	return map[string]any{"selectAll": selectAll, "toEnd": toEnd}
}

// settledText waits, up to gui.submit, for the composer to hold the
// prompt: an editor may apply a paste later than the event (VS Code's
// chat runs its paste handlers first). It returns what the composer
// holds at the end.
//
// A Monaco proof selects all, and VS Code cancels a paste it is still
// applying when the selection changes; so the proof waits, touching
// nothing, for the editor's textarea to show the prompt's tail.
func (s *cdpTurn) settledText(ctx context.Context) (composerHeld, error) {
	deadline := time.Now().Add(s.c.submitWait)
	for s.kind == composerMonaco && time.Now().Before(deadline) {
		var r struct {
			Text string `json:"text"`
		}
		if err := s.p.eval(ctx, jsComposerText, s.args(), &r); err != nil {
			return composerHeld{}, err
		}
		if endsPrompt(r.Text, s.t.Prompt) || endsPrompt(r.Text, fieldLineEnds(s.t.Prompt)) {
			break
		}
		if err := realSleep(ctx, cdpPoll); err != nil {
			return composerHeld{}, err
		}
	}
	for {
		held, err := s.composerText(ctx)
		if err != nil || s.holds(held) || time.Now().After(deadline) {
			return held, err
		}
		if err := realSleep(ctx, cdpPoll); err != nil {
			return held, err
		}
	}
}

// composerText is all the text the composer holds; for Monaco, the
// editor's own copy of it, after which the cursor goes back to the end
// (so the textarea's window is the prompt's tail again).
func (s *cdpTurn) composerText(ctx context.Context) (composerHeld, error) {
	var r struct {
		Found     bool   `json:"found"`
		Copied    bool   `json:"copied"`
		Text      string `json:"text"`
		Selection *bool  `json:"selection"` // null: the editor did not say
	}
	if s.kind != composerMonaco {
		if err := s.p.eval(ctx, jsComposerText, s.args(), &r); err != nil {
			return composerHeld{}, err
		}
		return composerHeld{text: r.Text}, nil
	}
	keys := s.pageKeys()
	if keys == nil {
		if err := s.p.pressKey(ctx, selectAll); err != nil {
			return composerHeld{}, err
		}
	}
	a := s.args()
	a["keys"] = keys
	if err := s.p.eval(ctx, jsEditorCopy, a, &r); err != nil {
		return composerHeld{}, err
	}
	if keys == nil {
		if err := s.p.pressKey(ctx, toEnd); err != nil {
			return composerHeld{}, err
		}
	}
	if !r.Copied {
		return composerHeld{}, fmt.Errorf("%w: the Monaco editor of cdp.composer %q did not answer a copy of its text, so the prompt in it cannot be proven; nothing was sent", ErrNotSubmitted, s.c.cfg.Composer)
	}
	h := composerHeld{text: r.Text, selection: r.Selection != nil && *r.Selection, lineCopy: r.Selection != nil && !*r.Selection}
	if h.lineCopy && strings.Trim(h.text, "\r\n") == "" {
		h.text = "" // an empty editor copies its empty line
	}
	return h, nil
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
	if strings.TrimSpace(held.text) != "" { // an emptied contenteditable may keep a line break
		return fmt.Errorf("it still holds %d bytes", len(held.text))
	}
	return nil
}

// holdsPrompt says whether text, the composer's text as a look reads it,
// is still the prompt inserted: for Monaco the textarea's window, which
// holds the prompt's tail.
func (s *cdpTurn) holdsPrompt(text string) bool {
	if s.kind != composerMonaco {
		return text == s.stored
	}
	return endsPrompt(text, s.stored)
}

// endsPrompt says whether window, a Monaco textarea's text, is the tail
// of prompt (its first character may be half of a UTF-16 pair, which
// arrives as U+FFFD).
func endsPrompt(window, prompt string) bool {
	tail := strings.TrimPrefix(window, "\uFFFD")
	return tail != "" && strings.HasSuffix(prompt, tail)
}

// refusal says why the seat's app would not pass prompt on as written,
// or "". VS Code's chat drops a prompt's leading whitespace, and takes a
// leading / or @ as a command or a participant to route the prompt to.
func (c *CDP) refusal(prompt string) string {
	if c.cfg.Profile != ProfileVSCode {
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
// loopback). As page events they go to the scripts as JSON, for jsLib's
// key().
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
const jsComposerKind = "(a => {" + jsLib + `
const c = document.querySelector(a.composer);
if (!c) return {found: false};
c.focus();
const kind = c.tagName === "TEXTAREA" && c.closest(".monaco-editor") ? "monaco" : isField(c) ? "field" : "editable";
return {found: true, kind};` + "})"

// jsPaste selects what the composer holds (Monaco: with a.keys' select
// all, else by a key pressed before) and dispatches a paste of a.text to
// it; handled says the page took the paste itself. The desktop's
// clipboard is never involved.
const jsPaste = "(a => {" + jsLib + jsEditorCopyLib + `
const c = document.querySelector(a.composer);
if (!c) return {handled: false};
c.focus();
if (a.keys) {
  // A select-all the editor ignored leaves its selection empty, which
  // its copy data says: then nothing is pasted, and the keys go as input.
  key(c, a.keys.selectAll);
  const probe = editorCopy(c);
  if (probe.selection === false && probe.text.replace(/[\r\n]/g, "") !== "") return {handled: true, ignored: true};
}
if (a.kind === "field") c.select();
if (a.kind === "editable") {
  const sel = getSelection(), range = document.createRange();
  range.selectNodeContents(c);
  sel.removeAllRanges(); sel.addRange(range);
}
const dt = new DataTransfer();
dt.setData("text/plain", a.text);
const ev = new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true});
return {handled: !c.dispatchEvent(ev)};` + "})"

// jsComposerText is the text a field or contenteditable composer holds.
const jsComposerText = "(a => {" + jsLib + `
const c = document.querySelector(a.composer);
return c ? {found: true, text: fieldText(c)} : {found: false, text: ""};` + "})"

// jsEditorCopy asks the Monaco editor for a copy of its selection (all of
// it: selected with a.keys' select all, else by a key pressed before)
// through a copy event of our own, then (with a.keys) moves to the end:
// the desktop's clipboard is never written. Monaco says in its own data
// whether the selection was empty (it then copies the cursor's line).
const jsEditorCopy = "(a => {" + jsLib + jsEditorCopyLib + `
const c = document.querySelector(a.composer);
if (!c) return {found: false};
c.focus();
if (a.keys) key(c, a.keys.selectAll);
const copy = editorCopy(c);
if (a.keys) key(c, a.keys.toEnd);
return {found: true, ...copy};` + "})"

// jsEditorCopyLib is editorCopy(c): a copy event of our own on a Monaco
// editor's textarea c, and what the editor answered: whether it took
// the event, the text, and whether that was its selection (false: the
// cursor's line, which it copies when nothing is selected; null: it did
// not say).
const jsEditorCopyLib = `
const editorCopy = c => {
  const dt = new DataTransfer();
  const copied = !c.dispatchEvent(new ClipboardEvent("copy", {clipboardData: dt, bubbles: true, cancelable: true}));
  let selection = null;
  try { selection = !JSON.parse(dt.getData("vscode-editor-data")).isFromEmptySelection; } catch (e) {}
  return {copied, text: dt.getData("text/plain"), selection};
};
`

// jsClear empties a field or contenteditable composer.
const jsClear = "(a => {" + jsLib + `
const c = document.querySelector(a.composer);
if (!c) return false;
c.focus();
if (isField(c)) c.select();
else { const sel = getSelection(), range = document.createRange(); range.selectNodeContents(c); sel.removeAllRanges(); sel.addRange(range); }
document.execCommand("delete");
return true;` + "})"
