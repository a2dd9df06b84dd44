// Review mode of the labelling workbench: select records in the picture, tag them. Text only.
"use strict";
(function () {
  const state = JSON.parse(document.getElementById("state").textContent);
  const $ = (sel) => document.querySelector(sel);
  const chosen = new Map(); // id -> title
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function showSelected() {
    const ul = $("#selected");
    ul.replaceChildren();
    if (!chosen.size) ul.append(el("li", "none", "none"));
    for (const title of chosen.values()) ul.append(el("li", title));
  }
  $("#picture").addEventListener("click", (ev) => {
    const pt = ev.target.closest && ev.target.closest("button.pt");
    if (!pt) return;
    $("#detail").textContent = pt.title;
    $("#detail").className = "";
    const id = pt.dataset.id;
    if (chosen.has(id)) chosen.delete(id); else chosen.set(id, pt.title);
    pt.classList.toggle("chosen", chosen.has(id));
    showSelected();
  });
  $("#add-tag").addEventListener("click", async () => {
    const body = { tag: $("#tag").value, kind: $("#kind").value, records: Array.from(chosen.keys()) };
    const res = await fetch("/api/review/" + encodeURIComponent(state.draw) + "/tag", {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    const data = await res.json();
    if (!res.ok) {
      $("#status").textContent = "not saved: " + (data.error || res.status);
      $("#status").className = "error";
      return;
    }
    const t = data.tag;
    const list = $("#tags");
    const none = list.querySelector(".none");
    if (none) none.remove();
    list.append(el("li", t.tag + " (" + t.kind + ") · " + t.records.length + (t.records.length === 1 ? " record · " : " records · ") + t.labeller));
    $("#status").textContent = "tag saved";
    $("#status").className = "ok";
  });
  showSelected();
  document.body.dataset.ready = "1";
})();
