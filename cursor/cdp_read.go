package cursor

import (
	"context"
	"fmt"
	"strings"
)

// cdpReading is what a read of the page gave: the last reply as the page
// gives it (the app's own copy of it, or with cdp.read: rendered its
// rendering), what the page renders of its body, the app's error message
// in it, and what the page says of the last reply element.
type cdpReading struct {
	Text string `json:"text"`
	// CopyFound: the copy action (cdp.copy's button, cdp.copy_menu's
	// menu item) was on the page.
	CopyFound bool `json:"copy_found"`
	// Rendered is the text the page shows for the reply's body (cdp.body),
	// which a copy must account for word by word (checkCopy).
	Rendered string `json:"rendered"`
	// Error is the app's error message inside the reply (cdp.error).
	Error string `json:"error"`
	// Labels are the items of the context menu that opened, when none
	// was cdp.copy_menu's; MenuOpen: a menu stayed open after the copy.
	Labels   []string   `json:"labels"`
	MenuOpen bool       `json:"menu_open"`
	Element  replyState `json:"el"`
}

// replyState is jsLib's replyElement.
type replyState struct {
	Found bool `json:"found"`
	// Fresh: the element was not on the page when the prompt was sent.
	Fresh bool `json:"fresh"`
	// MarksLeft: an element marked then is still on the page, so element
	// identity tells old replies from new.
	MarksLeft bool `json:"marks_left"`
	// Numbered: the reply is in a numbered row (data-index), so Fresh is
	// certain: a row numbered then is the reply from before.
	Numbered bool `json:"numbered"`
}

// jsNumbered says whether the last reply is in a numbered row.
const jsNumbered = "(a => {" + jsLib + `
const r = last(a.reply);
return !!r && rowOf(r) !== null;` + "})"

// readArgs are the selectors the read scripts take.
func (s *cdpTurn) readArgs() map[string]any {
	a := s.args()
	a["body"], a["error"], a["copyMenu"] = s.c.cfg.Body, s.c.cfg.Error, s.c.cfg.CopyMenu
	return a
}

// read returns the last reply and what the page says of it: through the
// seat's copy action, or its rendering with cdp.read: rendered.
func (s *cdpTurn) read(ctx context.Context) (cdpReading, error) {
	var r cdpReading
	script, _ := s.readScript()
	var err error
	if script != jsReply && s.c.cfg.Clipboard == ClipboardSystem {
		r, err = s.systemCopy(ctx, script)
	} else {
		err = s.p.eval(ctx, script, s.readArgs(), &r)
	}
	if err != nil {
		return r, s.failed(err)
	}
	return r, s.checkRead(r)
}

// readScript is the script that reads the seat's reply in the page, and
// the same read after a look (see lookThenRead).
func (s *cdpTurn) readScript() (read, afterLook string) {
	switch {
	case s.c.cfg.Read == ReadRendered: // (a seat reading a copy names a copy action: readReady)
	case s.c.cfg.Copy != "":
		return jsCopy, jsLookThenCopy
	case s.c.cfg.CopyMenu != "":
		return jsCopyMenu, jsLookThenCopyMenu
	}
	return jsReply, jsLookThenReply
}

func (s *cdpTurn) checkRead(r cdpReading) error {
	if r.MenuOpen {
		return fmt.Errorf("%w: the reply's context menu stayed open after cdp.copy_menu %q was chosen", ErrNotCalibrated, s.c.cfg.CopyMenu)
	}
	return nil
}

// lookThenRead is a look (lookFor) that, where it finds the page settled
// with its change count still at changes, reads the reply in the same
// call: the read a settled look would ask for next, a round trip sooner.
// It gives no reading otherwise, nor for a seat whose copy goes through
// the desktop's clipboard (see systemCopy).
func (s *cdpTurn) lookThenRead(ctx context.Context, extra map[string]any, changes int) (pageLook, *cdpReading, error) {
	script, afterLook := s.readScript()
	if script != jsReply && s.c.cfg.Clipboard == ClipboardSystem {
		l, err := s.lookFor(ctx, extra)
		return l, nil, err
	}
	a := s.readArgs()
	for k, v := range extra {
		a[k] = v
	}
	a["changes"] = changes
	var res struct {
		Look    pageLook    `json:"look"`
		Reading *cdpReading `json:"reading"`
	}
	if err := s.p.eval(ctx, afterLook, a, &res); err != nil {
		return res.Look, nil, s.failed(err)
	}
	if err := s.confirm(res.Look); err != nil {
		return res.Look, nil, err
	}
	if res.Reading != nil {
		if err := s.checkRead(*res.Reading); err != nil {
			return res.Look, nil, err
		}
	}
	return res.Look, res.Reading, nil
}

// The scripts of lookThenRead, one per read script.
var (
	jsLookThenReply    = jsLookThen(jsReply)
	jsLookThenCopy     = jsLookThen(jsCopy)
	jsLookThenCopyMenu = jsLookThen(jsCopyMenu)
)

// jsLookThen is jsLook followed, where it finds the page settled with
// a.changes changes, by read.
func jsLookThen(read string) string {
	return "(async a => { const look = (" + jsLook + ")(a);\n" +
		"if (look.busy || !look.settled || look.changes !== a.changes) return {look};\n" +
		"return {look, reading: await (" + read + ")(a)}; })"
}

// copyAction names the seat's copy action for messages.
func copyAction(cfg CDPSettings) string {
	if cfg.Copy != "" {
		return fmt.Sprintf("cdp.copy %q", cfg.Copy)
	}
	return fmt.Sprintf("cdp.copy_menu %q", cfg.CopyMenu)
}

