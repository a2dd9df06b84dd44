// The queue page: filter the draws, n opens the next draw. No framework; text only.
"use strict";
(function () {
  const input = document.getElementById("queue-filter");
  const rows = Array.from(document.querySelectorAll("#queue tbody tr"));
  const texts = new Map(rows.map((r) => [r, r.textContent.toLowerCase()]));
  input.addEventListener("input", () => {
    const q = input.value.trim().toLowerCase();
    for (const r of rows) r.hidden = q !== "" && !texts.get(r).includes(q);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "n") { ev.preventDefault(); window.location.assign("/next"); }
  });
})();
