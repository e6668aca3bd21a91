// EchoMQ dashboard page. Plain JS, no dependencies. Every value from the
// server is inserted as text (textContent / text nodes), never as markup.
"use strict";

const state = {
  overview: null,      // the latest /api/overview snapshot
  route: null,         // {view, queue?, id?}
  list: { state: "pending", order: "newest", offset: 0, limit: 25, from: "", to: "" },
  listLoading: false,
  listAgain: false,    // a redraw was asked for while the list was loading
  pollTimer: null,
};

// ---- small DOM helpers -------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const $ = (id) => document.getElementById(id);
const fmt = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"));
// Rates: whole numbers once they are large, one decimal below 100.
const rate = (r) => (r >= 100 ? fmt(Math.round(r)) : r.toFixed(1));

function ago(ms) {
  if (ms === null || ms === undefined) return "—";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
}

function when(ms) {
  if (!ms) return "—";
  const d = new Date(ms);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

function relative(ms) {
  if (!ms || !state.overview) return "";
  const delta = ms - state.overview.now_ms;
  return delta >= 0 ? "in " + ago(delta) : ago(-delta) + " ago";
}

// ---- server calls ------------------------------------------------------

async function api(path) {
  const r = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (r.status === 401) { location.href = "/login"; throw new Error("sign in first"); }
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
  return body;
}

async function act(path) {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-EMQ-Dashboard": "1", Accept: "application/json" },
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
  return body;
}

function toast(text, bad) {
  const t = $("toast");
  t.textContent = text;
  t.className = "toast" + (bad ? " bad" : "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

// A confirmation dialog (an in-page dialog, not window.confirm). `extra`
// is an optional element shown under the text: the input an action needs
// (an age, a checkbox), read when the operator confirms.
function confirmAction(title, body, label, extra) {
  return new Promise((resolve) => {
    $("confirm-title").textContent = title;
    $("confirm-body").textContent = body;
    $("confirm-ok").textContent = label;
    $("confirm-extra").replaceChildren(...(extra ? [extra] : []));
    $("confirm").hidden = false;
    const done = (ok) => {
      $("confirm").hidden = true;
      $("confirm-ok").onclick = null;
      $("confirm-cancel").onclick = null;
      resolve(ok);
    };
    $("confirm-ok").onclick = () => done(true);
    $("confirm-cancel").onclick = () => done(false);
    const first = extra && extra.querySelector("input");
    (first || $("confirm-ok")).focus();
  });
}

// Ask, do, and say what changed. `describe` turns the answer into a sentence;
// `path` may be a function, called after confirming (it reads `extra`).
async function runAction(title, body, label, path, describe, extra) {
  if (!(await confirmAction(title, body, label, extra))) return;
  try {
    const answer = await act(typeof path === "function" ? path() : path);
    toast(describe(answer));
    state.listKey = null;
    state.jobKey = null;
    await refreshView();
  } catch (e) {
    toast(title + " failed: " + e.message, true);
  }
}

const readOnly = () => !state.overview || state.overview.read_only;

// ---- routing -----------------------------------------------------------

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "queue" && parts[1] && parts[2] === "job" && parts[3]) return { view: "job", queue: parts[1], id: parts[3] };
  if (parts[0] === "queue" && parts[1]) return { view: "queue", queue: parts[1] };
  return { view: "overview" };
}

const queueHref = (q) => "#/queue/" + encodeURIComponent(q);
const jobHref = (q, id) => queueHref(q) + "/job/" + encodeURIComponent(id);

function crumbs(route) {
  const c = $("crumbs");
  c.replaceChildren(h("a", { href: "#/" }, "Overview"));
  if (route.queue) c.append(h("span", { class: "sep" }, "/"), h("a", { href: queueHref(route.queue) }, route.queue));
  if (route.id) c.append(h("span", { class: "sep" }, "/"), h("span", { class: "mono" }, route.id));
}

async function onRoute() {
  const previous = state.route;
  state.route = parseRoute();
  if (state.route.view === "queue" && (!previous || previous.queue !== state.route.queue || previous.view !== "queue")) {
    state.list = { state: "pending", order: "newest", offset: 0, limit: 25, from: "", to: "" };
  }
  crumbs(state.route);
  state.listKey = null;
  state.jobKey = null;
  $("view").replaceChildren(h("p", { class: "muted" }, "Loading…"));
  await refreshView();
}

async function refreshView() {
  const r = state.route;
  try {
    if (r.view === "overview") renderOverview();
    else if (r.view === "queue") await renderQueue(r.queue);
    else if (r.view === "job") await renderJob(r.queue, r.id);
  } catch (e) {
    $("view").replaceChildren(h("div", { class: "panel error-panel" }, e.message));
  }
}

// ---- overview ----------------------------------------------------------

function totals(queues) {
  const t = { pending: 0, active: 0, scheduled: 0, dead: 0, completed_per_min: 0, failed_per_min: 0 };
  for (const q of queues) for (const k of Object.keys(t)) t[k] += q[k];
  return t;
}

function stat(label, value, extra, tone) {
  return h("div", { class: "stat" + (tone ? " " + tone : "") },
    h("div", { class: "stat-label" }, label),
    h("div", { class: "stat-value" }, value),
    extra ? h("div", { class: "stat-extra" }, extra) : null);
}

function failureRate(q) {
  const done = q.completed_per_min + q.failed_per_min;
  return done > 0 ? (100 * q.failed_per_min / done).toFixed(1) + "%" : "—";
}

function chart(queues, bucketMs, width, height) {
  const n = queues.length ? queues[0].series.length : 0;
  const done = new Array(n).fill(0), failed = new Array(n).fill(0);
  for (const q of queues) q.series.forEach(([c, f], i) => { done[i] += c; failed[i] += f; });
  const W = width || 720, H = height || 150, P = 28;
  const max = Math.max(1, ...done.map((d, i) => d + failed[i]));
  const bw = (W - P) / Math.max(1, n);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H + 18}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "jobs completed and failed per " + bucketMs / 1000 + " seconds");
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.append(el);
  };
  for (const frac of [0, 0.5, 1]) {
    const y = H - frac * (H - 10);
    add("line", { x1: P, x2: W, y1: y, y2: y, class: "grid" });
    add("text", { x: P - 4, y: y + 4, class: "axis", "text-anchor": "end" }, fmt(Math.round(frac * max)));
  }
  done.forEach((d, i) => {
    const x = P + i * bw + 1, hd = (d / max) * (H - 10), hf = (failed[i] / max) * (H - 10);
    if (hd > 0) add("rect", { x, y: H - hd, width: Math.max(1, bw - 2), height: hd, class: "bar-done" });
    if (hf > 0) add("rect", { x, y: H - hd - hf, width: Math.max(1, bw - 2), height: hf, class: "bar-failed" });
  });
  const minutes = Math.round((n * bucketMs) / 60000);
  add("text", { x: P, y: H + 15, class: "axis" }, minutes + " min ago");
  add("text", { x: W, y: H + 15, class: "axis", "text-anchor": "end" }, "now");
  return svg;
}