// readReady refuses a seat that reads the app's copy of the reply but
// names no way to get it, before anything is sent.
func readReady(cfg CDPSettings) error {
	if cfg.Read == ReadCopy && cfg.Copy == "" && cfg.CopyMenu == "" {
		return fmt.Errorf("%w: cdp.read is copy (the default) but the seat has no copy action: set cdp.copy (the reply's copy button) or cdp.copy_menu (the label of the reply's context-menu item that copies it), or set cdp.read: rendered to read the page's rendering, which loses Markdown; nothing was sent",
			ErrNotCalibrated)
	}
	return nil
}

// replyFailed is the error of a reply the app ended with an error
// message, or as cancelled: it is no reply to pass on.
func replyFailed(r cdpReading) error {
	msg := strings.TrimSpace(r.Error)
	if msg == "Canceled" || msg == "Cancelled" {
		return fmt.Errorf("%w: the app shows the reply as cancelled (%q)", ErrNoReply, msg)
	}
	return fmt.Errorf("%w: the app ended the reply with an error: %s", ErrNoReply, msg)
}

// jsReply is the last reply's rendered text, and what replyElement says
// of it.
const jsReply = "(a => {" + jsLib + `
const r = last(a.reply);
const text = renderedOf(r, a);
return {el: replyElement(a), text, rendered: text, error: errorOf(r, a)};` + "})"

// jsCopy clicks the last reply's copy button (the one inside the last
// reply, else the page's last) with the page's clipboard writes caught
// inside the page (navigator.clipboard.writeText, and a copy command
// answered by a copy event of our own), so the reply's source comes back
// and the desktop's clipboard is never written. The reply is hovered
// first: pages show such buttons on hover.
const jsCopy = "(async a => {" + jsLib + `
const r = last(a.reply);
const out = {el: replyElement(a), text: "", copy_found: false, rendered: renderedOf(r, a), error: errorOf(r, a)};
const inside = r ? within(r, a.copy) : [];
const b = inside.length ? inside[inside.length - 1] : last(a.copy);
if (!b) return out;
out.copy_found = true;
if (r) for (const type of ["mouseover", "mouseenter"]) r.dispatchEvent(new MouseEvent(type, {bubbles: type === "mouseover"}));
let got = "";
const exec = document.execCommand, clip = a.system ? null : navigator.clipboard;
if (!a.system) document.execCommand = function (cmd, ...rest) {
  if (String(cmd).toLowerCase() !== "copy") return exec.call(document, cmd, ...rest);
  const dt = new DataTransfer();
  (document.activeElement || document).dispatchEvent(new ClipboardEvent("copy", {clipboardData: dt, bubbles: true, cancelable: true}));
  got = dt.getData("text/plain");
  return true;
};
if (clip) clip.writeText = async t => { got = String(t); };
try {
  b.click();
  await sleep(0);
} finally {
  document.execCommand = exec;
  if (clip) delete clip.writeText;
}
out.text = got;
return out;` + "})"

// jsCopyMenu opens the last reply's context menu (a contextmenu event on
// its body), chooses the item labelled a.copyMenu with the page's
// clipboard writes caught as jsCopy does, and makes sure no menu stays
// open. The item is chosen as a keyboard user does, by pointing at it
// and pressing Enter: VS Code's menus take that at once, where they take
// a click only from 100 ms after the menu opened. A menu that ignores the
// key gets clicks until it answers.
const jsCopyMenu = "(async a => {" + jsLib + `
const r = last(a.reply);
const out = {el: replyElement(a), text: "", copy_found: false, rendered: renderedOf(r, a), error: errorOf(r, a),
  labels: [], menu_open: false};
if (!r) return out;
const target = replyParts(r, a).find(visible) || r;
const box = target.getBoundingClientRect();
const menus = () => all('.context-view .monaco-menu, [role="menu"]').filter(visible);
const labelOf = e => ((e.querySelector(".action-label") || e).textContent || "").trim();
let got = null;
const clip = a.system ? null : navigator.clipboard;
if (clip) clip.writeText = async t => { got = String(t); };
try {
  target.dispatchEvent(new MouseEvent("contextmenu", {bubbles: true, cancelable: true, button: 2, buttons: 2,
    clientX: box.left + Math.min(8, box.width / 2), clientY: box.top + Math.min(8, box.height / 2)}));
  let item = null;
  for (let i = 0; i < 1000 && !item; i++) {
    const items = menus().flatMap(m => within(m, '.action-item, [role="menuitem"]')).filter(visible);
    out.labels = [...new Set(items.map(labelOf).filter(Boolean))];
    item = items.find(e => labelOf(e) === a.copyMenu) || null;
    if (!item) await sleep(1);
  }
  if (item) {
    out.copy_found = true;
    const hit = item.querySelector('[role="menuitem"]') || item;
    hit.dispatchEvent(new MouseEvent("mouseover", {bubbles: true, cancelable: true}));
    hit.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", keyCode: 13, bubbles: true, cancelable: true}));
    for (let i = 0; i < 4 && got === null; i++) await sleep(0);
    // A menu may ignore a release that comes too soon after it opened (the
    // release of the click that opened it): choose again while it is open.
    for (let i = 0; i < 40 && got === null && visible(hit); i++) {
      for (const type of ["mousedown", "mouseup"]) hit.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, button: 0}));
      for (let j = 0; j < 10 && got === null; j++) await sleep(5);
    }
    for (let i = 0; i < 100 && got === null && !a.system; i++) await sleep(5); // the write may come after the menu closed
  }
} finally {
  if (clip) delete clip.writeText;
  for (let i = 0; i < 100 && menus().length; i++) {
    for (const m of menus()) m.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", code: "Escape", keyCode: 27, bubbles: true}));
    await sleep(2);
  }
  out.menu_open = menus().length > 0;
}
out.text = got || "";
return out;` + "})"
