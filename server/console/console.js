// The Sluice console: three pages (queries, one query, editor) drawn from
// /console/api/* and one server-sent event stream; no build step.
"use strict";

const page = document.getElementById("page");
const history = {}; // query id -> recent input rates, for sparklines
let latest = [];
const storeHistory = {}; // "query/store" -> recent bytes and entries
const lagHistory = {}; // query id -> recent lag, for sparklines
const opPrev = {}; // query id -> {t, rows} of the last graph fetched, for operator rates
let events = null;

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function sparkline(values) {
  const w = 100, h = 20, max = Math.max(1, ...values);
  const pts = values.map((v, i) => `${(i * w / Math.max(1, values.length - 1)).toFixed(1)},${(h - v * h / max).toFixed(1)}`);
  return `<svg class="spark" width="${w}" height="${h}"><polyline fill="none" stroke="#36c" points="${pts.join(" ")}"/></svg>`;
}

function listen() {
  if (events) return;
  events = new EventSource("/console/api/events");
  events.addEventListener("queries", ev => {
    latest = JSON.parse(ev.data);
    for (const q of latest) {
      const h = history[q.id] || (history[q.id] = []);
      h.push(q.inputRate);
      if (h.length > 60) h.shift();
      const lh = lagHistory[q.id] || (lagHistory[q.id] = []);
      lh.push(q.lag);
      if (lh.length > 60) lh.shift();
      for (const st of q.stores) {
        const k = q.id + "/" + st.name, sh = storeHistory[k] || (storeHistory[k] = {bytes: [], entries: []});
        sh.bytes.push(st.bytes); sh.entries.push(st.entries);
        if (sh.bytes.length > 60) { sh.bytes.shift(); sh.entries.shift(); }
      }
    }
    route(false);
  });
}

async function ksql(statement) {
  const r = await fetch("/ksql", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({ksql: statement, streamsProperties: {}})});
  return r.text();
}

function queriesPage() {
  const rows = latest.map(q => `<tr data-query="${esc(q.id)}">
    <td><a href="#/query/${encodeURIComponent(q.id)}">${esc(q.id)}</a></td>
    <td class="state-${esc(q.state)}">${esc(q.state)}${q.error ? "<br>" + esc(q.error) : ""}</td>
    <td class="num">${q.inputRate.toFixed(1)}</td><td>${sparkline(history[q.id] || [])}</td>
    <td class="num">${q.lag}</td><td>${sparkline(lagHistory[q.id] || [])}</td><td class="num">${q.lateDropped}</td>
    <td class="num">${Object.values(q.errors).reduce((a, b) => a + b, 0)}</td>
    <td>${q.restores.map(r => `${esc(r.store)}/${r.partition} <div class="bar"><div style="width:${r.total ? 100 * r.done / r.total : 0}%"></div></div>`).join("")}</td>
    <td>${q.owners.map(o => esc(o.instance)).join(", ")}</td>
    <td><button data-act="TERMINATE">Terminate</button> <button data-act="PAUSE">Pause</button> <button data-act="RESUME">Resume</button></td>
  </tr>`).join("");
  page.innerHTML = `<h2>Queries</h2><table id="queries"><tr><th>Query</th><th>State</th><th>Input/s</th><th></th>
    <th>Lag</th><th></th><th>Late</th><th>Errors</th><th>Restore</th><th>Instances</th><th></th></tr>${rows}</table>`;
  for (const b of page.querySelectorAll("button[data-act]")) {
    b.onclick = () => ksql(`${b.dataset.act} ${b.closest("tr").dataset.query};`);
  }
}

