"""Report the package's structure: modules, lines per layer, import cycles, private imports.

Every ``import`` statement counts, those written inside functions included, so an import
moved into a function is no way around a cycle. Run ``python tools/archcheck.py`` for the
report, ``--check`` to exit 1 when there is a cycle, a private name imported from another
module, a layer importing the package root, a module over the line limit, or more function-level
imports that defer nothing than the recorded count (docs/dev/architecture.md).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = "er_expectations"
MAX_LINES = 800
#: Function-level imports that defer nothing may not grow past this count (issue 32 item 5:
#: lower it as they are moved to the top of their modules; never raise it).
MAX_IDLE_IMPORTS = 95


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def collect(root: Path) -> tuple[dict[str, Path], dict[str, set[str]], list[tuple[str, str, str]]]:
    files = {module_name(p, root): p for p in sorted((root / PACKAGE).rglob("*.py"))
             if "migrations" not in p.parts}
    edges: dict[str, set[str]] = defaultdict(set)
    private: list[tuple[str, str, str]] = []
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _known(alias.name, files)
                    if target:
                        edges[mod].add(target)
            elif isinstance(node, ast.ImportFrom):
                base = resolve(mod, is_pkg, node.level, node.module)
                if not base.startswith(PACKAGE):
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in files:
                        edges[mod].add(sub)
                    else:
                        target = _known(base, files)
                        if target:
                            edges[mod].add(target)
                        if alias.name.startswith("_") and not alias.name.startswith("__") \
                                and target and target != mod:
                            private.append((mod, target, alias.name))
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
                pass
    for mod in edges:
        edges[mod].discard(mod)
    return files, edges, private


def _known(name: str, files: dict[str, Path]) -> str | None:
    while name:
        if name in files:
            return name
        name = name.rpartition(".")[0]
    return None


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported: outside functions and classes'
    methods, and not under ``if TYPE_CHECKING:``."""
    out: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If):
            test = node.test
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name != "TYPE_CHECKING":
                todo.extend(node.body)
            todo.extend(node.orelse)
        elif isinstance(node, (ast.Try, ast.With, ast.ClassDef)):
            for field in ("body", "handlers", "orelse", "finalbody"):
                for child in getattr(node, field, []):
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return out


def _function_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements written inside a function (they run when the function is called)."""
    out: list[ast.Import | ast.ImportFrom] = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in fn.body:
                out.extend(n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    # a function nested in a function is walked twice: keep each statement once
    return list({id(n): n for n in out}.values())


def _targets(node: ast.Import | ast.ImportFrom, mod: str, is_pkg: bool, files: dict[str, Path]) -> list[str]:
    """What an import statement loads: package modules by name, other modules by top package."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = resolve(mod, is_pkg, node.level, node.module)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
    out = []
    for name in names:
        if name.startswith(PACKAGE):
            known = _known(name, files)
            if known:
                out.append(known)
        else:
            out.append(name.split(".")[0])
    return out


def idle_imports(root: Path) -> list[str]:
    """Function-level imports that defer nothing (issue 32 item 5): the module they load is
    already loaded by the importing module's own import (its top-level imports, followed through
    the package's modules and their parent packages, and the outside packages those import at
    top level). Outside packages loaded only indirectly by other libraries are not known to this
    static count, so it can only miss idle imports, never call a deferring one idle."""
    files = {module_name(p, root): p for p in sorted((root / PACKAGE).rglob("*.py"))
             if "migrations" not in p.parts}
    trees = {m: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for m, p in files.items()}
    top: dict[str, set[str]] = {}
    for mod, tree in trees.items():
        is_pkg = files[mod].name == "__init__.py"
        targets = {t for node in _top_level_imports(tree) for t in _targets(node, mod, is_pkg, files)}
        parts = mod.split(".")
        targets |= {".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in files}
        top[mod] = targets - {mod}
    loaded: dict[str, set[str]] = {}
    for mod in files:
        seen = {mod}
        todo = [mod]
        while todo:
            for t in top.get(todo.pop(), ()):
                if t not in seen:
                    seen.add(t)
                    if t in files:
                        todo.append(t)
        loaded[mod] = seen
    out = []
    for mod, tree in trees.items():
        is_pkg = files[mod].name == "__init__.py"
        for node in _function_imports(tree):
            targets = _targets(node, mod, is_pkg, files)
            if targets and all(t in loaded[mod] for t in targets):
                out.append(f"{mod}:{node.lineno} {', '.join(dict.fromkeys(targets))}")
    return sorted(out)


def cycles(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def layer_of(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def report(root: Path) -> dict:
    files, edges, private = collect(root)
    lines = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in files.items()}
    per_layer: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for m, n in lines.items():
        per_layer[layer_of(m)][0] += 1
        per_layer[layer_of(m)][1] += n
    cyc = cycles(sorted(files), edges)
    largest = max(lines, key=lines.get)
    root_imports = sorted(m for m, targets in edges.items() if PACKAGE in targets and m != PACKAGE)
    return {
        "modules": len(files),
        "lines": sum(lines.values()),
        "layers": {k: {"modules": v[0], "lines": v[1]} for k, v in sorted(per_layer.items())},
        "cycles": cyc,
        "private_imports": [f"{a} imports {c} from {b}" for a, b, c in private],
        "root_imports": root_imports,
        "largest": {"module": largest, "lines": lines[largest]},
        "over_limit": sorted(m for m, n in lines.items() if n > MAX_LINES),
        "idle_imports": idle_imports(root),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on a cycle, private import or long module")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--idle", action="store_true", help="list the function-level imports that defer nothing")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    rep = report(root)
    if args.json:
        print(json.dumps(rep, indent=2))
    else:
        print(f"modules: {rep['modules']}, lines: {rep['lines']}")
        for layer, v in rep["layers"].items():
            print(f"  {layer:<20} {v['modules']:>3} modules {v['lines']:>6} lines")
        print(f"import cycles: {len(rep['cycles'])}")
        for c in rep["cycles"]:
            print(f"  {len(c)} modules: {', '.join(c)}")
        print(f"private names imported across modules: {len(rep['private_imports'])}")
        for p in rep["private_imports"]:
            print(f"  {p}")
        print(f"modules importing the package root (the public API, above every layer): "
              f"{len(rep['root_imports'])} {rep['root_imports']}")
        print(f"largest module: {rep['largest']['module']} ({rep['largest']['lines']} lines)")
        print(f"modules over {MAX_LINES} lines: {len(rep['over_limit'])} {rep['over_limit']}")
        print(f"function-level imports that defer nothing: {len(rep['idle_imports'])} "
              f"(at most {MAX_IDLE_IMPORTS}; --idle lists them)")
        if args.idle:
            for line in rep["idle_imports"]:
                print(f"  {line}")
    bad = rep["cycles"] or rep["private_imports"] or rep["over_limit"] or rep["root_imports"]
    if len(rep["idle_imports"]) > MAX_IDLE_IMPORTS:
        print(f"{len(rep['idle_imports'])} function-level imports defer nothing, more than {MAX_IDLE_IMPORTS}: "
              "move the new ones to the top of their module (python tools/archcheck.py --idle lists them)",
              file=sys.stderr)
        bad = True
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
