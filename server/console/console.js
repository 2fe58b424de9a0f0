// The Sluice console: three pages (queries, one query, editor) drawn from
// /console/api/*; no build step, no library.
//
// The page polls the queries list once a second (and, on a query's page, its
// graph) with timers rather than holding an event stream open: a request that
// never ends keeps a page loading for good, and headless chromium's
// --virtual-time-budget, which screenshots wait on, never runs out while one is
// pending.
"use strict";

const page = document.getElementById("page");
const pollEvery = 1000; // ms between snapshots
const historyLength = 60; // snapshots a sparkline shows
const rateHistory = {}; // query id -> recent input rates
const lagHistory = {}; // query id -> recent lag
const storeHistory = {}; // "query/store" -> recent bytes and entries
let latest = [];
let loaded = false;
let lastGraph = null;

// What the two lateness counts mean; they differ, so every place showing
// one says which it is.
const droppedHelp = "Records a window (or a windowed join) turned away because every window they belong to had " +
  "already closed: window end + grace ≤ stream time. They are not in any result (a LATE_TOPIC gets them).";
const beyondHelp = "Records read more than the grace period behind their partition's stream time, measured at the " +
  "source. Every dropped record is among them, but such a record still counts when its window had not closed " +
  "(it ends after the record's time), so this is at least the number dropped, often more.";

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function push(h, v) {
  h.push(v);
  if (h.length > historyLength) h.shift();
}

function sparkline(values, color = "#2f6fd1") {
  const w = 96, h = 22, max = Math.max(1, ...values);
  if (values.length < 2) return `<svg class="spark" width="${w}" height="${h}"></svg>`;
  const pts = values.map((v, i) => `${(i * w / (values.length - 1)).toFixed(1)},${(h - 1 - v * (h - 2) / max).toFixed(1)}`);
  return `<svg class="spark" width="${w}" height="${h}"><polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts.join(" ")}"/></svg>`;
}

// humanNumber writes a count with thousands grouped.
function humanNumber(n) {
  return Number(n).toLocaleString("en-US");
}

function humanBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
}

// timeUnits are the units a duration is written in, largest first.
const timeUnits = [["h", 3600000], ["min", 60000], ["s", 1000], ["ms", 1]];

// humanTime writes a duration in ms in the largest unit it fills, with at
// most one decimal: 13000 → "13 s", 90000 → "1.5 min".
function humanTime(ms) {
  for (const [unit, size] of timeUnits) {
    if (ms >= size || unit === "ms") {
      const v = ms / size;
      return `${parseFloat(v.toFixed(v < 10 ? 1 : 0))} ${unit}`;
    }
  }
}

// timeTicks picks round tick values (ms) for an axis from 0 to at least
// max: the smallest step of 1, 2, 5 × its unit (or 15 and 30 of s and min)
// giving at most six intervals.
function timeTicks(max) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000,
    600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
  const step = steps.find(s => max / s <= 6) || Math.ceil(max / 6 / 86400000) * 86400000;
  // The last tick is the first at or beyond max, so the axis covers it.
  const ticks = [0];
  while (ticks[ticks.length - 1] < max) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

// hostPort is what a person knows an instance by: its advertised URL
// without the scheme.
function hostPort(url) {
  return url ? url.replace(/^[a-z]+:\/\//i, "").replace(/\/$/, "") : "";
}

async function ksql(statement) {
  const r = await fetch("/ksql", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({ksql: statement, streamsProperties: {}})});
  return r.text();
}

// poll takes a snapshot of the queries (and of the shown query's graph),
// redraws, and comes back after pollEvery.
async function poll() {
  try {
    const r = await fetch("/console/api/queries");
    if (!r.ok) throw new Error(`queries: HTTP ${r.status}`);
    const qs = await r.json();
    const now = Date.now();
    // Rates come measured by the server: this page's clock may be virtual.
    for (const q of qs) {
      push(rateHistory[q.id] || (rateHistory[q.id] = []), q.inputRate);
      push(lagHistory[q.id] || (lagHistory[q.id] = []), q.lag);
      for (const st of q.stores) {
        const k = q.id + "/" + st.name, sh = storeHistory[k] || (storeHistory[k] = {bytes: [], entries: []});
        push(sh.bytes, st.bytes); push(sh.entries, st.entries);
      }
    }
    latest = qs;
    loaded = true;
    setStatus(`updated ${new Date(now).toLocaleTimeString("en-GB")}`, false);
    await route(false);
  } catch (err) {
    setStatus(`not updating: ${err.message}`, true);
  }
  setTimeout(poll, pollEvery);
}

