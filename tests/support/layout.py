"""Layout of a Data Docs page at a given window width, measured in headless Chromium.

The pages forbid scripts (Content-Security-Policy), so the measurement runs on a copy: the
same HTML and inline stylesheet, without the CSP ``<meta>``, with a script that measures the
laid-out page and writes the result into the DOM, which ``--dump-dom`` returns. Nothing of the
page's styling changes, so the copy lays out as the page does.

:func:`measure` returns, for the window width given:

* ``page_width``: the document's scroll width (wider than the window: something sticks out);
* ``overflowing_cells``: cells whose content is wider than the cell (text cut or spilling over
  its neighbours), and cells that stick out of their table;
* ``tables``: per table, its width, the width of the box it scrolls in, whether it scrolls
  inside that box, and the left and right edges of its status (first) column;
* ``status_hidden``: status cells of validation tables not wholly inside the window;
* ``nested_scrolling``: tables inside a cell (examples, groups) that fit only by scrolling.
"""

from __future__ import annotations

import html as html_module
import json
import re
import tempfile
from pathlib import Path

from support.chromium import _run

__all__ = ["measure"]

_SCRIPT = r"""
<script>
window.addEventListener('load', () => {
  const W = window.innerWidth;
  const out = {window: W, page_width: document.documentElement.scrollWidth, overflowing_cells: [],
               tables: [], status_hidden: []};
  const label = (el) => (el.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 80);
  for (const table of document.querySelectorAll('table')) {
    if (table.closest('td') && !table.classList.contains('er-results')) continue;  // nested tables: their cell counts
    const t = table.getBoundingClientRect();
    const box = table.closest('.table-responsive') || table.parentElement;
    const b = box.getBoundingClientRect();
    const scrolls = getComputedStyle(box).overflowX === 'auto' || getComputedStyle(box).overflowX === 'scroll';
    const first = table.querySelector('tbody > tr > td:first-child');
    const f = first ? first.getBoundingClientRect() : null;
    out.tables.push({cls: table.className, width: Math.round(t.width), box: Math.round(b.width),
                     scrolls: scrolls && box.scrollWidth > box.clientWidth,
                     status_left: f ? Math.round(f.left) : null, status_right: f ? Math.round(f.right) : null});
    for (const cell of table.querySelectorAll(':scope > tbody > tr > td, :scope > thead > tr > th, :scope > tr > td')) {
      const c = cell.getBoundingClientRect();
      if (cell.scrollWidth > cell.clientWidth + 1)
        out.overflowing_cells.push({why: 'content wider than cell', by: cell.scrollWidth - cell.clientWidth,
                                    text: label(cell)});
      if (c.right > t.right + 1 || c.left < t.left - 1)
        out.overflowing_cells.push({why: 'cell outside its table', text: label(cell)});
    }
    const validation = table.querySelector('tbody > tr[class^="er-row-"]');
    if (validation) {
      for (const row of table.querySelectorAll(':scope > tbody > tr[class^="er-row-"]')) {
        const cell = row.querySelector(':scope > td:first-child');
        const r = cell.getBoundingClientRect();
        if (r.left < -1 || r.right > W + 1 || r.width < 20) out.status_hidden.push(label(cell));
      }
    }
  }
  out.nested_scrolling = [];  // a table in a cell that only fits by scrolling sideways
  for (const box of document.querySelectorAll('td .table-responsive'))
    if (box.scrollWidth > box.clientWidth + 1) out.nested_scrolling.push(label(box));
  const pre = document.createElement('pre');
  pre.id = 'er-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def measure(page: str | Path, *, width: int = 1000, height: int = 1200, timeout: float = 90) -> dict:
    """The layout of ``page`` in a ``width`` px wide window (see the module docstring)."""
    text = Path(page).read_text(encoding="utf-8")
    text = re.sub(r'<meta[^>]+http-equiv="Content-Security-Policy"[^>]*>', "", text, flags=re.I)
    text = text.replace("</body>", _SCRIPT + "</body>")
    with tempfile.TemporaryDirectory(prefix="er-layout-") as folder:
        copy = Path(folder) / Path(page).name
        copy.write_text(text, encoding="utf-8")
        proc = _run(["--dump-dom", f"--window-size={int(width)},{int(height)}", "--virtual-time-budget=3000"],
                    copy.resolve().as_uri(), timeout)
    found = re.search(r'<pre id="er-layout">(.*?)</pre>', proc.stdout, flags=re.S)
    if not found:
        raise RuntimeError(f"no layout measured for {page} (exit {proc.returncode}): {proc.stderr[-800:]}")
    return json.loads(html_module.unescape(found.group(1)))
