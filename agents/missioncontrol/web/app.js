// Mission control's page: it renders each snapshot the server streams
// (server-sent events) and sends a person's changes with the token. Ages
// are computed here from the snapshot's times, once a second.
"use strict";
let snap = null;
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}

function age(t) {
  if (!t) return "";
  let s = Math.max(0, Math.round((Date.now() - Date.parse(t)) / 1000));
  if (s < 90) return s + "s";
  if (s < 5400) return Math.round(s / 60) + "m";
  return Math.round(s / 3600) + "h";
}
function span(t) { // "1.2s" between two times
  if (!t[0] || !t[1]) return "";
  const ms = Date.parse(t[1]) - Date.parse(t[0]);
  return ms < 10000 ? (ms / 1000).toFixed(1) + "s" : Math.round(ms / 1000) + "s";
}

// token: the login link's cookie carries it to every request; a token
// typed here (or an old link's #token=…) is sent as well, for this tab only.
function token() { return $("token").value; }
function initToken() {
  const m = location.hash.match(/token=([A-Za-z0-9_-]+)/);
  if (m) { sessionStorage.setItem("agentctl-token", m[1]); history.replaceState(null, "", location.pathname); }
  $("token").value = sessionStorage.getItem("agentctl-token") || "";
  $("token").addEventListener("change", () => sessionStorage.setItem("agentctl-token", token()));
}

async function act(path, body) {
  const note = $("notice");
  try {
    const headers = { "Content-Type": "application/json" };
    if (token()) headers["Authorization"] = "Bearer " + token();
    const r = await fetch("/api/" + path, { method: "POST", headers, body: JSON.stringify(body) });
    const out = await r.json();
    if (!r.ok) throw new Error(out.error + (out.hint ? " — hint: " + out.hint : ""));
    note.className = "ok"; note.textContent = out.message;
    return true;
  } catch (e) {
    note.className = "err"; note.textContent = e.message;
    return false;
  }
}

// more holds the pages a person asked for past what a snapshot holds, by
// "state:mailbox": the snapshot keeps the first of each folder, and the
// counts say how many there are in all.
const more = {}, moreTotal = {};
async function loadMore(mailbox, state, offset) {
  const key = state + ":" + mailbox;
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  const q = new URLSearchParams({ mailbox, state, offset: String(offset) });
  try {
    const r = await fetch("/api/messages?" + q, { headers });
    const out = await r.json();
    if (!r.ok) throw new Error(out.error);
    more[key] = (more[key] || []).concat(out.letters);
    render();
  } catch (e) {
    $("notice").className = "err"; $("notice").textContent = e.message;
  }
}

// withMore is a section's rows from the snapshot, then the pages loaded
// past them (without what the snapshot holds by now), then a "more" link
// for each mailbox of which some are still not shown.
function withMore(state, shown, totals) {
  const rows = [...shown];
  const seen = new Set(shown.map((l) => l.mailbox + "/" + l.ref));
  const links = [];
  for (const [mailbox, total] of Object.entries(totals)) {
    // A folder that changed may have moved what was loaded: load it again.
    if (moreTotal[state + ":" + mailbox] !== total) delete more[state + ":" + mailbox];
    moreTotal[state + ":" + mailbox] = total;
    const own = shown.filter((l) => l.mailbox === mailbox).length;
    const extra = (more[state + ":" + mailbox] || []).filter((l) => !seen.has(l.mailbox + "/" + l.ref));
    rows.push(...extra);
    const have = own + extra.length;
    if (total > have) links.push({ mailbox, state, offset: have, left: total - have });
  }
  return { rows, links };
}

function moreLink(l) {
  return el("div", { class: "more small", "data-more": l.state + ":" + l.mailbox },
    el("a", { href: "#", onclick: (e) => { e.preventDefault(); loadMore(l.mailbox, l.state, l.offset); } },
      "more of " + l.mailbox + " (" + l.left + " not shown)"));
}

function stateOf(a) {
  if (a.problem) return "broken";
  if (a.stalled) return "stalled";
  if (a.runner === "gone") return "gone";
  if (a.runner === "stopped" || a.state === "-") return "stopped";
  return a.state;
}

// A remote agent's turns are taken on its seat's machine; the hub says
// whether it hears the seat.
function seatClass(seat) {
  if (seat.hub_down) return "absent";
  return seat.present ? "present" : seat.heard ? "absent" : "unheard";
}

function seatText(a) {
  const s = a.seat;
  if (s.hub_down) return "seat on " + s.machine + ": unknown, the hub is not running (start 'agentctl hub')";
  if (!s.heard) return "seat on " + s.machine + ": never heard (run 'agentctl run " + a.name + " --hub URL' there)";
  return "seat on " + s.machine + ": " + (s.present ? "present, " + s.state : "absent");
}