function setStatus(text, bad) {
  const s = document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.classList.toggle("bad", bad);
}

function stateBadge(state) {
  return `<span class="badge state-${esc(state)}">${esc(state)}</span>`;
}

// actions are the buttons that apply to a query in its state: PAUSE while
// it runs, RESUME once paused, neither after an error; TERMINATE always.
function actions(q) {
  const b = [];
  if (q.state === "PAUSED") b.push(`<button data-act="RESUME">Resume</button>`);
  else if (q.state !== "ERROR") b.push(`<button data-act="PAUSE">Pause</button>`);
  b.push(`<button data-act="TERMINATE" class="danger">Terminate</button>`);
  return b.join(" ");
}

function bindActions() {
  for (const b of page.querySelectorAll("button[data-act]")) {
    b.onclick = async () => {
      const id = b.closest("[data-query]").dataset.query;
      if (b.dataset.act === "TERMINATE" && !confirm(`Terminate ${id}? Its state and internal topics are deleted.`)) return;
      b.disabled = true;
      await ksql(`${b.dataset.act} ${id};`);
    };
  }
}

function instances(q) {
  if (!q.owners.length) return `<span class="muted">this instance</span>`;
  return q.owners.map(o => `<span class="chip${o.alive ? "" : " stale"}${o.self ? " self" : ""}" title="instance ${esc(o.instance)}${o.alive ? "" : " (no heartbeat: stale)"}\n${esc(o.partitions.join("\n"))}">${esc(hostPort(o.url) || o.instance)}</span>`).join(" ");
}

function errorCount(q) {
  return Object.values(q.errors).reduce((a, b) => a + b, 0);
}

