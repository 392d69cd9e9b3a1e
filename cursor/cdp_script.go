package cursor

// The scripts the CDP driver runs in the chat page. Each is a function of
// one argument (the selectors and values it needs, as JSON) whose result
// goes back as JSON. They find elements afresh on every call, so a page
// that redrew or reloaded is never worked through stale handles. Each is
// the constant "(a => {" + jsLib + its body + "})", put together by the
// compiler: built at run time, they cost every command's start-up 77 KB.

// jsLib is shared by the scripts: selectors that fail loudly, visibility,
// and the text of an element exactly as its text nodes hold it (innerText
// would rewrite line ends and spaces), without its buttons, and with each
// rendered code block (pre) written back as a Markdown fence with its
// language (a language-X class or data-language), so that a reply's
// agentctl block survives its rendering.
const jsLib = `
const all = s => { try { return [...document.querySelectorAll(s)]; } catch (e) { throw new Error("selector " + JSON.stringify(s) + " is not valid CSS"); } };
const last = s => { const l = all(s); return l.length ? l[l.length - 1] : null; };
const visible = e => !!e && e.isConnected && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
const firstVisible = s => all(s).find(visible) || null;
const isField = e => e.tagName === "TEXTAREA" || e.tagName === "INPUT";
const BLOCK = /^(DIV|P|PRE|LI|UL|OL|H[1-6]|BLOCKQUOTE|TABLE|TR|SECTION|ARTICLE)$/;
const SKIP = /^(BUTTON|SCRIPT|STYLE|SVG|TEMPLATE|NOSCRIPT)$/i;
const textOf = n => {
  let s = "";
  for (const c of n.childNodes) {
    if (c.nodeType === Node.TEXT_NODE) { s += c.data; continue; }
    if (c.nodeType !== Node.ELEMENT_NODE || SKIP.test(c.nodeName)) continue;
    if (c.nodeName === "BR") { s += "\n"; continue; }
    if (c.nodeName === "PRE") {
      const code = c.querySelector("code") || c;
      const cls = /(?:^|\s)lang(?:uage)?-(\S+)/.exec(c.className + " " + code.className);
      const lang = c.dataset.language || code.dataset.language || (cls ? cls[1] : "");
      let body = textOf(code);
      if (!body.endsWith("\n")) body += "\n";
      if (s !== "" && !s.endsWith("\n")) s += "\n";
      s += "` + "```" + `" + lang + "\n" + body + "` + "```" + `\n";
      continue;
    }
    if (BLOCK.test(c.nodeName) && s !== "" && !s.endsWith("\n")) s += "\n";
    s += textOf(c);
  }
  return s;
};
const fieldText = e => isField(e) ? e.value : textOf(e);
const busyNow = a => !!a.busy && all(a.busy).some(visible);
const state = () => window.__agentctl = window.__agentctl || {};
// seen holds the replies that were on the page when a prompt was sent: a
// reply is new when it is not one of them. A reply is known by its
// element, or, inside a list that numbers its rows (data-index, as VS
// Code's lists do), by its row's number: such lists recycle their rows'
// elements, so the new reply may show in an element that held an old one.
// It lives as long as the page, so a turn resumed by another process
// still knows them.
const seenReplies = () => { const w = state(); w.seen = w.seen || new WeakSet(); w.seenRows = w.seenRows || new Set(); return w; };
const rowOf = e => { const row = e.closest("[data-index]"); return row ? row.dataset.index : null; };
const isSeen = (w, e) => { const row = rowOf(e); return row !== null ? w.seenRows.has(row) : w.seen.has(e); };
const markSeen = (w, e) => { const row = rowOf(e); if (row !== null) w.seenRows.add(row); else w.seen.add(e); };
// replyElement says whether the last reply appeared after the prompt was
// sent, and whether the page still holds a reply marked then (if not, the
// page redrew its replies and only the text tells old from new). A row's
// number outlives its element (a virtual list drops rows scrolled away),
// so a numbered reply is always told by its number.
const replyElement = a => {
  const l = a.reply ? all(a.reply) : [], w = seenReplies();
  const r = l.length ? l[l.length - 1] : null;
  const numbered = !!r && rowOf(r) !== null;
  return {found: !!r, fresh: !!r && !isSeen(w, r), numbered, marks_left: numbered || l.some(e => isSeen(w, e))};
};
const within = (r, s) => { try { return [...r.querySelectorAll(s)]; } catch (e) { throw new Error("selector " + JSON.stringify(s) + " is not valid CSS"); } };
// The reply's body (a.body inside it, else all of it), its rendered text
// and the app's error message in it (a.error).
const replyParts = (r, a) => !r ? [] : a.body ? within(r, a.body) : [r];
const renderedOf = (r, a) => replyParts(r, a).map(textOf).join("\n");
const errorOf = (r, a) => {
  if (!r || !a.error) return "";
  return within(r, a.error).filter(visible).map(e => textOf(e).trim()).filter(Boolean).join("\n");
};
const sleep = ms => new Promise(res => setTimeout(res, ms));
// enterCalm is how long the page has run jsFocus's timer on time since
// the Enter it watches: 0 for none, or once the timer has stopped, when
// nothing is measured. A tick overdue now counts as late: a page blocked
// for seconds runs a look before the timer it owes.
const enterCalm = (t, now) => {
  if (!t || !t.at || !t.due) return 0;
  if (now - t.due > lateBy()) return 0;
  return now - t.busyAt;
};
// lateBy is how late jsFocus's timer may run and count as on time: 50 ms,
// or in a page that is not shown, whose timers run once a second by
// design, 1.1 s.
const lateBy = () => document.visibilityState === "visible" ? 50 : 1100;
// key presses k (a pageKey) on e as page events: an editor's key handling
// takes them as it takes the keyboard's.
const key = (e, k) => { for (const type of ["keydown", "keyup"]) e.dispatchEvent(new KeyboardEvent(type, {...k, which: k.keyCode, bubbles: true, cancelable: true})); };
`

