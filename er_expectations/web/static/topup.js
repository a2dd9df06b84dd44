// The top-up page of the labelling workbench (er-expectations, SPEC 14.3): answer yes or no for
// each new record of a person, add new records found by search, save. Every record value is put
// in the page with textContent (never as HTML); ids stay text.
"use strict";
(function () {
  const state = JSON.parse(document.getElementById("state").textContent);
  const $ = (sel) => document.querySelector(sel);
  const belongs = new Map(Object.entries(state.belongs || {}));
  const found = new Map((state.found || []).map((r) => [r.id, r]));
  let version = state.version || 0;
  let dirty = false;
  const rows = Array.from(document.querySelectorAll("#candidates tbody tr"));

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
  function status(text, cls) {
    const s = $("#status");
    s.textContent = text;
    s.className = cls || "";
  }

  function paint() {
    for (const r of rows) {
      const a = belongs.get(r.dataset.id);
      r.querySelector("button.yes").setAttribute("aria-pressed", a === "yes" ? "true" : "false");
      r.querySelector("button.no").setAttribute("aria-pressed", a === "no" ? "true" : "false");
    }
    const done = rows.filter((r) => belongs.has(r.dataset.id)).length;
    $("#answered").textContent = done + " of " + rows.length + " answered";
    const list = $("#found");
    list.replaceChildren();
    if (!found.size) list.append(el("li", "none", "none"));
    for (const [id, r] of found) {
      const li = el("li");
      li.dataset.id = id;
      li.append(el("span", r.name, "name"), " ", el("span", id, "mono"), " ",
        button("remove", () => { found.delete(id); touch(); }, "remove"));
      list.append(li);
    }
  }
  function touch() {
    dirty = true;
    status("not saved yet", "pending");
    paint();
  }
  function answer(id, value) {
    belongs.set(id, value);
    touch();
  }
  for (const r of rows) {
    r.querySelector("button.yes").addEventListener("click", () => answer(r.dataset.id, "yes"));
    r.querySelector("button.no").addEventListener("click", () => answer(r.dataset.id, "no"));
  }
  $("#all-yes").addEventListener("click", () => { for (const r of rows) belongs.set(r.dataset.id, "yes"); touch(); });
  $("#all-no").addEventListener("click", () => { for (const r of rows) belongs.set(r.dataset.id, "no"); touch(); });

  async function search() {
    const q = $("#search").value.trim();
    const hits = $("#hits");
    hits.replaceChildren();
    if (!q) return;
    const res = await fetch("/api/entity/" + encodeURIComponent(state.task) + "/search?q=" + encodeURIComponent(q),
      { credentials: "same-origin" });
    const body = await res.json();
    if (!res.ok) { hits.append(el("li", body.error, "error")); return; }
    if (!body.hits.length) hits.append(el("li", "no record found", "none"));
    for (const h of body.hits) {
      const li = el("li", null, h.addable ? "addable" : "not-addable");
      li.dataset.id = h.id;
      li.append(el("span", h.name, "name"), " ", el("span", h.id, "mono"));
      if (h.addable) {
        li.append(" ", button(found.has(h.id) ? "added" : "add", (ev) => {
          found.set(h.id, h);
          ev.target.textContent = "added";
          touch();
        }, "add"));
      } else {
        li.append(" ", el("span", "(" + h.reason + ")", "reason"));
      }
      li.append(el("div", h.cells.join(" · "), "cells"));
      hits.append(li);
    }
  }
  $("#search-go").addEventListener("click", search);
  $("#search").addEventListener("keydown", (ev) => { if (ev.key === "Enter") search(); });

  async function save() {
    status("saving…", "pending");
    const payload = { belongs: Object.fromEntries(belongs), found: Array.from(found.keys()), expected_version: version };
    let res;
    try {
      res = await fetch("/api/entity/" + encodeURIComponent(state.task) + "/save", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(payload) });
    } catch (e) {
      status("not saved: the workbench did not answer (" + e + "); your answers stay on this page, save again", "error");
      return;
    }
    const body = await res.json();
    if (res.ok) {
      version = body.saved.version;
      dirty = false;
      $("#progress").textContent = body.progress.done + " of " + body.progress.entities + " entities answered";
      status("saved (version " + version + ")", "ok");
    } else if (res.status === 409) {
      const who = body.theirs ? body.theirs.labeller : "someone";
      status("not saved: " + who + " saved this person meanwhile; reload the page to see their answer", "error");
    } else {
      status("not saved: " + body.error, "error");
    }
  }
  $("#save").addEventListener("click", save);
  window.addEventListener("beforeunload", (ev) => { if (dirty) { ev.preventDefault(); ev.returnValue = ""; } });
  paint();
  document.body.dataset.ready = "1";
})();
