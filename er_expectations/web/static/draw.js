// The draw page of the labelling workbench (er-expectations, issues 19 and 31): tick the members of
// the predicted cluster ĉ(r) to remove (A_r, one by one, by ranges or all the filter shows), search
// records to add (B_r), see the true cluster, save. Bulk actions change the sets first and repaint
// once; the last ones can be undone. No framework; every record value is put in the page with
// textContent (never as HTML); ids stay text. The words on the page are the labeller's, not SPEC's.
"use strict";
(function () {
  const state = JSON.parse(document.getElementById("state").textContent);
  const $ = (sel) => document.querySelector(sel);
  const members = new Set(state.members);
  const removed = new Set();
  const added = new Map(); // id -> name
  const names = Object.assign({}, state.names || {});
  let version = state.decision ? state.decision.version : 0;
  let seen = state.seen || {};
  let dirty = false;
  let cursor = -1;
  let renders = 0; // repaints of the true cluster: one per action, however many rows it changes
  const plural = (n, one, many) => n.toLocaleString("en") + " " + (n === 1 ? one : (many || one + "s"));
  const tbody = $("#members tbody");
  let rows = [];
  let byId = new Map();
  let rowText = new Map();
  function index() {
    rows = Array.from(tbody.rows);
    byId = new Map(rows.map((r) => [r.dataset.id, r]));
    rowText = new Map(rows.map((r) => [r, r.textContent.toLowerCase()]));
  }
  index();

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function button(text, onClick, cls) {
    const b = el("button", text, cls);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }
  const FOLD_AT = 160; // as the server folds table cells: long texts behind "show all", never cut
  function folded(text) {
    if (text.length <= FOLD_AT) return el("span", text);
    const box = el("span", null, "fold");
    const full = el("span", text, "full");
    full.hidden = true;
    const more = el("button", "show all (" + text.length.toLocaleString("en") + " characters)", "more");
    more.type = "button";
    box.append(el("span", text.slice(0, FOLD_AT) + "…", "short"), full, " ", more);
    return box;
  }
  function nameOf(id) {
    if (names[id]) return names[id];
    const r = byId.get(id);
    return r && r.cells.length > 2 ? r.cells[2].textContent : "";
  }

  // -- the decision in the page -------------------------------------------------------------------
  function load(decision) {
    removed.clear();
    added.clear();
    for (const id of decision.removed || []) removed.add(id);
    for (const id of decision.added || []) added.set(id, nameOf(id));
    $("#note").value = decision.note || "";
    $("#reason").value = decision.reason || "";
    $("#unsure").checked = decision.status === "unsure";
    render();
  }
  function changed() {
    dirty = true;
    $("#status").textContent = "not saved yet";
    $("#status").className = "pending";
    render();
  }
  function render() {
    renders += 1;
    document.body.dataset.renders = String(renders);
    for (const [id, r] of byId) {
      const box = r.querySelector("input[type=checkbox]");
      const out = removed.has(id);
      if (box && box.checked !== out) box.checked = out;
      if (r.classList.contains("removed") !== out) r.classList.toggle("removed", out);
    }
    let kept = 0;
    for (const id of members) if (!removed.has(id)) kept += 1;
    let plus = 0;
    for (const id of added.keys()) if (!members.has(id)) plus += 1;
    const minus = members.size - kept;
    $("#truth-count").textContent = plural(kept + plus, "record") + " = " +
      members.size.toLocaleString("en") + " predicted − " + minus.toLocaleString("en") + " removed + " +
      plus.toLocaleString("en") + " added";
    $("#removed-n").textContent = removed.size.toLocaleString("en");
    $("#added-n").textContent = added.size.toLocaleString("en");
    chips($("#removed"), Array.from(removed), (id) => { removed.delete(id); changed(); });
    chips($("#added"), Array.from(added.keys()), (id) => { added.delete(id); changed(); });
  }
  const MAX_CHIPS = 100; // more are listed as a count: the ticked rows and the search show them all
  function chips(list, ids, undo) {
    const items = [];
    if (!ids.length) items.push(el("li", "none", "none"));
    if (ids.length > MAX_CHIPS) {
      items.push(el("li", "the last " + MAX_CHIPS + " shown; " + (ids.length - MAX_CHIPS).toLocaleString("en") +
        " more (undo a bulk action with z)", "none"));
      ids = ids.slice(-MAX_CHIPS);
    }
    for (const id of ids) {
      const li = el("li");
      li.append(el("span", nameOf(id) || "(no name)", "name"), " ", el("span", id, "mono"), " ",
        button("undo", () => undo(id), "link"));
      items.push(li);
    }
    list.replaceChildren(...items);
  }

  // -- members: tick, filter, sort, fold ---------------------------------------------------------------
  // a click on a box (the mouse, or Space on a focused box): one row, or with Shift every shown row
  // from the last box clicked to this one, set as this one now is (one action, one repaint)
  let anchor = null;
  tbody.addEventListener("click", (ev) => {
    const box = ev.target;
    if (!(box instanceof HTMLInputElement) || box.type !== "checkbox") return;
    const row = box.closest("tr");
    if (ev.shiftKey && anchor && anchor !== row && anchor.isConnected && !anchor.hidden) tickRange(anchor, row, box.checked);
    else tickOne(row, box.checked);
    anchor = row;
  });
  function tickOne(row, out) {
    const id = row.dataset.id;
    if (out) removed.add(id); else removed.delete(id);
    changed();
  }
  function visibleRows() { return Array.from(tbody.rows).filter((r) => !r.hidden); }
  function tickable(r) { return r.querySelector("input[type=checkbox]") !== null; }
  function tickRange(from, to, out) {
    const vis = visibleRows();
    let a = vis.indexOf(from), b = vis.indexOf(to);
    if (a < 0 || b < 0) { tickOne(to, out); return; }
    if (a > b) [a, b] = [b, a];
    setRows(vis.slice(a, b + 1), out, "range");
  }

  // -- bulk actions: every change of many rows is one action, one repaint, and can be undone ----------
  const history = []; // the sets before each bulk action, newest last
  function remember(label) {
    history.push({ label: label, removed: new Set(removed), added: new Map(added) });
    if (history.length > 30) history.shift();
    showUndo();
  }
  function showUndo() {
    const b = $("#undo");
    const last = history[history.length - 1];
    b.disabled = !last;
    b.textContent = last ? "Undo " + last.label + " (z)" : "Undo (z)";
  }
  function say(text) { $("#status").textContent = text; $("#status").className = "pending"; }
  function setRows(list, out, how) {
    const ids = list.filter(tickable).map((r) => r.dataset.id).filter((id) => removed.has(id) !== out);
    if (!ids.length) { say("nothing to change: every shown member is already " + (out ? "ticked" : "unticked")); return; }
    remember((out ? "tick of " : "untick of ") + plural(ids.length, "row") + (how ? " (" + how + ")" : ""));
    for (const id of ids) { if (out) removed.add(id); else removed.delete(id); }
    changed();
  }
  function undo() {
    const last = history.pop();
    if (!last) { say("nothing to undo"); return; }
    const addsChanged = last.added.size !== added.size || Array.from(last.added.keys()).some((id) => !added.has(id));
    removed.clear();
    for (const id of last.removed) removed.add(id);
    added.clear();
    for (const [id, name] of last.added) added.set(id, name);
    showUndo();
    changed();
    if (addsChanged && $("#hits").childElementCount) redraw();
  }
  $("#tick-shown").addEventListener("click", () => setRows(visibleRows(), true, ""));
  $("#untick-shown").addEventListener("click", () => setRows(visibleRows(), false, ""));
  $("#undo").addEventListener("click", undo);
  function applyFilter() {
    const q = $("#filter").value.trim().toLowerCase();
    let shown = 0;
    for (const r of rows) {
      const hide = q !== "" && !rowText.get(r).includes(q);
      if (r.hidden !== hide) r.hidden = hide;
      if (!hide) shown += 1;
    }
    $("#shown").textContent = "showing " + shown.toLocaleString("en") + " of " + rows.length.toLocaleString("en");
    $("#tick-shown").textContent = "Tick all " + (q ? shown.toLocaleString("en") + " " : "") + "shown (a)";
    $("#untick-shown").textContent = "Untick all " + (q ? shown.toLocaleString("en") + " " : "") + "shown (u)";
  }
  $("#filter").addEventListener("input", applyFilter);
  const sortState = { col: -1, dir: 1 };
  document.querySelectorAll("button.sort").forEach((b) => b.addEventListener("click", () => {
    const col = Number(b.dataset.col);
    sortState.dir = sortState.col === col ? -sortState.dir : 1;
    sortState.col = col;
    const key = (r) => r.cells[col].textContent.trim();
    const sorted = Array.from(tbody.rows).sort((a, c) => {
      const x = key(a), y = key(c);
      const nx = Number(x), ny = Number(y);
      const cmp = x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
      return sortState.dir * cmp;
    });
    tbody.append(...sorted);
    document.querySelectorAll("button.sort").forEach((o) => o.removeAttribute("aria-sort"));
    b.setAttribute("aria-sort", sortState.dir > 0 ? "ascending" : "descending");
  }));
  document.addEventListener("click", (ev) => {
    const more = ev.target.closest && ev.target.closest("button.more");
    if (!more) return;
    const fold = more.closest(".fold");
    const full = fold.querySelector(".full");
    const open = full.hidden;
    full.hidden = !open;
    fold.querySelector(".short").hidden = open;
    if (!more.dataset.label) more.dataset.label = more.textContent;
    more.textContent = open ? "show less" : more.dataset.label;
  });

  // -- search (B_r): hits, "+ N more records named X", a name expanded into all its records; the records
  // listed can be added all at once or by a Shift-click range (bulk actions, undone as the others) ----
  let timer = null;
  let asked = 0;
  let hitLimit = 20;
  let shownExpansion = null; // the expansion on screen (re-drawn from it after an add)
  $("#search").addEventListener("input", () => {
    clearTimeout(timer);
    hitLimit = 20;
    timer = setTimeout(search, 200);
  });
  let listed = []; // the addable records the hits list shows, in its order
  let hitAnchor = null;
  function addRecords(records, how) {
    const fresh = records.filter((r) => !added.has(r.id));
    if (!fresh.length) { say("nothing to add: every listed record is added already"); return; }
    if (how) remember("add of " + plural(fresh.length, "record") + " (" + how + ")");
    for (const r of fresh) { names[r.id] = names[r.id] || r.name; added.set(r.id, r.name); }
    changed();
  }
  function addClicked(ev, r) {
    const a = hitAnchor === null ? -1 : listed.findIndex((x) => x.id === hitAnchor);
    const b = listed.findIndex((x) => x.id === r.id);
    if (ev.shiftKey && a >= 0 && b >= 0 && a !== b) addRecords(listed.slice(Math.min(a, b), Math.max(a, b) + 1), "range");
    else addRecords([r]);
    hitAnchor = r.id;
    redraw();
  }
  function hitTools() {
    $(".hit-tools").hidden = !listed.length;
    const take = listed.filter((r) => added.has(r.id)).length;
    $("#add-shown").textContent = "Add all " + (listed.length - take).toLocaleString("en") + " shown (+)";
    $("#add-shown").disabled = listed.length === take;
    $("#drop-shown").textContent = "Take back " + take.toLocaleString("en") + " shown";
    $("#drop-shown").disabled = !take;
  }
  function addShown() {
    if (!listed.length) { say("no search result to add: search first (/)"); return; }
    addRecords(listed, "all shown");
    redraw();
  }
  $("#add-shown").addEventListener("click", addShown);
  $("#drop-shown").addEventListener("click", () => {
    const back = listed.filter((r) => added.has(r.id));
    if (!back.length) return;
    remember("take-back of " + plural(back.length, "record"));
    for (const r of back) added.delete(r.id);
    changed();
    redraw();
  });
  function recordItem(r, inDraw) {
    const li = el("li");
    li.dataset.id = r.id;
    const head = el("div");
    head.append(el("span", r.name || "(no name)", "name"), " ", el("span", r.id, "mono"));
    if (r.same_block) head.append(" ", el("span", "same block", "tag"));
    const cells = el("div", null, "cells");
    cells.append(folded(r.cells.join(" · ")));
    li.append(head, cells);
    if (!r.in_release) { // shown, never addable
      li.classList.add("outside");
      li.append(el("span", r.reason, "reason"));
    } else if (inDraw) {
      li.append(removed.has(r.id) ? button("keep in cluster", () => { removed.delete(r.id); changed(); search(); })
        : el("span", "already in this draw's cluster", "hint"));
    } else {
      listed.push(r);
      if (added.has(r.id)) li.append(el("span", "added", "hint"));
      else li.append(button("add", (ev) => addClicked(ev, r), "add"));
    }
    return li;
  }
  function redraw() { if (shownExpansion) showExpansion(shownExpansion); else search(); }
  async function search() {
    const q = $("#search").value;
    const mine = ++asked;
    shownExpansion = null;
    const list = $("#hits");
    if (!q.trim()) { list.replaceChildren(); listed = []; hitTools(); return; }
    const res = await fetch("/api/search?draw=" + encodeURIComponent(state.draw) + "&q=" + encodeURIComponent(q) +
      "&limit=" + hitLimit, { credentials: "same-origin" });
    const data = await res.json();
    if (mine !== asked) return; // a newer query is on its way
    list.replaceChildren();
    listed = [];
    hitTools();
    if (!res.ok) { list.append(el("li", data.error || "search failed", "error")); return; }
    if (!data.hits.length) list.append(el("li", "no record found", "none"));
    for (const h of data.hits) {
      names[h.id] = names[h.id] || h.name;
      list.append(recordItem(h, h.in_predicted));
    }
    for (const n of data.names) {
      if (n.more <= 0) continue;
      const li = el("li", null, "more");
      li.append(button("+ " + n.more.toLocaleString("en") + " more record" + (n.more === 1 ? "" : "s") + " named " +
        n.name, () => expand("name=" + encodeURIComponent(n.key)), "expand"));
      list.append(li);
    }
    if (data.truncated && hitLimit < 200) {
      const li = el("li", null, "more");
      li.append(button("more results", () => { hitLimit = Math.min(200, hitLimit + 20); search(); }, "more-hits"));
      list.append(li);
    }
    hitTools();
  }
  // an expansion comes a page at a time (issue 31): the predicted clusters with their counts and a few
  // records each; "show more" asks for the next records of one cluster, "add these k records" for all
  // k ids of it (however many are shown), "more predicted clusters" for the next page of clusters
  let expandQuery = "";
  const groupIds = {}; // cluster -> {ids, names} of all its records of the expanded name (asked once)
  function expandUrl(extra) {
    return "/api/expand?draw=" + encodeURIComponent(state.draw) + "&" + expandQuery + (extra ? "&" + extra : "");
  }
  async function getJson(url) {
    const res = await fetch(url, { credentials: "same-origin" });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || "listing failed");
    return data;
  }
  async function expand(query) {
    const mine = ++asked;
    expandQuery = query;
    for (const k of Object.keys(groupIds)) delete groupIds[k];
    const list = $("#hits");
    list.replaceChildren(el("li", "listing the records…", "none"));
    let data;
    try { data = await getJson(expandUrl("")); } catch (err) {
      if (mine === asked) list.replaceChildren(el("li", err.message, "error"));
      return;
    }
    if (mine !== asked) return;
    showExpansion(data);
  }
  async function moreOf(g) { // the next records of one predicted cluster
    const data = shownExpansion;
    try {
      const got = await getJson(expandUrl("cluster=" + encodeURIComponent(g.cluster) + "&offset=" + g.records.length));
      g.records = g.records.concat(got.records);
    } catch (err) { say(err.message); return; }
    if (shownExpansion === data) showExpansion(data);
  }
  async function moreOutside() {
    const data = shownExpansion;
    try {
      const got = await getJson(expandUrl("outside=1&offset=" + data.outside.length));
      data.outside = data.outside.concat(got.records);
    } catch (err) { say(err.message); return; }
    if (shownExpansion === data) showExpansion(data);
  }
  async function moreClusters() {
    const data = shownExpansion;
    try {
      const got = await getJson(expandUrl("page=" + (data.page + 1)));
      data.groups = data.groups.concat(got.groups);
      data.page = got.page;
    } catch (err) { say(err.message); return; }
    if (shownExpansion === data) showExpansion(data);
  }
  async function addGroup(g) { // all k records of the cluster: their ids asked of the server
    const data = shownExpansion;
    let all = groupIds[g.cluster];
    if (!all) {
      try { all = await getJson(expandUrl("cluster=" + encodeURIComponent(g.cluster) + "&ids=all")); } catch (err) {
        say(err.message); return;
      }
      groupIds[g.cluster] = all;
    }
    addRecords(all.ids.map((id, i) => ({ id: id, name: all.names[i] })), "predicted cluster " + g.cluster);
    if (shownExpansion === data) showExpansion(data);
  }
  function freshOf(g) { // how many of the cluster's records are not added yet (exact once its ids are known)
    const all = groupIds[g.cluster];
    if (all) return all.ids.filter((id) => !added.has(id)).length;
    const shownAdded = g.records.filter((r) => added.has(r.id)).length;
    return g.count - shownAdded;
  }
  function showExpansion(data) {
    shownExpansion = data;
    const list = $("#hits");
    list.replaceChildren();
    listed = [];
    const what = data.kind === "name" ? "named " + (data.name || data.value) : "in block " + data.value;
    const head = el("li", null, "expansion");
    head.append(el("div", data.records.toLocaleString("en") + " record" + (data.records === 1 ? "" : "s") + " " + what +
      ": " + data.in_draw.toLocaleString("en") + " already in this draw's cluster, " + data.offered.toLocaleString("en") +
      " in " + data.clusters.toLocaleString("en") + " other predicted cluster" + (data.clusters === 1 ? "" : "s") +
      ", " + data.outside_count.toLocaleString("en") + " not in release " + data.release, "summary"));
    head.append(button("back to the search results", () => search(), "link back"));
    list.append(head);
    for (const g of data.groups) {
      const li = el("li", null, "group");
      li.dataset.cluster = g.cluster;
      const fresh = freshOf(g);
      const top = el("div", null, "group-head");
      top.append(el("span", "predicted cluster " + g.cluster, "mono"), " · " + g.count.toLocaleString("en") +
        " of its " + g.cluster_size.toLocaleString("en") + " record" + (g.cluster_size === 1 ? "" : "s") + " ");
      top.append(fresh > 0 ? button("add these " + fresh.toLocaleString("en") + " record" + (fresh === 1 ? "" : "s"),
        () => addGroup(g), "add-group") : el("span", "all added", "hint"));
      const ol = el("ol", null, "members-of");
      for (const r of g.records) ol.append(recordItem(r, false));
      li.append(top, ol);
      const rest = g.count - g.records.length;
      if (rest > 0) {
        li.append(button("show " + Math.min(rest, 100).toLocaleString("en") + " more of its " +
          rest.toLocaleString("en") + " not shown", () => moreOf(g), "more-of"));
      }
      list.append(li);
    }
    if (data.page < data.pages) {
      const li = el("li", null, "more");
      const left = data.clusters - data.groups.length;
      li.append(button("+ " + left.toLocaleString("en") + " more predicted cluster" + (left === 1 ? "" : "s"),
        () => moreClusters(), "more-clusters"));
      list.append(li);
    }
    if (data.outside_count) {
      const li = el("li", null, "group outside-group");
      li.append(el("div", data.outside_count.toLocaleString("en") + " not in release " + data.release +
        " (no predicted cluster): they cannot be added", "group-head"));
      const ol = el("ol", null, "members-of");
      for (const r of data.outside) ol.append(recordItem(r, false));
      li.append(ol);
      if (data.outside.length < data.outside_count) {
        li.append(button("show more of the " + (data.outside_count - data.outside.length).toLocaleString("en") +
          " not shown", () => moreOutside(), "more-outside"));
      }
      list.append(li);
    }
    hitTools();
  }

  // -- banners: an earlier answer of the same entity, others' answers -----------------------------------
  function banner(text, label, decision) {
    const div = el("div", null, "banner");
    div.append(el("span", text), " ");
    div.append(button(label, () => {
      for (const id of decision.added || []) names[id] = names[id] || "";
      remember("of “" + label + "”");
      load(decision); changed();
    }));
    $("#banners").append(div);
  }
  if (state.earlier) {
    const e = state.earlier;
    (e.added || []).forEach((id, i) => { names[id] = (e.added_names || [])[i] || ""; });
    banner("This entity was labelled before: draw " + e.draw + " by " + e.labeller + ". For this draw that answer " +
      "removes " + plural(e.removed.length, "record") + " and adds " + plural(e.added.length, "record") + ".",
      "Use that answer", e);
  }
  for (const o of state.others || []) {
    banner(o.labeller + " answered this draw (" + o.status + ", " + o.saved_at + "): removes " +
      plural(o.removed.length, "record") + " and adds " + plural(o.added.length, "record") + ".", "Use their answer", o);
  }

  // -- saving ---------------------------------------------------------------------------------------------
  function decision(status) {
    return { status: status, removed: Array.from(removed), added: Array.from(added.keys()),
      note: $("#note").value, reason: $("#reason").value, expected_version: version, seen: seen };
  }
  async function save(status) {
    status = status || ($("#unsure").checked ? "unsure" : "labelled");
    $("#status").textContent = "saving…";
    $("#status").className = "pending";
    let res, data;
    try {
      res = await fetch("/api/draw/" + encodeURIComponent(state.draw) + "/save", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(decision(status)) });
      data = await res.json();
    } catch (err) {
      $("#status").textContent = "not saved: the server did not answer (" + err + "); your answer is still here, save again";
      $("#status").className = "error";
      return;
    }
    if (res.status === 409) { conflict(data, status); return; }
    if (!res.ok) {
      $("#status").textContent = "not saved: " + (data.error || res.status);
      $("#status").className = "error";
      return;
    }
    version = data.saved.version;
    dirty = false;
    $("#status").textContent = "saved (" + data.saved.status + ", version " + version + ") at " + data.saved.saved_at;
    $("#status").className = "ok";
    checkQuality();
    $("#progress").textContent = data.progress.done.toLocaleString("en") + " of " +
      data.progress.draws.toLocaleString("en") + " draws labelled";
  }
  async function checkQuality() {
    const ul = $("#findings");
    ul.replaceChildren(el("li", "quality control: checking…", "pending"));
    try {
      const res = await fetch("/api/draw/" + encodeURIComponent(state.draw) + "/findings", { credentials: "same-origin" });
      const data = await res.json();
      if (!res.ok) throw new Error(data.error || res.status);
      findings(data.findings);
    } catch (err) {
      ul.replaceChildren(el("li", "quality control could not run: " + err.message, "soft"));
    }
  }
  function findings(list) {
    const ul = $("#findings");
    ul.replaceChildren();
    if (!list.length) { ul.append(el("li", "quality control: no finding, nothing to fix", "ok")); return; }
    for (const f of list) {
      const li = el("li", (f.critical ? "to fix: " : "to check: ") + f.message, f.critical ? "critical" : "soft");
      li.title = "quality control rule " + f.rule + " (" + f.rule_name + ")";
      ul.append(li);
    }
  }
  function describe(box, d) {
    box.replaceChildren();
    if (!d) { box.append(el("p", "(deleted)")); return; }
    box.append(el("p", d.status + (d.labeller ? " · " + d.labeller : "") + (d.saved_at ? " · " + d.saved_at : "")));
    for (const [what, ids] of [["removed", d.removed], ["added", d.added]]) {
      const p = el("p", what + " (" + plural(ids.length, "record") + "): ");
      p.append(el("span", ids.map((id) => (nameOf(id) || "") + " " + id).join("; "), "mono"));
      box.append(p);
    }
    if (d.note) box.append(el("p", "note: " + d.note));
  }
  function conflict(data, status) {
    const theirs = data.theirs;
    const mine = decision(status);
    $("#conflict-what").textContent = data.conflict === "version"
      ? "You saved this draw in another tab or window after this page was opened."
      : (theirs ? theirs.labeller : "Another labeller") + " saved an answer to this draw after this page was opened. " +
        "Keep mine saves yours as a second answer: the lead then chooses the draw's answer (the lead's view, or " +
        "'label reconcile'); until then the export asks for that choice.";
    $("#status").textContent = "not saved yet: this draw was saved meanwhile; choose in the dialog";
    $("#status").className = "pending";
    describe($("#conflict-theirs"), theirs);
    describe($("#conflict-mine"), mine);
    $("#conflict").hidden = false;
    $("#keep-mine").onclick = () => {
      $("#conflict").hidden = true;
      if (data.conflict === "version") version = theirs ? theirs.version : 0; else seen = data.seen;
      save(status);
    };
    $("#take-theirs").onclick = () => {
      $("#conflict").hidden = true;
      if (theirs) load(theirs);
      if (data.conflict === "version") {
        version = theirs ? theirs.version : 0;
        dirty = false;
        $("#status").textContent = "their save is kept (version " + version + ")";
      } else {
        seen = data.seen;
        dirty = false;
        $("#status").textContent = "their answer is kept; nothing saved for you";
      }
      $("#status").className = "ok";
    };
  }
  $("#save").addEventListener("click", () => save());
  $("#skip").addEventListener("click", () => {
    if (!$("#reason").value.trim()) {
      $("#status").textContent = "give the reason for skipping first";
      $("#status").className = "error";
      $("#reason").focus();
      return;
    }
    save("skipped");
  });
  for (const id of ["#note", "#reason"]) $(id).addEventListener("input", () => { dirty = true; });
  $("#unsure").addEventListener("change", () => { dirty = true; });
  window.addEventListener("beforeunload", (ev) => { if (dirty) { ev.preventDefault(); ev.returnValue = ""; } });

  // -- keyboard ---------------------------------------------------------------------------------------------
  function moveCursor(step) {
    const vis = visibleRows();
    if (!vis.length) return;
    const current = vis.indexOf(tbody.rows[cursor]);
    const next = Math.min(vis.length - 1, Math.max(0, current < 0 ? 0 : current + step));
    rows.forEach((r) => r.classList.remove("cursor"));
    vis[next].classList.add("cursor");
    cursor = Array.from(tbody.rows).indexOf(vis[next]);
    vis[next].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    const typing = t instanceof HTMLInputElement && t.type !== "checkbox" || t instanceof HTMLTextAreaElement;
    if (ev.key === "Escape") {
      $("#help").hidden = true;
      if (typing) t.blur();
      return;
    }
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const key = ev.key;
    if (key === "j") moveCursor(1);
    else if (key === "k") moveCursor(-1);
    else if (key === "x" || key === "X") { // x: this row; Shift+x: the range from the last row ticked, as Shift-click
      const r = tbody.rows[cursor];
      const box = r && !r.hidden && r.querySelector("input[type=checkbox]");
      if (box) {
        if (key === "X" && anchor && anchor !== r && anchor.isConnected && !anchor.hidden) tickRange(anchor, r, !box.checked);
        else tickOne(r, !box.checked);
        anchor = r;
      }
    } else if (key === "a") setRows(visibleRows(), true, "");
    else if (key === "u") setRows(visibleRows(), false, "");
    else if (key === "z") undo();
    else if (key === "+") addShown();
    else if (key === "/") $("#search").focus();
    else if (key === "f") $("#filter").focus();
    else if (key === "s") save();
    else if (key === "n") window.location.assign("/next");
    else if (key === "?") $("#help").hidden = !$("#help").hidden;
    else return;
    ev.preventDefault();
  });
  document.querySelectorAll(".overlay .close").forEach((b) => b.addEventListener("click", () => {
    b.closest(".overlay").hidden = true;
  }));

  // the action bar stays at the window's foot: the page keeps room for it below the last row, and the
  // side panel ends above it. Set on those two elements only, when the bar's height changes: a custom
  // property on the root would restyle every element of a 1,000-row table (~130 ms a time)
  const bar = $("#actionbar");
  let barHeight = -1;
  const fit = () => {
    const h = bar.offsetHeight;
    if (h === barHeight) return;
    barHeight = h;
    document.querySelector("main").style.paddingBottom = (h + 14) + "px";
    $(".side").style.maxHeight = "calc(100vh - " + (h + 16) + "px)";
  };
  if (window.ResizeObserver) new ResizeObserver(fit).observe(bar);
  fit();

  function start() {
    if (state.decision) {
      load(state.decision);
      $("#status").textContent = "saved before (" + state.decision.status + ", version " + version + ")";
      $("#status").className = "ok";
      findings(state.findings);
    } else {
      render();
    }
    applyFilter();
    document.body.dataset.ready = "1";
    if (window.performance && performance.mark) performance.mark("erx-ready");
  }
  // a large cluster: the first rows come with the page and are painted first; the rest are asked
  // right after the first paint (/draw/N/rows, the same rows' HTML from the server's templates)
  const more = document.getElementById("more-rows");
  if (more) {
    requestAnimationFrame(() => setTimeout(async () => {
      let failed = null;
      try {
        const res = await fetch(more.dataset.src, { credentials: "same-origin" });
        if (!res.ok) throw new Error(await res.text());
        const rowsHtml = document.createElement("template");
        rowsHtml.innerHTML = await res.text(); // escaped by the server's templates, as the page itself
        tbody.append(rowsHtml.content);
        index();
      } catch (err) {
        failed = err;
      }
      more.remove();
      start();
      if (failed) {
        $("#status").textContent = "the other " + Number(more.dataset.count).toLocaleString("en") +
          " members could not be listed (" + failed.message + "): reload the page before answering";
        $("#status").className = "error";
      }
    }, 0));
  } else {
    start();
  }
})();