function pauseButton(q) {
  if (readOnly()) return null;
  return q.paused
    ? h("button", { class: "btn small", "data-action": "resume", onclick: () => runAction(
        "Resume " + q.name + "?", "Workers start claiming jobs from this queue again.", "Resume",
        "/api/queues/" + encodeURIComponent(q.name) + "/resume",
        (a) => a.changed ? q.name + " resumed" : q.name + " was not paused") }, "Resume")
    : h("button", { class: "btn small", "data-action": "pause", onclick: () => runAction(
        "Pause " + q.name + "?", "Workers stop claiming; pending jobs stay where they are.", "Pause",
        "/api/queues/" + encodeURIComponent(q.name) + "/pause",
        (a) => a.changed ? q.name + " paused" : q.name + " was already paused") }, "Pause");
}

function renderOverview() {
  const o = state.overview;
  if (!o) return;
  const t = totals(o.queues);
  const failRate = t.completed_per_min + t.failed_per_min > 0
    ? (100 * t.failed_per_min / (t.completed_per_min + t.failed_per_min)).toFixed(1) + "%" : "—";
  const rows = o.queues.map((q) => h("tr", { "data-queue": q.name },
    h("td", {}, h("a", { href: queueHref(q.name), class: "qname" }, q.name),
      q.error ? h("div", { class: "row-error" }, q.error) : null),
    h("td", { class: "num", "data-count": "pending" }, fmt(q.pending)),
    h("td", { class: "num", "data-count": "active" }, fmt(q.active)),
    h("td", { class: "num", "data-count": "scheduled" }, fmt(q.scheduled)),
    h("td", { class: "num" + (q.dead ? " warn" : ""), "data-count": "dead" }, fmt(q.dead)),
    h("td", { class: "num", "data-count": "completed" }, fmt(q.completed)),
    h("td", { class: "num", "data-count": "failed" }, fmt(q.failed)),
    h("td", { class: "num" }, rate(q.completed_per_min)),
    h("td", { class: "num" }, failureRate(q)),
    h("td", { class: "num" }, q.oldest_pending_ms ? ago(o.now_ms - q.oldest_pending_ms) : "—"),
    h("td", {}, h("span", { class: "pill " + (q.paused ? "paused" : "running"), "data-paused": String(q.paused) }, q.paused ? "paused" : "running")),
    readOnly() ? null : h("td", { class: "actions" }, pauseButton(q))));
  $("view").replaceChildren(
    h("section", { class: "stats" },
      stat("Pending", fmt(t.pending)),
      stat("Active", fmt(t.active)),
      stat("Scheduled", fmt(t.scheduled)),
      stat("Dead", fmt(t.dead), null, t.dead ? "warn" : null),
      stat("Throughput", rate(t.completed_per_min), "jobs / min"),
      stat("Failure rate", failRate, "last minute")),
    h("section", { class: "grid2 overview-grid" },
      h("div", { class: "panel" },
        h("div", { class: "panel-head" }, h("h2", {}, "Throughput"),
          h("span", { class: "legend" }, h("i", { class: "sw done" }), "completed", h("i", { class: "sw failed" }), "dead-lettered")),
        chart(o.queues, o.bucket_ms)),
      healthPanel(o)),
    h("section", { class: "panel" },
      h("div", { class: "panel-head" }, h("h2", {}, "Queues")),
      h("table", { class: "table", id: "queues" },
        h("thead", {}, h("tr", {},
          h("th", {}, "Queue"), h("th", { class: "num" }, "Pending"), h("th", { class: "num" }, "Active"),
          h("th", { class: "num" }, "Scheduled"), h("th", { class: "num" }, "Dead"), h("th", { class: "num" }, "Completed"),
          h("th", { class: "num" }, "Failed"), h("th", { class: "num" }, "Done/min"), h("th", { class: "num" }, "Fail %"),
          h("th", { class: "num" }, "Oldest pending"), h("th", {}, "State"), readOnly() ? null : h("th", {}, ""))),
        h("tbody", {}, ...rows))));
}

