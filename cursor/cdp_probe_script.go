package cursor

// The scripts calibration runs in a chat page. They propose selectors and
// prove each by counting what it matches: a selector is only offered when
// it matches exactly the element it is meant for.

// jsCalLib builds selectors from an element's stable attributes (id,
// aria-label, role, data-* attributes, distinctive classes) and checks
// them against the page.
const jsCalLib = `
const q = s => { try { return [...document.querySelectorAll(s)]; } catch (e) { return null; } };
const esc = s => CSS.escape(s);
const quote = s => JSON.stringify(s);
// Names that change from build to build or state to state say nothing lasting.
const generated = s => /\d{3,}|^[a-z]{1,3}-[A-Za-z0-9]{5,}$|^css-|^sc-|[A-Za-z]+_[A-Za-z0-9]{5}$/.test(s);
const STATE = /^(is-|has-)|focus|hover|active|selected|visible|hidden|open|expanded|collapsed|disabled|loading|busy|stop|generat|streaming|progress|pending/i;
const stableClasses = e => [...e.classList].filter(c => !generated(c) && !STATE.test(c));
const stableID = e => e.id && !generated(e.id) ? "#" + esc(e.id) : "";
const tag = e => e.tagName.toLowerCase();
const CODE = "pre, code, .monaco-editor, [class*=code-block], [class*=codeblock], [class*=CodeBlock]";
const inCode = e => !!e.parentElement && !!e.parentElement.closest(CODE);
// own selectors: ways to name e by itself, most telling first.
const ownSelectors = e => {
  const out = [], t = tag(e);
  if (stableID(e)) out.push(stableID(e));
  for (const a of ["aria-label", "data-testid", "data-test-id", "placeholder", "name", "title"]) {
    const v = e.getAttribute(a);
    if (v && v.length < 80) out.push(t + "[" + a + "=" + quote(v) + "]");
  }
  for (const a of e.getAttributeNames()) {
    if (a.startsWith("data-") && !/^data-(testid|test-id)$/.test(a)) {
      const v = e.getAttribute(a);
      out.push(v && v.length < 40 && !generated(v) ? t + "[" + a + "=" + quote(v) + "]" : t + "[" + a + "]");
    }
  }
  const role = e.getAttribute("role");
  const cls = stableClasses(e);
  for (const c of cls) out.push(t + "." + esc(c));
  if (cls.length > 1) out.push(t + cls.map(c => "." + esc(c)).join(""));
  if (role) out.push(t + "[role=" + quote(role) + "]");
  if (e.isContentEditable && e.getAttribute("contenteditable") !== null) {
    out.push(t + "[contenteditable=" + quote(e.getAttribute("contenteditable") || "true") + "]" + (role ? "[role=" + quote(role) + "]" : ""));
  }
  return out;
};
// anchors: the nearest ancestors that have a lasting name of their own.
const anchors = e => {
  const out = [];
  for (let p = e.parentElement; p && p !== document.body && out.length < 4; p = p.parentElement) {
    const own = ownSelectors(p).filter(s => { const m = q(s); return m && m.length === 1; });
    if (own.length) out.push(own[0]);
  }
  return out;
};
// uniqueSelectors: selectors that match e and nothing else, shortest first.
const uniqueSelectors = e => {
  const own = ownSelectors(e);
  const cands = [...own];
  for (const a of anchors(e)) for (const s of own.slice(0, 6)) cands.push(a + " " + s);
  const ok = [];
  for (const s of cands) { const m = q(s); if (m && m.length === 1 && m[0] === e && !ok.includes(s)) ok.push(s); }
  return ok;
};
const visibleEl = e => !!e && e.isConnected && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
`

// jsCalLook looks at the page at rest: which known profile's composer
// resolves there, and which visible editable elements could be the chat's
// input. Code blocks' editors and search or filter boxes are left out; of
// what remains, one that says it is a chat's input wins, then the lowest.
const jsCalLook = "(a => {" + jsLib + jsCalLib + `
const counts = {};
for (const [name, s] of Object.entries(a.sels || {})) {
  const m = q(s);
  counts[name] = m === null ? -1 : m.length;
  counts[name + ".visible"] = m === null ? -1 : m.filter(visibleEl).length;
}
const EDIT = 'textarea, input:not([type]), input[type="text"], [contenteditable=""], [contenteditable="true"], [contenteditable="plaintext-only"], [role="textbox"]';
const SEARCH = /search|filter|find|command|goto|quick/i;
const CHAT = /chat|message|prompt|ask|composer|send|reply|question/i;
const described = e => [e.id, e.className && e.className.baseVal === undefined ? e.className : "", e.getAttribute("aria-label"),
  e.getAttribute("placeholder"), e.getAttribute("name"), e.getAttribute("type"), e.getAttribute("role"),
  ...[...e.attributes].filter(x => x.name.startsWith("data-")).map(x => x.name + " " + x.value)].filter(Boolean).join(" ");
const near = e => { let s = ""; for (let p = e, i = 0; p && i < 4; p = p.parentElement, i++) s += " " + described(p); return s; };
const found = [];
for (const e of q(EDIT)) {
  if (!visibleEl(e) || e.disabled || e.readOnly || inCode(e)) continue;
  if (e.parentElement && e.parentElement.isContentEditable) continue; // inside another editor
  if (e.getAttribute("type") === "search" || /search|searchbox|combobox/.test(e.getAttribute("role") || "") || SEARCH.test(near(e))) continue;
  const r = e.getBoundingClientRect();
  found.push({e, chat: CHAT.test(near(e)), bottom: r.bottom});
}
found.sort((x, y) => (y.chat - x.chat) || (y.bottom - x.bottom));
const out = {title: document.title, counts, composers: [], why: ""};
if (found.length === 0) out.why = "no visible editable element that is not a code block or a search box";
else if (found.length > 1 && found[0].chat === found[1].chat) {
  out.why = found.length + " editable elements, none of them named as a chat's input (" +
    found.slice(0, 4).map(f => (ownSelectors(f.e)[0] || tag(f.e))).join(", ") + ")";
} else {
  out.composers = uniqueSelectors(found[0].e);
  if (!out.composers.length) out.why = "the chat's input has no id, label, data attribute or class that names it alone";
}
return out;` + "})"