let shownQuery = null;
function queryPage(id) {
  const q = latest.find(q => q.id === id);
  if (!q) { page.innerHTML = `<h2>${esc(id)}</h2><p>No such query (yet).</p>`; return; }
  const head = `<h2 id="query-id">${esc(q.id)}</h2><p class="state-${esc(q.state)}">${esc(q.state)}</p>
    <p>Records in ${q.recordsIn}, out ${q.recordsOut}, late dropped ${q.lateDropped}, lag ${q.lag};
    input/s ${sparkline(history[q.id] || [])} lag ${sparkline(lagHistory[q.id] || [])}</p>
    <h3>State</h3><table id="stores"><tr><th>Store</th><th>Bytes</th><th></th><th>${"Keys / windows"}</th><th></th></tr>${q.stores.map(st => {
      const sh = storeHistory[q.id + "/" + st.name] || {bytes: [], entries: []};
      return `<tr><td>${esc(st.name)}</td><td class="num">${st.bytes}</td><td>${sparkline(sh.bytes)}</td><td class="num">${st.entries} ${st.windowed ? "windows" : "keys"}</td><td>${sparkline(sh.entries)}</td></tr>`;
    }).join("")}</table>`;
  if (shownQuery !== id || !page.querySelector("#graph")) {
    shownQuery = id;
    page.innerHTML = `<div id="head">${head}</div><h3>Topology</h3><div id="graph"></div><h3>Lateness</h3><div id="lateness"></div><h3>Hot keys</h3><div id="hotkeys"></div>`;
  } else {
    page.querySelector("#head").innerHTML = head;
  }
  fetch("/console/api/query/" + encodeURIComponent(id)).then(r => r.json()).then(g => {
    // Each operator's records/s: its rows since the previous fetch.
    const now = Date.now(), prev = opPrev[id];
    g.nodes.forEach((n, i) => {
      n.rate = prev && prev.rows[i] !== undefined && now > prev.t ? Math.max(0, (n.rows - prev.rows[i]) * 1000 / (now - prev.t)) : null;
    });
    opPrev[id] = {t: now, rows: g.nodes.map(n => n.rows)};
    page.querySelector("#graph").innerHTML = g.warnings.map(w => `<p class="warning">${esc(w)}</p>`).join("") + graphSVG(g);
    page.querySelector("#lateness").innerHTML = g.lateness.map(latenessSVG).join("");
    page.querySelector("#hotkeys").innerHTML = g.hotKeys.map(h => `<p>${esc(h.topic)}/${h.partition} (${h.records} records): ` +
      h.keys.map(k => `${esc(k.key)} ${k.count}`).join(", ") + "</p>").join("");
  });
}

// graphSVG lays the nodes out in columns along the edges (longest path
// from a source), one row per node in a column.
function graphSVG(g) {
  const depth = g.nodes.map(() => 0);
  for (let pass = 0; pass < g.nodes.length; pass++)
    for (const [a, b] of g.edges) depth[b] = Math.max(depth[b], depth[a] + 1);
  const rows = {}, pos = g.nodes.map((n, i) => {
    const d = n.kind === "store" ? 0 : depth[i];
    const col = n.kind === "store" ? "s" : d;
    rows[col] = (rows[col] || 0) + 1;
    return n.kind === "store" ? null : {x: 20 + d * 205, y: 20 + (rows[col] - 1) * 70};
  });
  const maxX = Math.max(...pos.filter(p => p).map(p => p.x)) + 205;
  let storeY = Math.max(...pos.filter(p => p).map(p => p.y)) + 90;
  const w = 185, h = 44;
  const parts = [];
  for (const [a, b] of g.edges)
    if (pos[a] && pos[b]) parts.push(`<line x1="${pos[a].x + w}" y1="${pos[a].y + h / 2}" x2="${pos[b].x}" y2="${pos[b].y + h / 2}" stroke="#888" marker-end="url(#arrow)"/>`);
  g.nodes.forEach((n, i) => {
    let p = pos[i];
    if (!p) { p = pos[i] = {x: 20, y: storeY}; storeY += 56; }
    const fill = {source: "#def", operator: "#eef6e8", repartition: "#fec", sink: "#fde", store: "#eee"}[n.kind];
    const label = n.label.length > 29 ? n.label.slice(0, 28) + "…" : n.label;
    parts.push(`<g class="node node-${n.kind}"><title>${esc(n.label)}</title><rect x="${p.x}" y="${p.y}" width="${n.kind === "store" ? 2 * w : w}" height="${h}" rx="6" fill="${fill}" stroke="#567"/>
      <text x="${p.x + 8}" y="${p.y + 17}" font-size="11" fill="#555">${esc(n.kind)}${n.kind === "operator" ? ` · <tspan class="op-rows">${n.rows}</tspan> rows${n.rate !== null ? ` · ${n.rate.toFixed(1)}/s` : ""}` : ""}</text>
      <text x="${p.x + 8}" y="${p.y + 34}" font-size="12">${esc(label)}</text></g>`);
  });
  return `<svg id="topology" width="${maxX}" height="${storeY + 10}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0L10,5L0,10z" fill="#888"/></marker></defs>${parts.join("")}</svg>`;
}