// The deployment's checks (the ones `emq doctor` prints), worst first in
// the head, one line each below.
function healthPanel(o) {
  const hl = o.health;
  const items = hl.checks.map((c) => h("li", { class: "check " + c.status.toLowerCase(), "data-check": c.check },
    h("span", { class: "verdict", "data-status": c.status }, c.status),
    h("span", { class: "check-name" }, c.check),
    h("span", { class: "check-detail" }, c.detail)));
  // What this dashboard's own client saw when it connected, if it differs.
  for (const m of o.bundle_mismatches) {
    items.push(h("li", { class: "check warn" }, h("span", { class: "verdict" }, "WARN"), h("span", { class: "check-name" }, "script"),
      h("span", { class: "check-detail" }, m.field + " differs: ours " + m.ours.slice(0, 8) + ", recorded " + m.theirs.slice(0, 8))));
  }
  if (items.length === 0) items.push(h("li", { class: "muted" }, "Probing the deployment…"));
  const live = o.live_events ? "queue events + a refresh every " + o.refresh_ms / 1000 + " s" : "a refresh every " + o.refresh_ms / 1000 + " s (events not attached)";
  return h("div", { class: "panel", id: "health" },
    h("div", { class: "panel-head" }, h("h2", {}, "Health"),
      h("span", { class: "pill health-" + hl.status.toLowerCase(), id: "health-status" }, hl.status),
      h("span", { class: "spacer" }),
      hl.checked_at_ms ? h("span", { class: "muted small", title: when(hl.checked_at_ms) }, "checked " + ago(o.now_ms - hl.checked_at_ms) + " ago") : null),
    hl.error ? h("p", { class: "row-error", id: "health-error" }, hl.error) : null,
    h("ul", { class: "health" }, ...items),
    h("p", { class: "muted small" }, "Live: " + live + " · " + o.queues.length + " queue" + (o.queues.length === 1 ? "" : "s")));
}