// jsProbeStart marks what the page holds before the probe's prompt, and
// watches it from then on: which busy-looking elements show (each as the
// selectors that name it) and when the page last changed.
const jsProbeStart = "(a => {" + jsLib + jsCalLib + `
const BUSY = 'button, [role="button"], [role="progressbar"], [aria-busy="true"], [class*="stop" i], [class*="loading" i], [class*="busy" i], ' +
  '[class*="generat" i], [class*="progress" i], [class*="spin" i], [class*="streaming" i], [aria-label*="stop" i], [aria-label*="cancel" i], [title*="stop" i]';
const WORD = /stop|cancel|busy|loading|generat|progress|spin|streaming|thinking|working|pending/i;
const busyNames = () => {
  const names = new Set();
  for (const e of q(BUSY)) {
    if (!visibleEl(e)) continue;
    const t = tag(e), id = stableID(e);
    for (const c of e.classList) if (WORD.test(c) && !generated(c)) {
      names.add((id || t) + "." + esc(c));
      for (const s of stableClasses(e)) names.add(t + "." + esc(s) + "." + esc(c));
    }
    for (const at of ["aria-label", "title"]) {
      const v = e.getAttribute(at);
      if (v && WORD.test(v) && v.length < 60) names.add(t + "[" + at + "=" + quote(v) + "]");
    }
    if (e.getAttribute("aria-busy") === "true") names.add("[aria-busy=\"true\"]");
    if (e.getAttribute("role") === "progressbar") names.add("[role=\"progressbar\"]");
  }
  for (const s of a.watch || []) { const m = q(s); if (m && m.some(visibleEl)) names.add(s); }
  return names;
};
const P = window.__agentctlProbe = {before: new WeakSet(), idle: busyNames(), seen: new Set(), changedAt: performance.now(), busyNames};
for (const e of document.getElementsByTagName("*")) P.before.add(e);
const note = () => {
  P.changedAt = performance.now();
  for (const s of busyNames()) if (!P.idle.has(s)) P.seen.add(s);
};
if (P.obs) P.obs.disconnect();
P.obs = new MutationObserver(note);
P.obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
return true;` + "})"

// jsProbeLook says whether a busy-looking element seen since the prompt
// still shows, and how long the page has been still.
const jsProbeLook = "(a => {" + jsLib + jsCalLib + `
const P = window.__agentctlProbe;
if (!P) return {lost: true};
const now = P.busyNames();
return {busy: [...P.seen].some(s => now.has(s)), seen: P.seen.size, still_ms: performance.now() - P.changedAt};` + "})"

// jsProbeCopies lists the copy buttons of the page once the reply is in:
// buttons or links saying copy (label, title or text), not a code block's,
// each with the selectors that make it the last match (the driver clicks
// the last), those inside the new reply first.
const jsProbeCopies = "(a => {" + jsLib + jsCalLib + `
const P = window.__agentctlProbe;
const COPY = /\bcopy\b/i;
const out = [];
for (const e of q('button, [role="button"], a, [aria-label], [title]')) {
  if (!visibleEl(e)) continue;
  const label = (e.getAttribute("aria-label") || "") + " " + (e.getAttribute("title") || "") + " " + (e.children.length === 0 || e.tagName === "BUTTON" ? e.textContent : "");
  if (!COPY.test(label) || /link|code|path/i.test(label) || inCode(e)) continue;
  let fresh = false;
  for (let p = e; p; p = p.parentElement) if (!P.before.has(p)) { fresh = true; break; }
  const sels = [];
  const own = ownSelectors(e);
  const cands = [...own];
  for (const an of anchors(e)) for (const s of own.slice(0, 6)) cands.push(an + " " + s);
  for (const s of cands) {
    const m = q(s);
    if (m && m.length && m[m.length - 1] === e && !m.some(inCode) && !sels.includes(s)) sels.push(s);
  }
  if (sels.length) out.push({fresh, sels});
}
out.sort((x, y) => y.fresh - x.fresh);
return out;` + "})"