function queriesPage() {
  if (!loaded) { page.innerHTML = `<p class="muted">Loading…</p>`; return; }
  if (!latest.length) {
    page.innerHTML = `<h1>Queries</h1><div class="card empty">No persistent query runs yet. Start one from the <a href="#/editor">editor</a>, e.g. <code>CREATE TABLE … AS SELECT …</code>.</div>`;
    return;
  }
  const rows = latest.map(q => `<tr data-query="${esc(q.id)}">
    <td><a class="qid" href="#/query/${encodeURIComponent(q.id)}">${esc(q.id)}</a>
      <div class="muted small">${esc(q.sources.join(", "))} → ${esc(q.sinks.join(", ") || "—")}</div></td>
    <td data-col="state">${stateBadge(q.state)}${q.error ? `<div class="error small">${esc(q.error)}</div>` : ""}</td>
    <td class="num" data-col="rate">${q.inputRate.toFixed(1)}</td><td>${sparkline(rateHistory[q.id] || [])}</td>
    <td class="num" data-col="lag">${humanNumber(q.lag)}</td><td>${sparkline(lagHistory[q.id] || [], "#c0841a")}</td>
    <td class="num" data-col="dropped" title="${esc(droppedHelp)}">${humanNumber(q.lateDropped)}</td>
    <td class="num" data-col="errors">${humanNumber(errorCount(q))}</td>
    <td data-col="restore">${q.restores.map(r => `<div class="small">${esc(r.store)}/${r.partition}</div><div class="bar"><div style="width:${r.total ? 100 * r.done / r.total : 0}%"></div></div>`).join("")}</td>
    <td data-col="instances">${instances(q)}</td>
    <td class="actions">${actions(q)}</td>
  </tr>`).join("");
  page.innerHTML = `<h1>Queries</h1><div class="card flush"><table id="queries"><thead><tr><th>Query</th><th>State</th>
    <th class="num">Input/s</th><th></th><th class="num">Lag</th><th></th>
    <th class="num" title="${esc(droppedHelp)}">Dropped late <span class="help">?</span></th><th class="num">Errors</th>
    <th>Restore</th><th>Instances</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
  bindActions();
}

let shownQuery = null;
async function queryPage(id) {
  const q = latest.find(q => q.id === id);
  if (!q) { page.innerHTML = `<h1>${esc(id)}</h1><p class="muted">${loaded ? "No such query (yet)." : "Loading…"}</p>`; shownQuery = null; return; }
  const tile = (label, value, extra = "", title = "") =>
    `<div class="tile"${title ? ` title="${esc(title)}"` : ""}><div class="label">${label}</div><div class="value">${value}</div>${extra}</div>`;
  const head = `<div class="title" data-query="${esc(q.id)}"><h1 id="query-id">${esc(q.id)}</h1>${stateBadge(q.state)}
      <span class="spacer"></span>${actions(q)}</div>
    ${q.error ? `<p class="error">${esc(q.error)}</p>` : ""}
    <p class="statement"><code>${esc(q.statement)}</code></p>
    <div class="tiles">
      ${tile("Records in", humanNumber(q.recordsIn))}
      ${tile("Records out", humanNumber(q.recordsOut))}
      ${tile("Input/s", q.inputRate.toFixed(1), sparkline(rateHistory[q.id] || []))}
      ${tile("Lag", humanNumber(q.lag), sparkline(lagHistory[q.id] || [], "#c0841a"))}
      ${tile(`Dropped late <span class="help">?</span>`, `<span id="dropped">${humanNumber(q.lateDropped)}</span>`, `<div class="small muted">window closed</div>`, droppedHelp)}
      ${tile("Errors", humanNumber(errorCount(q)))}
      ${tile("Instances", instances(q))}
    </div>`;
  const stores = q.stores.length ? `<table id="stores"><thead><tr><th>Store</th><th class="num">Size</th><th></th><th class="num">Held</th><th></th></tr></thead><tbody>${q.stores.map(st => {
    const sh = storeHistory[q.id + "/" + st.name] || {bytes: [], entries: []};
    return `<tr><td>${esc(st.name)}</td><td class="num">${humanBytes(st.bytes)}</td><td>${sparkline(sh.bytes)}</td><td class="num">${humanNumber(st.entries)} ${st.windowed ? "windows" : "keys"}</td><td>${sparkline(sh.entries)}</td></tr>`;
  }).join("")}</tbody></table>` : `<p class="muted">Stateless: no store.</p>`;
  if (shownQuery !== id || !page.querySelector("#graph")) {
    shownQuery = id;
    lastGraph = null;
    page.innerHTML = `<div id="head"></div>
      <section class="card"><h2>Topology</h2><div id="warnings"></div><div id="graph"></div></section>
      <div class="columns"><section class="card"><h2>State</h2><div id="state"></div></section>
      <section class="card" id="hotkeys-card" hidden><h2>Hot keys</h2><div id="hotkeys"></div></section></div>
      <section class="card" id="lateness-card" hidden><h2>Lateness</h2><div id="lateness"></div></section>`;
  }
  page.querySelector("#head").innerHTML = head;
  page.querySelector("#state").innerHTML = stores;
  bindActions();
  let g;
  try {
    const r = await fetch("/console/api/query/" + encodeURIComponent(id));
    if (!r.ok) return;
    g = await r.json();
  } catch (err) {
    return;
  }
  if (shownQuery !== id) return;
  page.querySelector("#warnings").innerHTML = g.warnings.map(w => `<p class="warning">${esc(w)}</p>`).join("");
  // The layout depends only on the nodes' labels and edges: redraw it only
  // when they change, and otherwise just the numbers in it.
  const shape = JSON.stringify([g.nodes.map(n => n.label), g.edges]);
  if (lastGraph !== shape) {
    lastGraph = shape;
    page.querySelector("#graph").innerHTML = graphSVG(g);
  }
  g.nodes.forEach((n, i) => {
    const el = page.querySelector(`#topology [data-node="${i}"] .stat`);
    if (el) el.textContent = nodeStat(n);
  });
  // The inputs a window's grace applies to; without a window, every input
  // measured.
  const windowedInputs = g.lateness.filter(l => l.graceMs >= 0);
  const shownLateness = windowedInputs.length ? windowedInputs : g.lateness.filter(l => l.count > 0);
  page.querySelector("#lateness-card").hidden = !shownLateness.length;
  page.querySelector("#lateness").innerHTML = (windowedInputs.length ? `<p class="lateness-summary"><span title="${esc(droppedHelp)}">Dropped late by the query:
    <b>${humanNumber(q.lateDropped)}</b> <span class="help">?</span></span><br><span class="small muted">“Later than the grace” (below)
    counts records more than the grace behind stream time when read; “dropped late” only those whose every window had
    closed. The first is at least the second: a record that late still counts in a window that ends after it.</span></p>` : "") +
    shownLateness.map(latenessView).join("");
  // A task that has read nothing has no keys to show.
  const hot = g.hotKeys.filter(h => h.keys.length);
  page.querySelector("#hotkeys-card").hidden = !hot.length;
  page.querySelector("#hotkeys").innerHTML = hot.length ? `<table><thead><tr><th>Partition</th><th class="num">Records</th><th>Busiest keys</th></tr></thead><tbody>${hot.map(h =>
    `<tr class="hot"><td>${esc(h.topic)}/${h.partition}</td><td class="num">${humanNumber(h.records)}</td><td>${h.keys.map(k =>
      `<span class="chip">${esc(k.key)} <b>${humanNumber(k.count)}</b></span>`).join(" ")}</td></tr>`).join("")}</tbody></table>` : "";
}

