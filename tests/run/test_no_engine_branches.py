"""The runner asks the data object and does not branch on engines or data kinds (issue 32).

Every module of ``er_expectations/run/`` outside ``run/data/`` is scanned for comparisons with
an engine's name (``engine == "sql"``, ``kind != "spark"``, ``"pandas" in ...``) and for
``isinstance`` switches on the data kinds. Until the move of issue 32 item 1 is finished the
modules that still branch are listed with their exact counts: a count may only go down (and its
entry then must be lowered, so the list records what is left); a new module must have none.
"""

from __future__ import annotations

import ast

from support.paths import REPO

from er_expectations.engines.registry import ENGINES

RUN = REPO / "er_expectations" / "run"
DATA_KINDS = {"ReleaseData", "LabelsData", "EngineReleases", "DataSources", "SqlSource", "SparkSource"}
#: What is left to move into the data objects (module: branches), 2026-11-28.
LEFT = {"runner.py": 6, "project.py": 6, "provenance.py": 1, "preflight.py": 5}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def branches(source: str) -> list[int]:
    """Lines comparing with an engine name, or switching with isinstance on a data kind."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(isinstance(p, ast.Constant) and p.value in ENGINES for p in parts):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2 and _names(node.args[1]) & DATA_KINDS:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_scan_finds_both_kinds_of_branch():
    assert branches('if data.engine == "sql":\n    pass\n') == [1]
    assert branches('x = 1 if kind != "spark" else 2\n') == [1]
    assert branches("if isinstance(data, (LabelsData, EngineReleases)):\n    pass\n") == [1]
    assert branches('if data.layout == "wide" and isinstance(x, int):\n    pass\n') == []


def test_runner_modules_do_not_branch_on_engines_or_data_kinds():
    found = {}
    for path in sorted(RUN.rglob("*.py")):
        relative = path.relative_to(RUN)
        if relative.parts[0] == "data":
            continue
        lines = branches(path.read_text(encoding="utf-8"))
        if lines:
            found[str(relative)] = lines
    over = {m: lines for m, lines in found.items() if len(lines) > LEFT.get(m, 0)}
    assert not over, f"new engine or data-kind branches in run/ (ask the data object instead): {over}"
    stale = {m: (n, len(found.get(m, []))) for m, n in LEFT.items() if len(found.get(m, [])) != n}
    assert not stale, f"lower LEFT to what is left (module: (listed, found)): {stale}"