// ---- queue page --------------------------------------------------------

const SETS = [["pending", "Pending"], ["active", "Active"], ["scheduled", "Scheduled"], ["dead", "Dead"]];

function localToMs(v) { return v ? new Date(v).getTime() : null; }

// One list request at a time. A snapshot that arrives while one is in
// flight must not be dropped: the request may have been answered before the
// change that snapshot reports, and with a long refresh nothing else would
// redraw the list. So it is remembered and the list is read once more.
async function renderQueue(queue) {
  if (state.listLoading) { state.listAgain = true; return; }
  state.listLoading = true;
  try {
    const l = state.list;
    const params = new URLSearchParams({ state: l.state, order: l.order, offset: l.offset, limit: l.limit });
    if (l.from) params.set("from_ms", localToMs(l.from));
    if (l.to) params.set("to_ms", localToMs(l.to));
    const page = await api("/api/queues/" + encodeURIComponent(queue) + "/jobs?" + params);
    if (!state.route || state.route.view !== "queue" || state.route.queue !== queue) return;
    // Redraw only when something shown changed, so a live tick does not
    // reset a control the operator is using.
    const q = state.overview && state.overview.queues.find((x) => x.name === queue);
    const key = JSON.stringify([page, q && [q.pending, q.active, q.scheduled, q.dead, q.paused], readOnly()]);
    if (key === state.listKey && $("jobs-panel")) {
      if (q && $("queue-chart")) $("queue-chart").replaceWith(queueChart(q));
      return;
    }
    state.listKey = key;
    drawQueue(queue, page);
  } finally {
    state.listLoading = false;
    // (Here, not after the try: the early returns above skip that.)
    if (state.listAgain) { state.listAgain = false; setTimeout(refreshView, 0); }
  }
}

// The queue's own throughput panel; redrawn alone on live ticks so the list
// and its controls stay put.
function queueChart(q) {
  return h("section", { class: "panel", id: "queue-chart" },
    h("div", { class: "panel-head" }, h("h2", {}, "Throughput"),
      h("span", { class: "muted small" }, rate(q.completed_per_min) + " done/min · " + failureRate(q) + " failed, last minute"),
      h("span", { class: "legend" }, h("i", { class: "sw done" }), "completed", h("i", { class: "sw failed" }), "dead-lettered")),
    chart([q], state.overview.bucket_ms, 1200, 80));
}

