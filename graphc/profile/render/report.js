// graphc profile report: builds the page from the JSON in <script id="profile-data">.
"use strict";
const DATA = JSON.parse(document.getElementById("profile-data").textContent);
const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of kids) if (c !== null && c !== undefined) e.append(c);
  return e;
}
function svgEl(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
function fmtNs(ns) {
  if (ns === null || ns === undefined) return "-";
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(2) + " us";
  return ns.toFixed(0) + " ns";
}
function fmtBytes(b) {
  if (b >= 1 << 30) return (b / (1 << 30)).toFixed(2) + " GiB";
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(2) + " MiB";
  if (b >= 1 << 10) return (b / 1024).toFixed(1) + " KiB";
  return b + " B";
}
function fmtCell(v, kind) {
  if (v === null || v === undefined) return "-";
  if (kind === "pct") return v.toFixed(1) + "%";
  if (kind === "share") return (100 * v).toFixed(1) + "%";
  if (kind === "ns") return fmtNs(v);
  if (kind === "bytes") return fmtBytes(v);
  if (kind === "float") return v.toPrecision(3);
  if (kind === "ratio") return v.toFixed(3) + "x";
  return String(v);
}
function cellNode(v, kind) {
  if (kind === "verdict") return el("span", {class: "verdict v-" + v, text: v});
  return fmtCell(v, kind);
}
function section(id, title) {
  const s = el("section", {id: id}, el("h2", {text: title}));
  document.querySelector("main").append(s);
  document.querySelector("header nav").append(el("a", {href: "#" + id, text: title}));
  return s;
}

// A sortable, filterable table: spec = {columns: [{key, label, kind}], rows, keys?}.
function dataTable(id, spec, onRow) {
  const cols = spec.columns;
  const order = spec.rows.map((_, i) => i);
  const tbody = el("tbody");
  const heads = cols.map((c, j) => el("th", {"data-col": c.key, class: c.kind === "str" ? "s" : "",
                                            text: c.label, onclick: () => sortBy(j)}));
  const table = el("table", {id: id}, el("thead", {}, el("tr", {}, ...heads)), tbody);
  const filter = el("input", {class: "filter", type: "search", placeholder: "filter by name",
                              oninput: () => draw()});
  let sortCol = -1, asc = false;
  function draw() {
    const q = filter.value.toLowerCase();
    const named = cols.findIndex(c => c.key === "name");
    tbody.replaceChildren();
    for (const i of order) {
      const row = spec.rows[i];
      if (q && !String(row[named]).toLowerCase().includes(q)) continue;
      const tr = el("tr", {}, ...row.map((v, j) => el("td", {class: cols[j].kind === "str" ? "s" : ""},
                                                          cellNode(v, cols[j].kind))));
      if (spec.keys) { tr.id = id + "-" + spec.keys[i]; tr.dataset.key = spec.keys[i]; }
      if (onRow) tr.addEventListener("click", () => onRow(i));
      tbody.append(tr);
    }
  }
  function sortBy(j) {
    asc = sortCol === j ? !asc : ["str", "verdict"].includes(cols[j].kind);
    sortCol = j;
    const num = !["str", "verdict"].includes(cols[j].kind);
    const val = i => spec.rows[i][j];
    order.sort((a, b) => {
      const x = val(a), y = val(b);
      if (x === y) return a - b;
      if (x === null) return 1; if (y === null) return -1;
      const c = num ? x - y : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    heads.forEach((h, k) => { h.classList.toggle("asc", k === j && asc);
                              h.classList.toggle("desc", k === j && !asc); });
    draw();
  }
  draw();
  return el("div", {}, filter, el("div", {class: "scroll"}, table));
}

function renderGlobal() {
  const s = section("global", "Global");
  s.append(el("pre", {text: DATA.global.join("\n")}));
  if (DATA.first_calls_left_out)
    s.append(el("p", {class: "note", text: DATA.first_calls_left_out +
      " first call(s) left out of the times (they pay one-off costs)"}));
  const total = Math.max(1, ...DATA.phases.map(p => p[1]));
  s.append(el("h2", {text: "Compile phases"}));
  for (const [name, ns] of DATA.phases)
    s.append(el("div", {class: "phase"}, el("span", {class: "l", text: name}),
                el("span", {class: "bar", style: "width:" + (300 * ns / total) + "px"}),
                el("span", {text: fmtNs(ns)})));
  if (DATA.tips.length) {
    s.append(el("h2", {text: "Tips"}));
    s.append(el("ul", {}, ...DATA.tips.map(t => el("li", {text: t}))));
  }
}

const NODES = {};
function renderTables() {
  const names = {class: "Class", ops: "Ops", apply: "Apply", sources: "Source lines"};
  for (const [key, title] of Object.entries(names)) {
    const spec = DATA.tables[key];
    const s = section("sec-" + key, title);
    const onRow = key === "apply" ? i => showNode(spec.keys[i], false) : null;
    s.append(dataTable("tbl-" + key, spec, onRow));
  }
}

function showNode(key, scroll) {
  const n = NODES[key];
  const box = document.getElementById("node-detail");
  document.querySelectorAll("tr.hit").forEach(r => r.classList.remove("hit"));
  const row = document.getElementById("tbl-apply-" + key);
  if (row) { row.classList.add("hit"); if (scroll) row.scrollIntoView({block: "center"}); }
  document.querySelectorAll("#graph-box g.node.sel").forEach(g => g.classList.remove("sel"));
  const g = document.querySelector('#graph-box g.node[data-key="' + key + '"]');
  if (g) g.classList.add("sel");
  if (!n || !box) return;
  const lines = [n.name, "function " + n.fn + ", position " + n.pos + ", " + n.cls + " [" + n.impl + "]",
    n.calls + " calls, " + fmtNs(n.ns) + " (" + (100 * n.share).toFixed(1) + "% of its function)",
    "inputs: " + (n.inputs.join("; ") || "-"), "outputs: " + (n.outputs.join("; ") || "-"),
    "output bytes: " + fmtBytes(n.out_bytes) + (n.workspace ? ", workspace " + fmtBytes(n.workspace) : ""),
    "source: " + (n.origins.join(", ") || "unknown")];
  box.replaceChildren(el("pre", {text: lines.join("\n")}));
}

function renderGraph() {
  const s = section("graph", "Graph");
  if (!DATA.svg) { s.append(el("p", {class: "note", text: "No graph: Graphviz 'dot' was not found when the report was written."})); }
  else {
    const box = el("div", {id: "graph-box"});
    box.innerHTML = DATA.svg;
    s.append(el("p", {class: "note", text: "Nodes are coloured by their share of time; click one for its row, shapes, source and memory."}), box);
    for (const g of box.querySelectorAll("g.node")) {
      const t = g.querySelector("title");
      const key = t ? t.textContent.trim() : "";
      if (!NODES[key]) continue;
      g.dataset.key = key;
      g.addEventListener("click", () => showNode(key, true));
    }
  }
  s.append(el("div", {id: "node-detail", text: "Click a node or an Apply row."}));
}

function loopDetails(lp) {
  const rows = lp.rows.map(r => [r[0], r[1], r[2], r[3]]);
  const spec = {columns: [{key: "name", label: "step node", kind: "str"},
    {key: "incl", label: "inclusive / call", kind: "ns"}, {key: "excl", label: "exclusive / call", kind: "ns"},
    {key: "per_step", label: "calls / step", kind: "float"}], rows: rows};
  const d = el("details", {class: "loop"},
    el("summary", {text: lp.name + " (" + lp.function + ", position " + lp.pos + "): " + lp.calls +
                   " calls, " + lp.steps + " steps, " + fmtNs(lp.ns)}),
    dataTable("loop-" + lp.function + "-" + lp.pos + "-" + Math.random().toString(36).slice(2), spec));
  for (const c of lp.children) d.append(loopDetails(c));
  return d;
}

function renderLoops() {
  if (!DATA.loops.length) return;
  const s = section("loops", "Loops");
  for (const lp of DATA.loops) s.append(loopDetails(lp));
}

function lineChart(values, peak, w, h) {
  const svg = svgEl("svg", {width: w, height: h, class: "chart"});
  const max = Math.max(1, ...values), n = Math.max(values.length - 1, 1);
  const x = i => 40 + (w - 60) * i / n, y = v => h - 20 - (h - 40) * v / max;
  svg.append(svgEl("line", {x1: 40, y1: h - 20, x2: w - 20, y2: h - 20, stroke: "#999"}));
  const pts = values.map((v, i) => x(i) + "," + y(v)).join(" ");
  svg.append(svgEl("polyline", {points: pts, fill: "none", stroke: "#2a6ebb", "stroke-width": 2}));
  if (peak !== null) {
    svg.append(svgEl("circle", {cx: x(peak), cy: y(values[peak]), r: 5, fill: "#c9302c", class: "peak"}));
    const t = svgEl("text", {x: Math.min(x(peak) + 8, w - 160), y: Math.max(y(values[peak]), 14), "font-size": 12});
    t.textContent = "peak " + fmtBytes(values[peak]) + " at node " + peak;
    svg.append(t);
  }
  return svg;
}

function renderRoofline() {
  const r = DATA.roofline;
  if (!r || !r.machine) return;
  const m = r.machine, s = section("roofline", "Roofline");
  s.append(el("p", {text: "This machine: " + m.bandwidth_gbs.toFixed(1) + " GB/s memory bandwidth (triad over " +
    m.triad_n + " doubles), " + m.peak_gflops.toFixed(1) + " GFLOP/s peak (float64 GEMM of " + m.gemm_n + "x" +
    m.gemm_n + ", BLAS " + m.blas + "). One dot per node with a flop count; click a dot for its row."}));
  const pts = r.points.filter(p => p.intensity > 0 && p.gflops > 0);
  const w = 720, h = 360, pad = 50;
  const xs = pts.map(p => p.intensity).concat([m.peak_gflops / m.bandwidth_gbs]);
  const ys = pts.map(p => p.gflops).concat([m.peak_gflops]);
  const lx0 = Math.floor(Math.log10(Math.min(...xs)) - 1), lx1 = Math.ceil(Math.log10(Math.max(...xs)) + 1);
  const ly0 = Math.floor(Math.log10(Math.min(...ys)) - 1), ly1 = Math.ceil(Math.log10(Math.max(...ys)) + 0.5);
  const X = v => pad + (w - 2 * pad) * (Math.log10(v) - lx0) / (lx1 - lx0);
  const Y = v => h - pad + (2 * pad - h) * (Math.log10(v) - ly0) / (ly1 - ly0);
  const svg = svgEl("svg", {width: w, height: h, id: "roofline-chart"});
  svg.append(svgEl("rect", {x: pad, y: pad, width: w - 2 * pad, height: h - 2 * pad, fill: "none", stroke: "#bbb"}));
  for (let e = lx0; e <= lx1; e++) { const t = svgEl("text", {x: X(10 ** e) - 10, y: h - pad + 16, "font-size": 11}); t.textContent = "1e" + e; svg.append(t); }
  for (let e = ly0; e <= ly1; e++) { const t = svgEl("text", {x: 4, y: Y(10 ** e) + 4, "font-size": 11}); t.textContent = "1e" + e; svg.append(t); }
  const ridge = m.peak_gflops / m.bandwidth_gbs, xa = 10 ** lx0, xb = 10 ** lx1;
  const roof = [[xa, m.bandwidth_gbs * xa], [ridge, m.peak_gflops], [xb, m.peak_gflops]];
  svg.append(svgEl("polyline", {points: roof.map(([a, b]) => X(a) + "," + Y(Math.max(b, 10 ** ly0))).join(" "),
                                fill: "none", stroke: "#444", "stroke-width": 2, class: "roof"}));
  const lab = (x, y, text) => { const t = svgEl("text", {x: x, y: y, "font-size": 12}); t.textContent = text; svg.append(t); };
  lab(pad + 4, h - 8, "arithmetic intensity (flop/byte)"); lab(pad + 4, pad - 8, "GFLOP/s (log-log)");
  const total = Math.max(1, ...pts.map(p => p.ns));
  for (const p of pts) {
    const c = svgEl("circle", {cx: X(p.intensity), cy: Y(p.gflops), r: 3 + 7 * Math.sqrt(p.ns / total),
      fill: "rgba(201,48,44,0.6)", stroke: "#800", class: "dot", "data-key": p.key});
    const t = svgEl("title");
    t.textContent = p.name + ": " + p.intensity.toPrecision(3) + " flop/B, " + p.gflops.toPrecision(3) +
      " GFLOP/s, " + (100 * p.bw_share).toFixed(1) + "% of bandwidth, " + (100 * p.flop_share).toFixed(1) + "% of peak";
    c.append(t);
    c.addEventListener("click", () => showNode(p.key, true));
    svg.append(c);
  }
  s.append(svg);
  const rest = r.points.length - pts.length;
  if (rest) s.append(el("p", {class: "note", text: rest + " node(s) without a flop count are not drawn; " +
                                                   "their GB/s and % bw are in the Apply table."}));
}

function renderMemory() {
  const fns = DATA.functions.filter(f => f.memory.length);
  if (!fns.length) return;
  const s = section("memory", "Memory over execution order");
  for (const f of fns) s.append(el("h2", {text: f.name}), lineChart(f.memory, f.peak, 720, 180));
}

function renderTimeline() {
  const fns = DATA.functions.filter(f => f.events.length);
  if (!fns.length) return;
  const s = section("timeline", "Timeline of traced calls");
  for (const f of fns) {
    const calls = [...new Set(f.events.map(e => e[0]))].slice(0, 12);
    const evs = f.events.filter(e => calls.includes(e[0]));
    const t0 = Math.min(...evs.map(e => e[2])), t1 = Math.max(...evs.map(e => e[2] + e[3]));
    const w = 900, lane = 16, h = calls.length * lane + 24;
    const svg = svgEl("svg", {width: w, height: h});
    const hot = Math.max(1, ...evs.map(e => e[3]));
    for (const e of evs) {
      const r = svgEl("rect", {x: 10 + (w - 20) * (e[2] - t0) / Math.max(t1 - t0, 1),
        y: calls.indexOf(e[0]) * lane, height: lane - 3,
        width: Math.max(1, (w - 20) * e[3] / Math.max(t1 - t0, 1)),
        fill: "hsl(" + (220 - 220 * e[3] / hot) + ",70%,55%)"});
      const node = NODES["f" + f.index + "_n" + e[1]];
      const title = svgEl("title");
      title.textContent = (node ? node.name : "node " + e[1]) + ": " + fmtNs(e[3]) + " (call " + e[0] + ")";
      r.append(title);
      svg.append(r);
    }
    const note = f.dropped ? " (" + f.dropped + " more events not shown)" : "";
    s.append(el("h2", {text: f.name + ": calls " + calls.join(", ") + ", " + fmtNs(t1 - t0) + note}), svg);
  }
}

function renderCompare() {
  const c = DATA.compare;
  if (!c) return;
  const s = section("compare", "Comparison");
  s.append(el("p", {text: (c.failed ? "FAILED" : "passed") + ": " + (100 * c.coverage.matched_share).toFixed(1) +
    "% of the base time matched; threshold " + c.options.threshold + "x at " + (100 * c.options.confidence) +
    "% confidence"}));
  const spec = {columns: [{key: "verdict", label: "verdict", kind: "verdict"}, {key: "kind", label: "kind", kind: "str"},
    {key: "ratio", label: "new/base", kind: "ratio"}, {key: "low", label: "low", kind: "ratio"},
    {key: "high", label: "high", kind: "ratio"}, {key: "base", label: "base median", kind: "ns"},
    {key: "new", label: "new median", kind: "ns"}, {key: "name", label: "name", kind: "str"}],
    rows: c.entries.map(e => [e.verdict, e.kind, e.ratio, e.low, e.high, e.base_ns, e.new_ns, e.label])};
  s.append(dataTable("tbl-compare", spec));
}

function main() {
  document.title = "graphc profile: " + DATA.title;
  document.querySelector("header h1").textContent = "graphc profile: " + DATA.title;
  for (const f of DATA.functions) for (const n of f.nodes) NODES["f" + f.index + "_n" + n.pos] = Object.assign({fn: f.name}, n);
  renderCompare();
  if (DATA.functions.length) { renderGlobal(); renderTables(); renderGraph(); renderRoofline(); renderLoops(); renderMemory(); renderTimeline(); }
  document.body.dataset.ready = "1";
}
main();
