"""The runner asks the data object and does not branch on engines or data kinds (issue 32).

A checkpoint's data is one :class:`~er_expectations.run.data.base.CheckpointData` (``run/data/``:
files, a database or Spark, a labelling batch). Every module of ``er_expectations/run/`` outside
``run/data/``, ``cli/checkpoints.py`` and ``config/data.py`` is read with :mod:`ast` for

* a comparison with the name of an engine or data kind (``data.engine == "sql"``,
  ``kind != "spark"``, ``"pandas" in (...)``, ``engine in ("sql", "duckdb")``), and
* an ``isinstance`` on a data kind: a class defined under ``run/data/`` (the implementations and
  their sources) or a config model of a ``data`` section (``DataSources``, ``EngineData``).

A new engine is a ``run/data/`` module and a registry line; nothing here may need to know it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import REPO

from er_expectations.engines.registry import ENGINES

#: The names a branch on the kind of data would compare with: every engine, and the kinds.
KIND_NAMES = {*ENGINES, "files", "labels"}
#: The config models of a ``data`` section (config/data.py).
CONFIG_KINDS = {"DataSources", "EngineData"}


def data_classes(root: Path) -> set[str]:
    """The classes defined under ``run/data/`` (every CheckpointData implementation and source)."""
    folder = root / "er_expectations" / "run" / "data"
    return {node.name for path in folder.glob("*.py")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ClassDef)}


def scanned(root: Path) -> list[Path]:
    """The runner's modules (``run/`` outside ``run/data/``), ``cli/checkpoints.py`` and the
    config of a checkpoint's ``data`` section (``config/data.py``: what each engine allows is
    its registry line's ``CheckpointKeys``)."""
    run = root / "er_expectations" / "run"
    modules = [p for p in sorted(run.rglob("*.py")) if p.relative_to(run).parts[0] != "data"]
    return [*modules, root / "er_expectations" / "cli" / "checkpoints.py", root / "er_expectations" / "config" / "data.py"]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _literals(node: ast.AST) -> set[str]:
    """The strings of a constant or of a tuple, list or set of constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def branches(source: str, kinds: set[str], names: set[str] = KIND_NAMES) -> list[int]:
    """Lines comparing with one of ``names`` (of an engine or data kind), or switching with
    isinstance on one of ``kinds`` (class names)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            if any(_literals(part) & names for part in [node.left, *node.comparators]):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2 and _names(node.args[1]) & kinds:
            lines.append(node.lineno)
    return sorted(set(lines))


def found(root: Path) -> dict[str, list[int]]:
    """Every branch on an engine or data kind in the scanned modules of the tree at ``root`` (the
    data classes of this tree too: an older tree holds them outside ``run/data/``)."""
    kinds = data_classes(root) | data_classes(REPO) | CONFIG_KINDS
    out = {}
    config = root / "er_expectations" / "config" / "data.py"
    for path in scanned(root):
        # the config reads the YAML's own keys ("files" of a data section): only engine names there
        names = set(ENGINES) if path == config else KIND_NAMES
        lines = branches(path.read_text(encoding="utf-8"), kinds, names)
        if lines:
            out[str(path.relative_to(root))] = lines
    return out


def test_the_scan_finds_every_kind_of_branch():
    kinds = {"ReleaseData", "LabelsData", "EngineReleases", "DataSources"}
    assert branches('if data.engine == "sql":\n    pass\n', kinds) == [1]
    assert branches('x = 1 if kind != "spark" else 2\n', kinds) == [1]
    assert branches('ok = engine in ("sql", "duckdb")\n', kinds) == [1]
    assert branches('ok = "pandas" not in engines\n', kinds) == [1]
    assert branches("if isinstance(data, (LabelsData, EngineReleases)):\n    pass\n", kinds) == [1]
    assert branches("words = 'file' if isinstance(cfg.data, DataSources) else 'table'\n", kinds) == [1]
    assert branches('if data.layout == "wide" and isinstance(x, int):\n    pass\n', kinds) == []


def test_the_data_classes_are_those_of_run_data():
    classes = data_classes(REPO)
    assert {"ReleaseData", "LabelsData", "EngineReleases", "SqlSource", "SparkSource", "DuckDbSource"} <= classes


def test_runner_modules_do_not_branch_on_engines_or_data_kinds():
    branched = found(REPO)
    assert not branched, f"engine or data-kind branches outside run/data/ (ask the data object instead): {branched}"


def test_every_engine_of_the_registry_runs_checkpoints():
    """engines/registry.ENGINES is the one list of engines: each is a checkpoint's ``data.engine``,
    files (pandas) or one source under run/data/ (engine.SOURCES), and the config accepts it."""
    from typing import get_args

    from er_expectations.config.data import DataSources, EngineData
    from er_expectations.run.data.engine import SOURCES

    config = {*get_args(DataSources.model_fields["engine"].annotation),
              *get_args(EngineData.model_fields["engine"].annotation)}
    assert config == set(ENGINES)
    assert set(SOURCES) == set(get_args(EngineData.model_fields["engine"].annotation))