function drawQueue(queue, page) {
  const l = state.list;
  const q = state.overview && state.overview.queues.find((x) => x.name === queue);
  const tabs = h("div", { class: "tabs", role: "tablist" }, ...SETS.map(([key, label]) =>
    h("button", { class: "tab" + (l.state === key ? " on" : ""), role: "tab", "data-state": key,
      onclick: () => { l.state = key; l.offset = 0; state.listKey = null; refreshView(); } },
      label, h("span", { class: "tab-count" }, q ? fmt(q[key]) : ""))));
  const dueLabel = l.state === "scheduled" ? "Runs at" : l.state === "active" ? "Lease deadline" : null;
  const rows = page.jobs.map((j) => h("tr", { "data-job-id": j.id },
    h("td", {}, h("a", { class: "mono", href: jobHref(queue, j.id) }, j.id)),
    h("td", { title: when(j.minted_at_ms) }, relative(j.minted_at_ms)),
    dueLabel ? h("td", { title: when(j.due_ms) }, relative(j.due_ms)) : null,
    h("td", { class: "num" }, fmt(j.attempts)),
    h("td", { class: "preview" }, j.last_error ? h("span", { class: "err-text" }, j.last_error) : h("span", { class: "muted" }, j.preview || "")),
    readOnly() ? null : h("td", { class: "actions" }, rowActions(queue, j, l.state))));
  const from = page.total === 0 ? 0 : page.offset + 1;
  const to = page.offset + page.jobs.length;
  const controls = h("div", { class: "controls" },
    h("label", {}, "Order ",
      h("select", { id: "order", onchange: (e) => { l.order = e.target.value; l.offset = 0; refreshView(); } },
        h("option", { value: "newest", selected: l.order === "newest" }, "newest first"),
        h("option", { value: "oldest", selected: l.order === "oldest" }, "oldest first"))),
    h("label", {}, l.state === "scheduled" ? "Run-at from " : l.state === "active" ? "Deadline from " : "Minted from ",
      h("input", { type: "datetime-local", value: l.from, onchange: (e) => { l.from = e.target.value; l.offset = 0; refreshView(); } })),
    h("label", {}, "to ", h("input", { type: "datetime-local", value: l.to, onchange: (e) => { l.to = e.target.value; l.offset = 0; refreshView(); } })),
    h("span", { class: "spacer" }),
    readOnly() || !q ? null : pauseButton(q),
    readOnly() || !q ? null : drainButton(queue, q),
    readOnly() || l.state !== "dead" || page.total === 0 ? null : h("button", { class: "btn small", "data-action": "requeue-all",
      onclick: () => runAction("Requeue every dead job in " + queue + "?", page.total + " dead job(s) go back to pending and run again.", "Requeue all",
        "/api/queues/" + encodeURIComponent(queue) + "/dead/requeue", (a) => "Requeued " + fmt(a.requeued_count) + " dead job(s) to pending") }, "Requeue all dead"),
    readOnly() || l.state !== "dead" || page.total === 0 ? null : purgeButton(queue, page.total));
  $("view").replaceChildren(
    h("div", { class: "page-head" }, h("h1", {}, queue),
      q ? h("span", { class: "pill " + (q.paused ? "paused" : "running") }, q.paused ? "paused" : "running") : null),
    q ? queueChart(q) : null,
    tabs,
    h("section", { class: "panel", id: "jobs-panel" }, controls,
      page.jobs.length === 0
        ? h("p", { class: "empty", id: "empty" }, "No " + l.state + " jobs" + (l.from || l.to ? " in this range." : "."))
        : h("table", { class: "table", id: "jobs" },
            h("thead", {}, h("tr", {}, h("th", {}, "Job"), h("th", {}, "Minted"), dueLabel ? h("th", {}, dueLabel) : null,
              h("th", { class: "num" }, "Attempts"), h("th", {}, l.state === "dead" ? "Last error / payload" : "Payload"),
              readOnly() ? null : h("th", {}, ""))),
            h("tbody", {}, ...rows)),
      h("div", { class: "pager" },
        h("span", { class: "muted", id: "range" }, fmt(from) + "–" + fmt(to) + " of " + fmt(page.total)),
        h("button", { class: "btn small", disabled: page.offset === 0, onclick: () => { l.offset = Math.max(0, l.offset - l.limit); refreshView(); } }, "‹ Prev"),
        h("button", { class: "btn small", disabled: to >= page.total, onclick: () => { l.offset += l.limit; refreshView(); } }, "Next ›"))));
}