// jsProbeReply finds the reply the probe brought from the copy of it: of
// the elements new since the prompt, the one whose words are the most of
// the copy's in order and all in it (its label or the prompt's echo are
// not), and proposes selectors whose last match is it and which match no
// other element the probe brought, such as the prompt's echo.
const jsProbeReply = "(a => {" + jsLib + jsCalLib + `
const P = window.__agentctlProbe;
const words = s => s.split(/[^\p{L}\p{N}\p{M}]+/u).filter(Boolean);
const copy = words(a.copied);
const inOrder = w => { let i = 0; for (const x of copy) if (i < w.length && x === w[i]) i++; return i === w.length; };
let best = null, bestN = 0;
for (const e of document.getElementsByTagName("*")) {
  if (P.before.has(e) || !visibleEl(e) || SKIP.test(e.nodeName)) continue;
  const w = words(textOf(e));
  if (w.length > bestN && inOrder(w)) { best = e; bestN = w.length; }
}
if (!best) return {sels: [], why: "no element new since the prompt shows the copied reply"};
const fresh = e => !P.before.has(e);
// The path from a named ancestor down to the reply, each step by its tag
// and lasting classes, the reply's own step by its place among siblings
// when it has no class.
const steps = [];
let anchor = "";
for (let p = best; p && p !== document.body; p = p.parentElement) {
  const id = stableID(p);
  if (id && p !== best) { anchor = id; break; }
  steps.unshift(p);
  if (steps.length > 6) break;
}
const step = (e, extra) => {
  let s = tag(e) + stableClasses(e).map(c => "." + esc(c)).join("") + (extra[e.__i] || "");
  if (e === best && !stableClasses(e).length && e.parentElement && e.parentElement.lastElementChild === e) s += ":last-child";
  return s;
};
steps.forEach((e, i) => { e.__i = i; });
const extra = {};
const cands = ownSelectors(best).filter(s => !s.startsWith("#"));
const pathSel = from => (anchor && from === 0 ? anchor + " > " : "") + steps.slice(from).map(e => step(e, extra)).join(" > ");
const ok = [];
const check = s => {
  const m = q(s);
  if (!m || !m.length || m[m.length - 1] !== best) return null;
  return m.filter(x => x !== best && fresh(x));
};
for (const s of cands) { const other = check(s); if (other && !other.length && !ok.includes(s)) ok.push(s); }
// Paths from the anchor, told apart from the echo where they catch it.
for (let round = 0; round < 4 && ok.length < 3; round++) {
  const s = pathSel(0);
  const other = check(s);
  if (other === null) break;
  if (!other.length) { if (!ok.includes(s)) ok.push(s); break; }
  const o = other[0];
  let told = false;
  // Walk up from both to the first step where they differ by a class.
  const chain = x => { const c = []; for (let p = x; p && c.length < steps.length; p = p.parentElement) c.unshift(p); return c; };
  const oc = chain(o);
  for (let i = steps.length - 1; i >= 0 && !told; i--) {
    const mine = stableClasses(steps[i]), theirs = oc[i] ? [...oc[i].classList] : [];
    const only = mine.find(c => !theirs.includes(c));
    const not = theirs.find(c => !steps[i].classList.contains(c) && !generated(c));
    if (only) { extra[i] = (extra[i] || "") + "." + esc(only); told = true; }
    else if (not) { extra[i] = (extra[i] || "") + ":not(." + esc(not) + ")"; told = true; }
  }
  if (!told) break;
}
for (const e of steps) delete e.__i;
return {sels: ok, text: textOf(best), why: ok.length ? "" : "no selector names the reply without the prompt's echo"};` + "})"

// jsProbeFinish stops watching and returns the busy-looking selectors that
// showed during the reply and show neither before the prompt nor now.
const jsProbeFinish = "(a => {" + jsLib + jsCalLib + `
const P = window.__agentctlProbe;
if (!P) return [];
P.obs.disconnect();
const now = P.busyNames();
const WORD = /stop|cancel|busy|loading|generat|progress/i;
return [...P.seen].filter(s => !now.has(s) && !P.idle.has(s)).sort((x, y) => WORD.test(y) - WORD.test(x) || x.length - y.length);` + "})"

// jsProbeCheck reports, for selectors given or from the profile, whether
// each showed during the reply (busy), and whether the last reply match is
// new since the prompt (reply).
const jsProbeCheck = "(a => {" + jsLib + jsCalLib + `
const P = window.__agentctlProbe;
const out = {};
if (a.busy) out.busy = P.seen.has(a.busy) && !P.idle.has(a.busy) && !P.busyNames().has(a.busy);
if (a.reply) { const m = q(a.reply); const r = m && m.length ? m[m.length - 1] : null; out.reply = !!r && !P.before.has(r); }
return out;` + "})"