// latenessSVG plots how late records of a source came (ms, x) against the
// share of records at most that late (y), with the grace in force and the
// graces that would keep 99% and 99.9% marked.
function latenessSVG(l) {
  const W = 520, H = 180, L = 50, B = 30;
  const maxX = Math.max(1, l.max, l.graceMs, l.grace999);
  const x = v => L + v * (W - L - 10) / maxX, y = p => H - B - p * (H - B - 10);
  const pts = l.quantiles.map(([p, v]) => `${x(v).toFixed(1)},${y(p).toFixed(1)}`).join(" ");
  const mark = (v, color, text, dy) => {
    const right = x(v) > W - 120; // label left of a mark near the right edge
    return `<line x1="${x(v)}" y1="10" x2="${x(v)}" y2="${H - B}" stroke="${color}" stroke-dasharray="4 3"/><text x="${x(v) + (right ? -4 : 4)}" y="${40 + dy}" text-anchor="${right ? "end" : "start"}" font-size="11" fill="${color}">${text}</text>`;
  };
  return `<div class="lateness"><b>${esc(l.topic)}</b>: ${l.count} records, max ${l.max} ms late, ${l.aboveGrace} beyond grace
    <svg class="lateness-plot" width="${W}" height="${H}">
    <line x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#333"/><line x1="${L}" y1="10" x2="${L}" y2="${H - B}" stroke="#333"/>
    <text x="${L}" y="${H - 8}" font-size="11">0 ms</text><text x="${W - 70}" y="${H - 8}" font-size="11">${maxX} ms</text>
    <text x="4" y="${y(1) + 4}" font-size="11">100%</text><text x="4" y="${y(0) + 4}" font-size="11">0%</text>
    <polyline fill="none" stroke="#36c" stroke-width="2" points="${pts}"/>
    ${l.graceMs >= 0 ? mark(l.graceMs, "#b00", "grace " + l.graceMs + " ms", 0) : ""}
    ${mark(l.grace99, "#070", "99% " + l.grace99 + " ms", 14)}${mark(l.grace999, "#a60", "99.9% " + l.grace999 + " ms", 28)}
    </svg></div>`;
}

let editorBuilt = false;
async function editorPage() {
  if (editorBuilt && page.querySelector("#sql")) return;
  editorBuilt = true;
  const cat = await (await fetch("/console/api/catalog")).json();
  page.innerHTML = `<h2>Editor</h2><div class="editor"><div>
    <textarea id="sql"></textarea><br><button id="run">Run</button>
    <table id="rows"></table><pre id="out"></pre></div>
    <aside id="catalog">${cat.map(s => `<h4>${esc(s.kind)} ${esc(s.name)}</h4><ul>${s.columns.map(c => `<li>${esc(c.name)} ${esc(c.type)}${c.key ? " KEY" : ""}</li>`).join("")}</ul>`).join("")}</aside></div>`;
  page.querySelector("#run").onclick = run;
}

async function run() {
  const sql = page.querySelector("#sql").value.trim();
  const rows = page.querySelector("#rows"), out = page.querySelector("#out");
  rows.innerHTML = ""; out.textContent = "";
  if (!/^select\b/i.test(sql)) { out.textContent = await ksql(sql); return; }
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
      if (header) { header = false; if (v.columnNames) { rows.innerHTML = "<tr>" + v.columnNames.map(c => `<th>${esc(c)}</th>`).join("") + "</tr>"; continue; } }
      if (Array.isArray(v)) rows.insertAdjacentHTML("beforeend", "<tr class=\"row\">" + v.map(c => `<td>${esc(JSON.stringify(c))}</td>`).join("") + "</tr>");
      else out.textContent += line + "\n";
    }
  }
}

function route(navigated) {
  const h = location.hash || "#/queries";
  if (h.startsWith("#/query/")) queryPage(decodeURIComponent(h.slice(8)));
  else if (h === "#/editor") { if (navigated) editorBuilt = false; editorPage(); }
  else queriesPage();
}

window.addEventListener("hashchange", () => route(true));
listen();
route(true);