// Drain: delete the waiting jobs (pending, and scheduled if ticked); active
// jobs finish. The core's `drain`.
function drainButton(queue, q) {
  return h("button", { class: "btn small danger", "data-action": "drain", onclick: () => {
    const box = h("input", { type: "checkbox", id: "drain-scheduled" });
    const extra = h("label", { class: "confirm-field" }, box, " also the " + fmt(q.scheduled) + " scheduled job(s)");
    runAction("Drain " + queue + "?",
      "The " + fmt(q.pending) + " pending job(s) are deleted for good, with their payloads. " + fmt(q.active) + " active job(s) are left to finish.",
      "Drain", () => "/api/queues/" + encodeURIComponent(queue) + "/drain?include_scheduled=" + box.checked,
      (a) => "Deleted " + fmt(a.deleted) + " waiting job(s) of " + queue + (a.include_scheduled ? " (pending and scheduled)" : " (pending)") + "; active jobs kept",
      extra);
  } }, "Drain…");
}

// Purge: delete dead jobs minted longer ago than an age (empty: all of
// them). The core's `purge_dead`.
function purgeButton(queue, total) {
  return h("button", { class: "btn small danger", "data-action": "purge-dead", onclick: () => {
    const age = h("input", { type: "text", id: "purge-older-than", value: "7d", size: 8, spellcheck: "false", "aria-label": "minimum age" });
    const extra = h("label", { class: "confirm-field" }, "Older than ", age, h("span", { class: "muted small" }, " e.g. 30m, 12h, 7d; empty = every dead job"));
    runAction("Purge dead jobs of " + queue + "?",
      "Dead jobs minted longer ago than this age are deleted for good, with their payloads (" + fmt(total) + " dead now).",
      "Purge", () => "/api/queues/" + encodeURIComponent(queue) + "/dead/purge?older_than=" + encodeURIComponent(age.value.trim()),
      (a) => "Deleted " + fmt(a.deleted) + " dead job(s) of " + queue + (a.older_than_ms === null ? "" : " older than " + age.value.trim()),
      extra);
  } }, "Purge dead…");
}

function rowActions(queue, job, set) {
  const base = "/api/queues/" + encodeURIComponent(queue) + "/jobs/" + encodeURIComponent(job.id);
  const out = [];
  if (set === "dead") out.push(h("button", { class: "btn small", "data-action": "requeue", onclick: () => runAction(
    "Requeue " + job.id + "?", "The job goes back to pending and runs again (attempts kept).", "Requeue",
    base + "/requeue", () => "Requeued " + job.id + " → pending") }, "Requeue"));
  if (set !== "active") out.push(h("button", { class: "btn small danger", "data-action": "remove", onclick: () => runAction(
    "Remove " + job.id + "?", "The job and its payload are deleted for good.", "Remove",
    base + "/remove", () => "Removed " + job.id) }, "Remove"));
  return out;
}

// ---- job page ----------------------------------------------------------