// jsWatch marks the page for this turn (a reload wipes the mark) and
// watches it change: whether the busy element ever shows, so that a model
// busy for less than a poll is still seen, and when the last reply (or
// which element is the last reply) or the busy state last changed. With
// a.mark it also marks the replies on the page as being from before the
// prompt.
const jsWatch = "(a => {" + jsLib + `
const w = state();
if (w.obs) w.obs.disconnect();
w.token = a.token; w.busySeen = false; w.changes = 0; w.changedAt = performance.now(); w.probe = null; w.enter = null;
let marked = 0;
// Marked afresh at each prompt: a new chat numbers its rows from 0 again.
// w.marked outlives the turn, as the marks do: a turn resumed on a page
// without it is on a page reloaded since its prompt was sent. Set false
// by a look before any mark, it tells such a page from one an earlier
// release marked, which has a token and no w.marked at all.
w.marked = !!(w.marked || a.mark);
if (a.mark && a.reply) { w.seen = null; w.seenRows = null; const m = seenReplies(); for (const e of all(a.reply)) { markSeen(m, e); marked++; } }
let wasBusy = false, lastReply = null;
const changed = () => { w.changes++; w.changedAt = performance.now(); };
const check = records => {
  let busy = false;
  try { busy = busyNow(a); } catch (e) {}
  if (busy) w.busySeen = true;
  let r = null;
  try { r = last(a.reply); } catch (e) {}
  if (busy !== wasBusy || r !== lastReply) { wasBusy = busy; lastReply = r; changed(); return; }
  // Only what can change the reply's words counts: apps restyle their
  // elements all the time (VS Code's code blocks lay out again and again,
  // its workbench toggles classes), and redraw a reply's toolbars (VS
  // Code's action bars, in VS Code and Cursor alike, once the reply is
  // drawn), which changes no word of the reply.
  if (r && records.some(m => m.type !== "attributes" && (r.contains(m.target) || m.target.contains(r)) &&
      !(m.target.closest && m.target.closest('[role="toolbar"], .monaco-action-bar')))) changed();
};
w.obs = new MutationObserver(check);
w.obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
check([]);
return marked;` + "})"

