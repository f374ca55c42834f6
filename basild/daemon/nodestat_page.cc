#include "basild/daemon/nodestat_page.h"

namespace basild {

// One page, no external resources (a login node's browser may reach
// nothing else): the map is drawn from /nodestat.json beside it and drawn
// again every 10 seconds without a reload. Each node is a cell carrying its
// cname, NID, state, role and reservation as data attributes (what a test
// reads) and as its tooltip (what a person hovers for).
std::string_view nodestat_page() {
  return R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>basild: machine map</title>
<style>
body { font-family: sans-serif; margin: 1em; color: #222; }
h1 { font-size: 1.2em; margin: 0 0 .3em 0; }
#status { color: #555; margin-bottom: .8em; }
#status.stale { color: #b00; font-weight: bold; }
.cabinets { display: flex; flex-wrap: wrap; gap: 1.2em; }
table.cab { border-collapse: collapse; font-family: monospace; }
table.cab caption { font-weight: bold; }
table.cab th { font-weight: normal; color: #777; padding: 0 .3em; font-size: .8em; }
td.node, td.none { width: 1.1em; height: 1.1em; text-align: center; font-size: .8em; border: 1px solid #fff; }
td.none { background: #fff; }
td.node[data-mark="-"] { background: #d7ecd0; }
td.node[data-mark=";"] { background: #d0e2ec; }
td.node[data-mark="S"] { background: #ccc; }
td.node[data-mark="X"], td.node[data-mark="Z"] { background: #e44; color: #fff; }
td.node[data-mark="?"], td.node[data-mark="Y"] { background: #f2b134; }
td.node[data-mark="A"] { background: #999; color: #fff; }
tr.chassis-end td { border-bottom: 3px solid #fff; }
#legend { margin-top: 1em; display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
#legend table { border-collapse: collapse; }
#legend td, #legend th { padding: .1em .6em; text-align: left; }
</style>
</head>
<body>
<h1>Machine map <span id="host"></span></h1>
<div id="status">loading…</div>
<div class="cabinets" id="map"></div>
<div id="legend"><table id="marks"></table><table id="reservations"></table></div>
<script>
"use strict";
const kRefreshMs = 10000;

// A reservation's colour, the same for its letter on every refresh.
function hue(id) { return (Number(id) * 137) % 360; }

function text(tag, value, cls) {
  const e = document.createElement(tag);
  e.textContent = value;
  if (cls) e.className = cls;
  return e;
}

function draw(m) {
  document.getElementById("host").textContent = m.mpp_host ? "(" + m.mpp_host + ")" : "";
  const byMark = {};
  for (const r of m.reservations) byMark[r.mark] = r;
  const field = {};
  m.node_fields.forEach((f, i) => { field[f] = i; });
  const map = document.getElementById("map");
  map.replaceChildren();
  for (const cab of m.cabinets) {
    const t = document.createElement("table");
    t.className = "cab";
    t.appendChild(text("caption", cab.name.toUpperCase()));
    for (let c = cab.chassis.length - 1; c >= 0; --c) {
      const rows = cab.chassis[c];
      for (let n = rows.length - 1; n >= 0; --n) {
        const tr = document.createElement("tr");
        if (n === 0) tr.className = "chassis-end";
        tr.appendChild(text("th", "c" + c + "n" + n));
        const marks = rows[n];
        for (let s = 0; s < marks.length; ++s) {
          const mark = marks[s];
          const td = document.createElement("td");
          if (mark === " ") {
            td.className = "none";
          } else {
            const cname = cab.name + "c" + c + "s" + s + "n" + n;
            const node = m.nodes[cname];
            td.className = "node";
            td.textContent = mark;
            td.dataset.mark = mark;
            td.dataset.cname = cname;
            let title = cname;
            if (node) {
              td.dataset.nid = node[field.nid];
              td.dataset.state = node[field.state];
              td.dataset.role = node[field.role];
              const res = node[field.reservation_id];
              td.dataset.res = res === null ? "" : res;
              title += "  nid " + node[field.nid] + "  " + node[field.state] + " " + node[field.role];
              if (res !== null) {
                const r = m.reservations.find(x => x.reservation_id === res);
                title += "  reservation " + res + (r && r.batch_id ? " (job " + r.batch_id + ")" : "");
              }
            } else {
              td.dataset.state = "absent";
              title += "  not in ALPS's inventory (service node)";
            }
            const r = byMark[mark];
            if (r) td.style.background = "hsl(" + hue(r.reservation_id) + ",60%,75%)";
            td.title = title;
          }
          tr.appendChild(td);
        }
        t.appendChild(tr);
      }
    }
    map.appendChild(t);
  }
  const marks = document.getElementById("marks");
  marks.replaceChildren();
  const head = document.createElement("tr");
  head.append(text("th", "mark"), text("th", "meaning"), text("th", "nodes"));
  marks.appendChild(head);
  for (const k of m.marks) {
    const tr = document.createElement("tr");
    tr.append(text("td", k.mark === " " ? "(blank)" : k.mark), text("td", k.meaning),
              text("td", String(m.counts[k.mark] || (k.mark === "S" ? m.absent : 0))));
    marks.appendChild(tr);
  }
  const res = document.getElementById("reservations");
  res.replaceChildren();
  const rh = document.createElement("tr");
  rh.append(text("th", "mark"), text("th", "reservation"), text("th", "job"), text("th", "nodes"),
            text("th", "state"));
  res.appendChild(rh);
  for (const r of m.reservations) {
    const tr = document.createElement("tr");
    const mark = text("td", r.mark);
    mark.style.background = "hsl(" + hue(r.reservation_id) + ",60%,75%)";
    tr.append(mark, text("td", String(r.reservation_id)), text("td", r.batch_id || "-"),
              text("td", String(r.nodes)), text("td", r.state || "-"));
    res.appendChild(tr);
  }
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const answer = await fetch("nodestat.json", {cache: "no-store"});
    if (!answer.ok) throw new Error("HTTP " + answer.status + ": " + (await answer.text()));
    const m = await answer.json();
    draw(m);
    status.className = "";
    status.textContent = m.nodes_in_inventory + " nodes, " + m.available.batch + " batch and " +
        m.available.interactive + " interactive free; INVENTORY " + Math.round(m.age_s) +
        " s old; drawn " + new Date().toLocaleTimeString();
    document.body.dataset.drawn = String(Number(document.body.dataset.drawn || 0) + 1);
  } catch (e) {
    status.className = "stale";
    status.textContent = "cannot read basild's map (" + e.message + "); the map below may be old";
  }
}
refresh();
setInterval(refresh, kRefreshMs);
</script>
</body>
</html>
)HTML";
}

}  // namespace basild