async function renderJob(queue, id) {
  const base = "/api/queues/" + encodeURIComponent(queue) + "/jobs/" + encodeURIComponent(id);
  let job;
  try {
    job = await api(base);
  } catch (e) {
    if (state.jobKey === "missing" && $("job-missing")) return;
    state.jobKey = "missing";
    $("view").replaceChildren(h("div", { class: "panel" }, h("h1", { class: "mono" }, id),
      h("p", { class: "empty", id: "job-missing" }, e.message)));
    return;
  }
  if (!state.route || state.route.view !== "job" || state.route.id !== id) return;
  // A live tick redraws the job only when something shown changed.
  const key = JSON.stringify([job, readOnly()]);
  if (key === state.jobKey && $("payload")) return;
  state.jobKey = key;
  const field = (label, value, attrs) => [h("dt", {}, label), h("dd", attrs || {}, value)];
  const dueLabel = job.state === "scheduled" ? "Runs at" : job.state === "active" ? "Lease deadline" : null;
  const actions = readOnly() ? [] : [
    job.state === "dead" ? h("button", { class: "btn primary", "data-action": "requeue", onclick: () => runAction(
      "Requeue " + id + "?", "The job goes back to pending and runs again (attempts kept).", "Requeue",
      base + "/requeue", () => "Requeued " + id + " → pending") }, "Requeue") : null,
    job.state !== "active" && job.state !== "completed" ? h("button", { class: "btn danger", "data-action": "remove", onclick: () => runAction(
      "Remove " + id + "?", "The job and its payload are deleted for good.", "Remove",
      base + "/remove", () => "Removed " + id) }, "Remove") : null];
  const p = job.payload;
  $("view").replaceChildren(
    h("div", { class: "page-head" }, h("h1", { class: "mono" }, id),
      h("span", { class: "pill state-" + job.state, id: "job-state" }, job.state),
      h("span", { class: "spacer" }), ...actions),
    h("section", { class: "grid2 job-grid" },
      h("div", { class: "panel" }, h("div", { class: "panel-head" }, h("h2", {}, "Job")),
        h("dl", { class: "kv" },
          field("Queue", h("a", { href: queueHref(queue) }, queue)),
          field("State", job.state),
          field("Attempts", fmt(job.attempts), { id: "attempts" }),
          field("Minted", when(job.minted_at_ms) + " (" + relative(job.minted_at_ms) + ")"),
          dueLabel ? field(dueLabel, when(job.due_ms) + " (" + relative(job.due_ms) + ")") : []) ),
      h("div", { class: "panel" + (job.last_error ? " error-panel" : "") }, h("div", { class: "panel-head" }, h("h2", {}, "Last error")),
        job.last_error ? h("pre", { class: "error-box", id: "last-error" }, job.last_error) : h("p", { class: "muted", id: "last-error" }, "None"))),
    h("section", { class: "panel" },
      h("div", { class: "panel-head" }, h("h2", {}, "Payload"),
        p ? h("span", { class: "muted small" }, p.kind + " · " + fmt(p.size) + " bytes" + (p.truncated ? " · first " + fmt(p.text.length) + " shown" : "")) : null,
        h("span", { class: "spacer" }),
        p ? h("a", { class: "btn small", href: base + "/payload", download: "" }, "Download") : null),
      p ? h("pre", { class: "payload", id: "payload", "data-kind": p.kind }, p.text)
        : h("p", { class: "muted", id: "payload" }, "Deleted with the completed job; its result and log are kept for a while.")),
    ...jobExtras(job));
}

// A 0..100 progress as a bar. Its width is set through the CSSOM: the page's
// CSP refuses inline style attributes.
function progressBar(pct) {
  const bar = h("div", { class: "progress-bar" });
  bar.style.width = pct + "%";
  return h("div", { class: "progress", id: "progress", "data-value": pct }, bar, h("span", {}, pct + " %"));
}

