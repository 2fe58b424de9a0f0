// The Sluice console: three pages (queries, one query, editor) drawn from
// /console/api/* and one server-sent event stream; no build step.
"use strict";

const page = document.getElementById("page");
const history = {}; // query id -> recent input rates, for sparklines
let latest = [];
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
    <td class="num">${q.lag}</td><td class="num">${q.lateDropped}</td>
    <td class="num">${Object.values(q.errors).reduce((a, b) => a + b, 0)}</td>
    <td>${q.restores.map(r => `${esc(r.store)}/${r.partition} <div class="bar"><div style="width:${r.total ? 100 * r.done / r.total : 0}%"></div></div>`).join("")}</td>
    <td>${q.owners.map(o => esc(o.instance)).join(", ")}</td>
    <td><button data-act="TERMINATE">Terminate</button> <button data-act="PAUSE">Pause</button> <button data-act="RESUME">Resume</button></td>
  </tr>`).join("");
  page.innerHTML = `<h2>Queries</h2><table id="queries"><tr><th>Query</th><th>State</th><th>Input/s</th><th></th>
    <th>Lag</th><th>Late</th><th>Errors</th><th>Restore</th><th>Instances</th><th></th></tr>${rows}</table>`;
  for (const b of page.querySelectorAll("button[data-act]")) {
    b.onclick = () => ksql(`${b.dataset.act} ${b.closest("tr").dataset.query};`);
  }
}

function queryPage(id) {
  const q = latest.find(q => q.id === id);
  if (!q) { page.innerHTML = `<h2>${esc(id)}</h2><p>No such query (yet).</p>`; return; }
  page.innerHTML = `<h2 id="query-id">${esc(q.id)}</h2><p class="state-${esc(q.state)}">${esc(q.state)}</p>
    <pre>${esc(q.statement)}</pre>
    <p>Sources: ${q.sources.map(esc).join(", ")} → Sinks: ${q.sinks.map(esc).join(", ")}</p>
    <p>Records in ${q.recordsIn}, out ${q.recordsOut}, late dropped ${q.lateDropped}, lag ${q.lag}</p>
    <p>Input/s ${sparkline(history[q.id] || [])}</p>`;
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
    body: JSON.stringify({sql: sql, properties: {}})});
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