// Outcomes of a turn that did not do all it meant: part refused or
// waiting, or no agentctl block where the prompt asked for one.
const troubled = new Set(["done with errors", "done without block"]);

function outcomeOf(l) {
  const text = l.outcome || (l.state === "dead" ? "dead: " + l.reason : l.state);
  return el("span", { class: troubled.has(l.outcome) ? "outcome warn" : "outcome dim" }, text);
}

// The running runner's count of messages that ended badly, and the run of
// replies without the block that outlives it.
function doneDetail(a) {
  return [
    a.done_with_errors ? el("span", { class: "warn with-errors" }, a.done_with_errors + " with errors") : null,
    a.done_without_block ? el("span", { class: "warn without-block" }, a.done_without_block + " without block") : null,
  ];
}

function tile(a) {
  const st = stateOf(a);
  const q = a.queue || {};
  const turn = a.state === "working" && a.since ? " for " + age(a.since) : "";
  return el("div", { class: "tile " + st, "data-agent": a.name },
    el("h3", {}, a.name, el("span", { class: "state" }, st + turn)),
    a.subject || a.current ? el("div", { class: "current" }, "▶ " + (a.subject || a.current)) : null,
    a.waiting ? el("div", { class: "dim small" }, "waiting: " + a.waiting) : null,
    a.silent ? el("div", { class: "warn small silent" }, "⚠ " + a.silent + ": stopped, hung, or its machine is gone?") : null,
    el("div", { class: "queue" },
      el("span", { class: "pending" }, "queue " + a.pending),
      ["urgent", "high", "normal", "low"].filter((p) => q[p]).map((p) => el("span", { class: "q-" + p }, p + " " + q[p])),
      el("span", { class: "done" }, "done " + a.done),
      doneDetail(a),
      el("span", { class: "deadcount" }, "dead " + a.dead),
      a.today && a.today.turns ? el("span", { class: "spent", title: "what its turns used today (UTC)" }, "today " + a.today_brief) : null),
    a.no_block_run > 1 ? el("div", { class: "warn small no-block-run" }, "last " + a.no_block_run +
      " replies had no agentctl block: see the notice in the person's inbox") : null,
    a.last_log ? el("div", { class: "dim small lastlog" }, age(a.last_log_at) + " ago: " + a.last_log) : null,
    a.holds_lock ? el("div", { class: "small lock" }, "🔒 holds the desktop lock") : null,
    a.runner === "running" ? el("div", { class: "dim small" }, "runner pid " + a.pid) : null,
    a.seat ? el("div", { class: "small seat " + seatClass(a.seat) }, seatText(a)) : null,
    a.problem ? el("div", { class: "reason small" }, a.problem) : null,
    a.state === "working" ? el("button", { class: "skip", onclick: () => {
      const why = prompt("Skip " + a.name + "'s turn: why?");
      if (why !== null) act("skip", { agent: a.name, reason: why });
    } }, "skip turn") : null);
}

function card(t, statuses) {
  const sel = el("select", { onchange: (e) => act("task", { id: t.id, changes: ["status=" + e.target.value] }) },
    statuses.map((s) => { const o = el("option", {}, s); if (s === t.status) o.selected = true; return o; }));
  return el("div", { class: "card", "data-task": t.id },
    el("div", {}, el("b", {}, t.id), " ", t.title),
    el("div", { class: "dim small" }, (t.owner || "unassigned") + (t.priority ? " · " + t.priority : "")),
    (t.messages || []).length ? el("details", { class: "small messages" },
      el("summary", { class: "dim" }, t.messages.length + " message(s)"),
      t.messages.map((m) => el("div", { "data-message": m.id }, el("b", {}, m.from), " → ", el("b", {}, m.to), " ", m.subject,
        el("span", { class: "dim" }, " · "), outcomeOf(m)))) : null,
    sel);
}

function hop(l) {
  // Timings from the receipt: how long the message waited, then the turn.
  const parts = [];
  if (l.claimed_at) parts.push("waited " + span([l.created_at, l.claimed_at]));
  if (l.completed_at) parts.push("turn " + span([l.claimed_at || l.created_at, l.completed_at]));
  else if (l.claimed_at) parts.push("working for " + age(l.claimed_at));
  return el("div", { class: "hop", "data-hop": l.id }, el("b", {}, l.from), " → ", el("b", {}, l.to), " ",
    el("span", { class: "dim small" }, [l.subject, ...parts, ""].join(" · ")), el("span", { class: "small" }, outcomeOf(l)),
    (l.notes || []).map((n) => el("div", { class: "dim small note" }, "driver: " + n)));
}

// redraw replaces the rows of section id only when what they show has
// changed: rows with buttons are left alone by the redraws a snapshot or
// the clock brings, or a click landing as they are replaced (its press on
// the old button, its release on the new) would be lost, and with it a
// person's answer.
const drawn = {};
function redraw(id, data, rows) {
  const key = JSON.stringify(data);
  if (drawn[id] === key) return;
  drawn[id] = key;
  $(id).replaceChildren(...rows());
}