// The job page's further panels (wire 2.1.0): the progress its holder
// reported, the newest lines of its log, and the result a worker kept.
// Every value is inserted as text, like the payload.
function jobExtras(job) {
  const panels = [];
  if (job.progress !== null && job.progress !== undefined) {
    const pct = typeof job.progress === "number" && job.progress >= 0 && job.progress <= 100 ? job.progress : null;
    panels.push(h("section", { class: "panel" },
      h("div", { class: "panel-head" }, h("h2", {}, "Progress")),
      pct !== null ? progressBar(pct)
        : h("pre", { class: "payload", id: "progress" }, JSON.stringify(job.progress, null, 2))));
  }
  const logs = job.logs || [];
  panels.push(h("section", { class: "panel" },
    h("div", { class: "panel-head" }, h("h2", {}, "Log"),
      h("span", { class: "muted small" }, logs.length ? "newest " + fmt(logs.length) + " lines" : "")),
    logs.length ? h("pre", { class: "payload log", id: "job-logs" }, logs.join("\n"))
      : h("p", { class: "muted", id: "job-logs" }, "No log lines")));
  if (job.result) {
    const r = job.result;
    panels.push(h("section", { class: "panel" },
      h("div", { class: "panel-head" }, h("h2", {}, "Result"),
        h("span", { class: "muted small" }, r.kind + " · " + fmt(r.size) + " bytes" + (r.truncated ? " · first " + fmt(r.text.length) + " shown" : ""))),
      h("pre", { class: "payload", id: "result", "data-kind": r.kind }, r.text)));
  }
  return panels;
}

// ---- live updates --------------------------------------------------------

// A redraw between a button's mousedown and mouseup would swallow the click:
// while a pointer is down, live updates wait until just after the click.
let pointerDown = false, deferred = null;
document.addEventListener("mousedown", () => { pointerDown = true; }, true);
document.addEventListener("mouseup", () => {
  pointerDown = false;
  if (deferred) { const o = deferred; deferred = null; setTimeout(() => applyOverview(o), 0); }
}, true);

// Did this snapshot change what the open queue or job page shows? A
// refresh or an action may have (the refresh is the fallback for lost
// events); an event-driven one only if the page's queue had events; a
// health reading never (it re-reads no queue).
function touches(previous, o, queue) {
  if (o.trigger === "health") return false;
  if (o.trigger !== "event" || !previous) return true;
  const before = previous.queues.find((x) => x.name === queue);
  const now = o.queues.find((x) => x.name === queue);
  return !before || !now || before.events !== now.events;
}

function applyOverview(o) {
  if (pointerDown) { deferred = o; return; }
  const previous = state.overview;
  state.overview = o;
  $("server").textContent = o.server;
  $("read-only-badge").hidden = !o.read_only;
  $("live").className = "live on";
  $("live-text").textContent = o.live_events ? "live" : "live (sampling)";
  $("live").title = o.live_events ? "live: queue events, and a refresh every " + o.refresh_ms / 1000 + " s"
    : "live: a refresh every " + o.refresh_ms / 1000 + " s (queue events not attached)";
  if (!state.route) return;
  if (state.route.view === "overview") renderOverview();
  else if (touches(previous, o, state.route.queue)) refreshView();
}

function startPolling() {
  if (state.pollTimer) return;
  $("live").className = "live polling";
  $("live-text").textContent = "polling";
  const tick = async () => {
    try { applyOverview(await api("/api/overview")); $("live-text").textContent = "polling"; } catch (_) { $("live").className = "live off"; }
  };
  state.pollTimer = setInterval(tick, (state.overview && state.overview.refresh_ms) || 2000);
}

function startLive() {
  if (!window.EventSource) return startPolling();
  const es = new EventSource("/api/events");
  es.addEventListener("overview", (e) => applyOverview(JSON.parse(e.data)));
  es.onerror = () => { $("live").className = "live off"; $("live-text").textContent = "reconnecting"; };
}

async function start() {
  try {
    applyOverview(await api("/api/overview"));
  } catch (e) {
    $("view").replaceChildren(h("div", { class: "panel error-panel" }, e.message));
    return;
  }
  window.addEventListener("hashchange", onRoute);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("confirm").hidden) $("confirm-cancel").click(); });
  await onRoute();
  startLive();
}

start();