function nodeStat(n) {
  if (n.kind !== "operator") return n.kind;
  return `${n.kind} · ${humanNumber(n.rows)} rows · ${n.rate.toFixed(1)}/s`;
}

// measure gives a string's width in px in the graph's label font.
const measureCtx = document.createElement("canvas").getContext("2d");
function measure(text, font) {
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

const labelFont = "12px system-ui, sans-serif";
const statFont = "11px system-ui, sans-serif";

// wrap breaks a label into lines no wider than width: at spaces, and a
// word too long for a line (a topic name) after its - _ . characters or,
// failing those, anywhere.
function wrap(text, width) {
  const pieces = [];
  for (const word of text.split(" ")) {
    if (measure(word, labelFont) <= width) { pieces.push(word); continue; }
    let rest = word;
    while (rest && measure(rest, labelFont) > width) {
      let cut = rest.length;
      while (cut > 1 && measure(rest.slice(0, cut), labelFont) > width) cut--;
      const soft = Math.max(rest.lastIndexOf("-", cut - 1), rest.lastIndexOf("_", cut - 1), rest.lastIndexOf(".", cut - 1));
      if (soft > cut / 3) cut = soft + 1;
      pieces.push(rest.slice(0, cut) + "\u0000"); // glued to what follows
      rest = rest.slice(cut);
    }
    if (rest) pieces.push(rest);
  }
  const lines = [];
  let line = "", glued = false;
  for (const p of pieces) {
    const piece = p.replace("\u0000", "");
    const next = line === "" ? piece : line + (glued ? "" : " ") + piece;
    if (line !== "" && measure(next, labelFont) > width) { lines.push(line); line = piece; } else line = next;
    glued = p.endsWith("\u0000");
  }
  if (line) lines.push(line);
  return lines;
}

// layout places a query's graph top to bottom, Sugiyama-style: layers by
// longest path from an input, a point in every layer a long edge crosses,
// each layer ordered by the mean position of its predecessors (a
// sub-topology's nodes kept together), then nodes placed under their
// predecessors. A store sits in the layer of the operator that owns it,
// right beside it.
function layout(g) {
  const maxText = 300, pad = 10, lineH = 15, gapX = 28, gapY = 44;
  const nodes = g.nodes.map((n, i) => {
    const lines = wrap(n.label, maxText);
    const w = Math.max(150, measure(nodeStat(Object.assign({}, n, {rows: 1e9, rate: 9999})), statFont),
      ...lines.map(l => measure(l, labelFont))) + 2 * pad;
    return {i, n, lines, w, h: 2 * pad + 14 + lines.length * lineH, preds: [], succs: [], layer: 0, x: 0, y: 0};
  });
  const flow = g.edges.filter(([, b]) => g.nodes[b].kind !== "store");
  const storeEdges = g.edges.filter(([, b]) => g.nodes[b].kind === "store");
  for (const [a, b] of flow) { nodes[a].succs.push(b); nodes[b].preds.push(a); }
  // Longest path: a node's layer is one below its deepest predecessor;
  // then an input moves down to just above the first node reading it, so a
  // join's second input enters beside the join, not at the top.
  for (let pass = 0; pass <= nodes.length; pass++)
    for (const [a, b] of flow) nodes[b].layer = Math.max(nodes[b].layer, nodes[a].layer + 1);
  for (const v of nodes)
    if (!v.preds.length && v.succs.length) v.layer = Math.min(...v.succs.map(b => nodes[b].layer)) - 1;
  const owner = {};
  for (const [a, b] of storeEdges) if (owner[b] === undefined) owner[b] = a;
  for (const v of nodes) if (v.n.kind === "store") v.layer = owner[v.i] !== undefined ? nodes[owner[v.i]].layer : 0;
  // Points where long edges cross a layer.
  const all = nodes.slice(), paths = [];
  for (const [a, b] of flow) {
    const path = [a];
    for (let l = nodes[a].layer + 1; l < nodes[b].layer; l++) {
      const d = {i: all.length, dummy: true, w: 12, h: 0, layer: l, preds: [path[path.length - 1]], succs: [], sub: g.nodes[a].sub};
      all.push(d);
      path.push(d.i);
    }
    path.push(b);
    paths.push(path);
  }
  const predsOf = v => v.dummy ? v.preds : paths.filter(p => p[p.length - 1] === v.i).map(p => p[p.length - 2]);
  // A repartition topic is the input of the sub-topology reading it, and
  // is drawn in that sub-topology's group.
  for (const v of nodes) v.group = v.n.kind === "repartition" && v.succs.length ? g.nodes[v.succs[0]].sub : v.n.sub;
  const sub = v => v.dummy ? v.sub : v.group;
  const layers = [];
  for (const v of all) (layers[v.layer] || (layers[v.layer] = [])).push(v);
  for (let l = 0; l < layers.length; l++) if (!layers[l]) layers[l] = [];
  // Order each layer: stores after their owner; others by the mean order
  // of their predecessors, grouped by sub-topology.
  layers.forEach((layer, l) => {
    layer.forEach((v, k) => { v.order = k; });
    if (l > 0) {
      for (const v of layer) {
        const ps = predsOf(v);
        v.bary = ps.length ? ps.reduce((s, p) => s + all[p].order, 0) / ps.length : v.order;
      }
      const subBary = {};
      for (const v of layer) (subBary[sub(v)] || (subBary[sub(v)] = [])).push(v.bary);
      const mean = s => subBary[s].reduce((a, b) => a + b, 0) / subBary[s].length;
      const flowNodes = layer.filter(v => v.dummy || v.n.kind !== "store");
      flowNodes.sort((a, b) => (sub(a) === sub(b) || sub(a) < 0 || sub(b) < 0 ? 0 : mean(sub(a)) - mean(sub(b))) || a.bary - b.bary);
      layer.length = 0;
      for (const v of flowNodes) {
        layer.push(v);
        for (const s of nodes) if (s.n.kind === "store" && owner[s.i] === v.i) layer.push(s);
      }
    } else {
      const flowNodes = layer.filter(v => v.dummy || v.n.kind !== "store");
      const rest = layer.filter(v => !v.dummy && v.n.kind === "store");
      layer.length = 0;
      for (const v of flowNodes) {
        layer.push(v);
        for (const s of rest) if (owner[s.i] === v.i) layer.push(s);
      }
      for (const s of rest) if (!layer.includes(s)) layer.push(s);
    }
    layer.forEach((v, k) => { v.order = k; });
  });
  // Coordinates: each node centred under its predecessors where there is
  // room, pushed right of its left neighbour otherwise.
  let y = 30;
  for (const layer of layers) {
    const h = Math.max(0, ...layer.map(v => v.h));
    let right = 20 - gapX;
    for (const v of layer) {
      const ps = predsOf(v).map(p => all[p]);
      const want = ps.length ? ps.reduce((s, p) => s + p.x + p.w / 2, 0) / ps.length - v.w / 2 : right + gapX;
      v.x = Math.max(want, right + (v.dummy ? gapX / 2 : gapX));
      right = v.x + v.w;
      v.y = y;
      v.rowH = h;
    }
    y += h + gapY;
  }
  const minX = Math.min(...all.map(v => v.x));
  for (const v of all) v.x += 20 - minX;
  return {nodes, all, paths, storeEdges, width: Math.max(...all.map(v => v.x + v.w)) + 20, height: y - gapY + 20};
}

// graphSVG draws the layout: sub-topologies as shaded groups, edges
// through the points of their long spans, stores joined to their operator
// by a dashed edge.
function graphSVG(g) {
  const L = layout(g);
  const fill = {source: "#e3eefc", operator: "#ffffff", repartition: "#fdf0d8", sink: "#fbe3ec", store: "#eef0f3"};
  const stroke = {source: "#6c93c9", operator: "#8a9bb0", repartition: "#d39c3b", sink: "#c9708f", store: "#8b95a3"};
  const parts = [];
  // Groups: the box around each sub-topology's sources and operators.
  const subs = {};
  for (const v of L.nodes) if (v.group >= 0) (subs[v.group] || (subs[v.group] = [])).push(v);
  const groups = Object.keys(subs).length > 1;
  for (const [s, vs] of Object.entries(subs)) {
    const x0 = Math.min(...vs.map(v => v.x)) - 12, y0 = Math.min(...vs.map(v => v.y)) - 22;
    const x1 = Math.max(...vs.map(v => v.x + v.w)) + 12, y1 = Math.max(...vs.map(v => v.y + v.h)) + 10;
    parts.push(`<g class="group"><rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" rx="10" fill="${groups ? "#f4f7fb" : "#f7f9fb"}" stroke="#d5dde8"/>
      <text x="${x0 + 10}" y="${y0 + 15}" class="group-label">sub-topology ${esc(s)}</text></g>`);
  }
  const cx = v => v.x + v.w / 2;
  for (const path of L.paths) {
    const pts = path.map(i => L.all[i]);
    let d = `M${cx(pts[0])},${pts[0].y + pts[0].h}`;
    for (let k = 1; k < pts.length; k++) {
      const a = pts[k - 1], b = pts[k];
      const ay = a.dummy ? a.y + a.rowH : a.y + a.h, by = b.y;
      if (a.dummy) d += ` L${cx(a)},${ay}`;
      const my = (ay + by) / 2;
      d += ` C${cx(a)},${my} ${cx(b)},${my} ${cx(b)},${by}`;
      if (b.dummy) d += ` L${cx(b)},${b.y + b.rowH}`;
    }
    parts.push(`<path d="${d}" fill="none" stroke="#7d8b9c" stroke-width="1.4" marker-end="url(#arrow)"/>`);
  }
  for (const [a, b] of L.storeEdges) {
    const o = L.nodes[a], s = L.nodes[b];
    const sameRow = o.layer === s.layer && s.x > o.x;
    const d = sameRow ? `M${o.x + o.w},${o.y + o.h / 2} L${s.x},${s.y + s.h / 2}`
      : `M${cx(o)},${o.y + o.h} C${cx(o)},${s.y} ${cx(s)},${o.y + o.h} ${cx(s)},${s.y}`;
    parts.push(`<path class="store-edge" d="${d}" fill="none" stroke="#8b95a3" stroke-width="1.4" stroke-dasharray="5 3" marker-start="url(#dot)" marker-end="url(#dot)"/>`);
  }
  for (const v of L.nodes) {
    const n = v.n;
    parts.push(`<g class="node node-${n.kind}" data-node="${v.i}"><title>${esc(n.label)}</title>
      <rect x="${v.x}" y="${v.y}" width="${v.w}" height="${v.h}" rx="7" fill="${fill[n.kind]}" stroke="${stroke[n.kind]}"${n.kind === "store" ? ` stroke-dasharray="4 2"` : ""}/>
      <text x="${v.x + 10}" y="${v.y + 21}" class="stat">${esc(nodeStat(n))}</text>
      <text class="label">${v.lines.map((line, k) => `<tspan x="${v.x + 10}" y="${v.y + 39 + k * 15}">${esc(line)}</tspan>`).join("")}</text></g>`);
  }
  return `<svg id="topology" width="${L.width}" height="${L.height}" viewBox="0 0 ${L.width} ${L.height}"><defs>
    <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#7d8b9c"/></marker>
    <marker id="dot" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="5" markerHeight="5"><circle cx="5" cy="5" r="4" fill="#8b95a3"/></marker>
    </defs>${parts.join("")}</svg>`;
}

// latenessView plots how late a source's records came (x: time behind
// stream time) against the share of records at most that late (y), with
// the grace in force and the graces that would keep 99% and 99.9% marked,
// and says how many were later than the grace (the page says beside it how
// that differs from the records the query dropped).
function latenessView(l) {
  const W = 640, H = 200, L = 48, R = 16, T = 14, B = 34;
  const maxX = Math.max(1, l.max, l.graceMs, l.grace999);
  const ticks = timeTicks(maxX), top = ticks[ticks.length - 1];
  const x = v => L + v * (W - L - R) / top, y = p => H - B - p * (H - B - T);
  const pts = l.quantiles.map(([p, v]) => `${x(v).toFixed(1)},${y(p).toFixed(1)}`).join(" ");
  const marks = [];
  if (l.graceMs >= 0) marks.push([l.graceMs, "#c0392b", "grace " + humanTime(l.graceMs)]);
  if (l.count > 0) marks.push([l.grace99, "#1e8449", "99% within " + humanTime(l.grace99)], [l.grace999, "#b9770e", "99.9% within " + humanTime(l.grace999)]);
  const markSVG = marks.map(([v, color, text], k) => {
    const right = x(v) > W - 150; // label left of a mark near the right edge
    return `<line x1="${x(v)}" y1="${T}" x2="${x(v)}" y2="${H - B}" stroke="${color}" stroke-dasharray="4 3"/>
      <text x="${x(v) + (right ? -5 : 5)}" y="${T + 12 + 14 * k}" text-anchor="${right ? "end" : "start"}" class="mark" fill="${color}">${esc(text)}</text>`;
  }).join("");
  const axis = ticks.map(v => `<line x1="${x(v)}" y1="${H - B}" x2="${x(v)}" y2="${H - B + 4}" stroke="#555"/>
    <text x="${x(v)}" y="${H - B + 17}" text-anchor="middle" class="tick">${v === 0 ? "0" : esc(humanTime(v))}</text>`).join("") +
    [0, 0.5, 1].map(p => `<line x1="${L}" y1="${y(p)}" x2="${W - R}" y2="${y(p)}" stroke="#e6e9ee"/>
    <text x="${L - 6}" y="${y(p) + 4}" text-anchor="end" class="tick">${p * 100}%</text>`).join("");
  const facts = [`<b>${humanNumber(l.count)}</b> records read`];
  if (l.count > 0) facts.push(`the latest <b>${esc(humanTime(l.max))}</b> behind stream time`);
  if (l.graceMs >= 0) facts.push(`<span title="${esc(beyondHelp)}"><b class="beyond">${humanNumber(l.aboveGrace)}</b> later than the grace (${esc(humanTime(l.graceMs))}) <span class="help">?</span></span>`);
  return `<div class="lateness"><div class="lateness-head"><span class="topic">${esc(l.topic)}</span></div>
    <div class="lateness-body"><svg class="lateness-plot" width="${W}" height="${H}">
    ${axis}<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#555"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#555"/>
    <text x="${(L + W - R) / 2}" y="${H - 3}" text-anchor="middle" class="tick">time behind stream time →</text>
    ${pts ? `<polyline fill="none" stroke="#2f6fd1" stroke-width="2" points="${pts}"/>` : ""}${markSVG}
    </svg><div class="lateness-facts"><p>${facts.join("<br>")}</p></div></div></div>`;
}

let editorBuilt = false;
// editorPage shows the editor; a link #/editor?sql=… fills it in, and runs
// it at once when it is a SELECT (which changes nothing), so a query can be
// shared as a link.
async function editorPage(params) {
  if (editorBuilt && page.querySelector("#sql")) return;
  editorBuilt = true;
  const cat = await (await fetch("/console/api/catalog")).json();
  page.innerHTML = `<h1>Editor</h1><div class="editor"><div class="card">
    <textarea id="sql" spellcheck="false" placeholder="SELECT * FROM clicks EMIT CHANGES;"></textarea>
    <div class="toolbar"><button id="run" class="primary">Run</button><span class="muted small">A SELECT streams its rows from the earliest offset; anything else goes to /ksql.</span></div>
    <div class="rows-wrap"><table id="rows"></table></div><pre id="out" hidden></pre></div>
    <aside id="catalog" class="card"><h2>Catalog</h2>${cat.length ? cat.map(s => `<h4><span class="kind">${esc(s.kind)}</span> ${esc(s.name)}</h4><ul>${s.columns.map(c => `<li>${esc(c.name)} <span class="muted">${esc(c.type)}</span>${c.key ? ` <span class="key">KEY</span>` : ""}</li>`).join("")}</ul>`).join("") : `<p class="muted">No streams or tables yet.</p>`}</aside></div>`;
  page.querySelector("#run").onclick = run;
  const sql = params.get("sql");
  if (sql) {
    page.querySelector("#sql").value = sql;
    if (/^\s*select\b/i.test(sql)) await run();
  }
}

async function run() {
  const sql = page.querySelector("#sql").value.trim();
  const rows = page.querySelector("#rows"), out = page.querySelector("#out");
  rows.innerHTML = ""; out.textContent = ""; out.hidden = true;
  const say = text => { out.hidden = false; out.textContent += text; };
  if (!/^select\b/i.test(sql)) { say(await ksql(sql)); return; }
  const r = await fetch("/query-stream", {method: "POST", headers: {"Content-Type": "application/vnd.ksqlapi.delimited.v1"},
    body: JSON.stringify({sql: sql, properties: {"auto.offset.reset": "earliest"}})});
  const reader = r.body.getReader(), dec = new TextDecoder();
  let buf = "", header = true;
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buf += dec.decode(value, {stream: true});
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim(); buf = buf.slice(nl + 1);
      if (!line) continue;
      const v = JSON.parse(line);
      if (header) { header = false; if (v.columnNames) { rows.innerHTML = "<thead><tr>" + v.columnNames.map(c => `<th>${esc(c)}</th>`).join("") + "</tr></thead><tbody></tbody>"; continue; } }
      if (Array.isArray(v)) (rows.tBodies[0] || rows).insertAdjacentHTML("beforeend", "<tr class=\"row\">" + v.map(c => `<td>${esc(JSON.stringify(c))}</td>`).join("") + "</tr>");
      else say(line + "\n");
    }
  }
}

async function route(navigated) {
  const h = location.hash || "#/queries";
  for (const a of document.querySelectorAll("header nav a")) a.classList.toggle("active", h.startsWith(a.getAttribute("href")) || (h.startsWith("#/query/") && a.id === "nav-queries"));
  if (h.startsWith("#/query/")) await queryPage(decodeURIComponent(h.slice(8)));
  else if (h === "#/editor" || h.startsWith("#/editor?")) {
    if (navigated) editorBuilt = false;
    await editorPage(new URLSearchParams(h.slice("#/editor".length)));
  }
  else queriesPage();
}

window.addEventListener("hashchange", () => route(true));
route(true);
poll();