function render() {
  const s = snap;
  // Answers being typed survive the redraw a new snapshot brings.
  const typed = {};
  let focused = null;
  for (const box of document.querySelectorAll("[data-question] input")) {
    typed[box.closest("[data-question]").dataset.question] = box.value;
    if (box === document.activeElement) focused = box.closest("[data-question]").dataset.question;
  }
  $("root").textContent = s.root;
  $("agents").replaceChildren(...s.agents.map(tile));
  $("locks").replaceChildren(...(s.locks || []).map((l) => el("div", { class: "small" }, "desktop input lock " + l.lock + ": " + (l.agent || "?") + " (pid " + l.pid + ") for " + age(l.since))));
  $("problems").replaceChildren(...(s.problems || []).map((p) => el("li", { class: "reason" }, p)));
  const open = new Set([...document.querySelectorAll("[data-task] details[open]")].map((d) => d.closest("[data-task]").dataset.task));
  const statuses = s.columns.map((c) => c.status);
  $("board").replaceChildren(...s.columns.map((c) => el("div", { class: "column", "data-status": c.status },
    el("h2", {}, c.status.replace("_", " ") + " (" + c.tasks.length + ")"), c.tasks.map((t) => card({ ...t, status: c.status }, statuses)))));
  for (const id of open) { const d = document.querySelector(`[data-task="${CSS.escape(id)}"] details`); if (d) d.open = true; }
  $("threads").replaceChildren(...(s.threads.length ? s.threads.slice(0, 15).map((t) => el("div", { class: "thread", "data-thread": t.id },
    el("div", {}, t.subject), t.hops.map(hop))) : [el("div", { class: "dim" }, "no conversations yet")]));
  const deadTotals = {}, waitTotals = {};
  for (const a of s.agents) deadTotals[a.name] = a.dead;
  for (const p of s.people) { deadTotals[p.name] = p.dead; waitTotals[p.name] = p.pending; }
  const dead = withMore("dead", s.dead, deadTotals);
  redraw("dead", dead, () => dead.rows.length ? [...dead.rows.map((d) => el("div", { class: "row", "data-dead": d.ref },
    el("b", {}, d.mailbox), el("span", {}, d.subject || d.ref), el("span", { class: "reason" }, d.reason),
    el("button", { onclick: () => act("retry", { ref: d.ref, mailbox: d.mailbox }) }, "retry"))), ...dead.links.map(moreLink)] : [el("div", { class: "dim" }, "none")]);
  const waitingShown = s.people.flatMap((p) => p.waiting.map((m) => ({ ...m, person: p.name })));
  const waited = withMore("pending", waitingShown, waitTotals);
  const waiting = waited.rows.map((m) => ({ ...m, person: m.person || m.mailbox }));
  redraw("people", waited, () => waiting.length ? [...waiting.map((m) => {
    const approval = m.type === "approval";
    const box = el("input", { placeholder: approval ? "reason to deny…" : "answer…", size: 30 });
    box.value = typed[m.id] || "";
    if (focused === m.id) setTimeout(() => box.focus());
    const form = approval
      ? el("form", { onsubmit: (e) => { e.preventDefault(); act("deny", { person: m.person, id: m.id, reason: box.value }); } },
        el("button", { type: "button", "data-approve": m.id, onclick: () => act("approve", { person: m.person, id: m.id }) }, "approve"),
        box, el("button", { "data-deny": m.id }, "deny"))
      : el("form", { onsubmit: (e) => { e.preventDefault(); act("reply", { person: m.person, id: m.id, text: box.value }); } }, box, el("button", {}, "reply"));
    return el("div", { class: "row", "data-question": m.id },
      el("b", {}, m.from + " → " + m.person), el("span", {}, m.subject), el("div", { class: "dim small" }, m.body), form);
  }), ...waited.links.map(moreLink)] : [el("div", { class: "dim" }, "nothing waits")]);
  const to = $("send-to"), keep = to.value;
  to.replaceChildren(...s.agents.map((a) => el("option", {}, a.name)), el("option", { value: "all" }, "all agents"));
  if (keep) to.value = keep;
}

function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("snapshot", (e) => {
    snap = JSON.parse(e.data);
    document.body.dataset.seq = e.lastEventId;
    render();
  });
  es.onopen = () => { $("live").className = "live"; $("live").textContent = "live"; };
  es.onerror = () => { $("live").className = "live off"; $("live").textContent = "reconnecting…"; };
}

document.addEventListener("DOMContentLoaded", () => {
  initToken();
  $("send").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const body = Object.fromEntries(f.entries());
    if (await act("send", body)) e.target.body.value = "";
  });
  connect();
  setInterval(() => { if (snap && !document.activeElement.closest("select")) render(); }, 1000);
});