// jsLook is what the driver watches: the title, the turn's mark, the busy
// state, how long the reply and the busy state have been still, how many
// replies and elements the page has (the transcript growing), the
// composer's text (null: no composer), and whether the page took the
// driver's last Enter (see jsFocus).
//
// Stillness measured by a clock alone can be faked by a page whose main
// thread was starved: the clock ran on while the page could not draw what
// it had scheduled. So once the page is not busy (with a.quiet given: the
// turn awaits its reply), the look arms a probe: a timer, a posted
// message, a task of background priority (run only once the page has no
// more urgent work, and after its own low-priority updates queued before)
// and, in a page that is shown, an animation frame; each runs only after
// the page's work of its kind queued before it. A change disarms the
// probe, and the next look arms another. The page is settled when it has
// been still for a.quiet ms after showing the model busy, or a.pause ms if
// it never did, and a probe armed since its last change has run in full:
// the page then drained what it had queued with nothing changed, and
// stayed still. The probe runs during the stillness rather than after it,
// so it costs no time of its own. A page that draws no frame, or is never
// free for background work, counts its probe as run once its timer and
// message ran and a second has passed since it was armed: later than
// otherwise, never sooner.
const jsLook = "(a => {" + jsLib + `
const w = state();
const c = a.composer ? document.querySelector(a.composer) : null;
const busy = busyNow(a), now = performance.now();
const still = w.changedAt === undefined ? 0 : now - w.changedAt;
let p = w.probe;
if (p && (p.changes !== w.changes || busy)) p = w.probe = null;
const need = w.busySeen ? a.quiet : a.pause;
if (!p && !busy && need !== undefined && w.changedAt !== undefined) {
  p = w.probe = {changes: w.changes, at: now, timer: false, message: false, frame: document.visibilityState !== "visible",
    idle: !window.scheduler};
  setTimeout(() => { p.timer = true; }, 0);
  if (!p.idle) scheduler.postTask(() => { p.idle = true; }, {priority: "background"});
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { p.message = true; ch.port1.close(); };
  ch.port2.postMessage(0);
  if (!p.frame) requestAnimationFrame(() => { p.frame = true; });
}
const settled = !!p && still >= need && p.timer && p.message && ((p.frame && p.idle) || now - p.at > 1000);
return {title: document.title, token: w.token || "", busy, busy_seen: !!w.busySeen,
  changes: w.changes || 0, still_ms: still, settled,
  replies: all(a.reply).length, composer: c ? fieldText(c) : null,
  nodes: document.getElementsByTagName("*").length, enter_taken: !!(w.enter && w.enter.taken),
  enter_calm_ms: enterCalm(w.enter, now)};` + "})"

// jsFocus focuses the composer, for Enter, and listens for that Enter:
// once its dispatch is over, whether the page took it (prevented its
// default, as an app's key handling does) is kept for jsLook. A busy page
// may show the prompt sent long after it took the key, so from the Enter
// on a timer every 50 ms notes when the page last ran one late (by over
// 50 ms): a page still at work on the key, slowed or starved of CPU,
// keeps its timers late, and jsLook says how long it has kept them on
// time since (enter_calm_ms, see enterCalm). The timer stops once the
// page shows the model busy, at the next mark or Enter, or a.watch_ms
// (the turn's time) after the Enter.
const jsFocus = "(a => {" + jsLib + `
const c = document.querySelector(a.composer);
if (!c) return false;
c.focus();
const w = state(), t = w.enter = {taken: false, at: 0, busyAt: 0, due: 0};
const on = e => {
  if (e.key !== "Enter") return;
  window.removeEventListener("keydown", on, true);
  t.at = t.busyAt = performance.now();
  setTimeout(() => { t.taken = e.defaultPrevented; }, 0);
  t.due = t.at + 50;
  const tick = () => {
    const now = performance.now();
    if (w.enter !== t || w.busySeen || now - t.at > a.watch_ms) { t.due = 0; return; }
    if (now - t.due > lateBy()) t.busyAt = now;
    t.due = now + 50;
    setTimeout(tick, 50);
  };
  setTimeout(tick, 50);
};
window.addEventListener("keydown", on, true);
return true;` + "})"

// jsClick clicks the first visible element matching a.sel.
const jsClick = "(a => {" + jsLib + `
const e = firstVisible(a.sel);
if (!e) return false;
e.click();
return true;` + "})"

// jsCheck reports which selectors match nothing, and which are not CSS.
const jsCheck = "(a => {" + jsLib + `
const out = {};
for (const [name, s] of Object.entries(a.sels)) {
  if (!s) continue;
  try { out[name] = document.querySelectorAll(s).length; } catch (e) { out[name] = -1; }
}
return {title: document.title, counts: out};` + "})"

// jsPrepare is prepare's script: jsCheck, jsWatch and jsLook, then with
// a.markNow, where the page is not busy and its last reply is in a
// numbered row (jsNumbered), jsWatch marking the replies,
// jsComposerKind and jsLook again. A selector that is not CSS stops it
// first. Kept says whether the page held an earlier turn's marks before
// this call (or a watch token with no word on marks at all: marks made
// by an earlier release, which did not note them).
const jsPrepare = "(a => { const counts = (" + jsCheck + ")(a).counts;\n" +
	"if (Object.values(counts).includes(-1)) return {counts};\n" +
	"const prev = window.__agentctl, kept = !!(prev && (prev.marked || (prev.token && prev.marked === undefined)));\n" +
	"(" + jsWatch + ")({...a, mark: false});\n" +
	"const look = (" + jsLook + ")(a);\n" +
	"if (look.busy || !a.markNow || !(" + jsNumbered + ")(a)) return {counts, look, kept};\n" +
	"(" + jsWatch + ")({...a, mark: true});\n" +
	"const k = (" + jsComposerKind + ")(a);\n" +
	"return {counts, look: (" + jsLook + ")(a), marked: true, kind: k.kind || \"\", kept}; })"
