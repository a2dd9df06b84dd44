"""The provenance lines of a validation page: what was read, by what, when (issue 18).

A checkpoint run (:mod:`er_expectations.run.provenance`) stores its provenance in each
validation result's ``meta["er_provenance"]``; the benchmark's use in this release (clusters and
draws used, clusters and records set aside because the release lacks them) is read from the
results themselves, where every estimate records it. A result validated outside a checkpoint
run (native GX) has no such meta: its page then says so instead of showing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BATCH_META_KEYS", "PROVENANCE_KEY", "benchmark_use", "code_revision_text", "provenance_lines",
           "publishable_meta"]

#: The key of the validation results' ``meta`` that holds the provenance (the run layer writes it).
PROVENANCE_KEY = "er_provenance"


#: The entries of a GX result's ``meta`` that describe the batch (GX shows them under "Show more
#: info"): a file's absolute path sits in ``batch_spec.path``.
BATCH_META_KEYS = ("batch_spec", "batch_kwargs", "batch_request", "batch_parameters", "active_batch_definition",
                   "batch_markers")


def _publishable_path(value: str, base: Path | None) -> str:
    """An absolute local path as a path relative to ``base`` when inside it, else ``…/<file name>``."""
    path = Path(value)
    if base is not None:
        for root in dict.fromkeys((Path(base), Path(os.path.realpath(base)))):
            try:
                return path.relative_to(root).as_posix() or "."
            except ValueError:
                continue
    return f"…/{path.name}"


def _publishable(value: Any, base: Path | None) -> Any:
    if isinstance(value, Mapping):
        return {k: _publishable(v, base) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_publishable(v, base) for v in value]
    if isinstance(value, str) and "\n" not in value and (value.startswith("/") or os.path.isabs(value)) \
            and "://" not in value:
        return _publishable_path(value, base)
    return value


def publishable_meta(meta: Mapping[str, Any] | None, *, base: str | os.PathLike | None) -> dict[str, Any]:
    """A GX result's ``meta`` whose batch description (:data:`BATCH_META_KEYS`: GX's batch spec with
    the file GX read, …) holds no absolute local path: a path inside ``base`` (the project folder)
    becomes relative to it, any other ``…/<file name>`` (issue 29 item 3). Other entries unchanged."""
    out = dict(meta or {})
    where = Path(base) if base is not None else None
    for key in BATCH_META_KEYS:
        if key in out and out[key] is not None:
            out[key] = _publishable(out[key], where)
    return out


def _size(n: Any) -> str:
    if not isinstance(n, int) or isinstance(n, bool):
        return "size unknown"
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _file(fact: Mapping[str, Any]) -> str:
    """``path (12.3 MB, SHA-256 <64 hex digits>)``: the full hash (the page shows it shortened,
    :func:`~er_expectations.gx.docs.html_view.hashes`); a source of a database or Spark by its table or query."""
    if "path" in fact and ("sha256" in fact or "error" in fact):
        if fact.get("error"):
            return f"{fact['path']} (not hashed: {fact['error']})"
        return f"{fact['path']} ({_size(fact.get('bytes'))}, SHA-256 {fact.get('sha256')})"
    for key in ("table", "query", "path", "url"):
        if fact.get(key):
            return f"{key} {fact[key]}"
    return "–"


def code_revision_text(code: Mapping[str, Any]) -> str:
    """The code that ran, in words: its git commit and whether the package's files were unchanged from
    it (run from a checkout), or the installed distribution; and the SHA-256 of the package's files."""
    git = code.get("git") if isinstance(code.get("git"), Mapping) else None
    files = f"package files SHA-256 {code.get('files_sha256', '?')}"
    if git is not None:
        changed = git.get("changed")
        state = ("clean: the package's files are those of the commit" if git.get("clean") else
                 f"NOT clean: {changed} file(s) of the package changed since the commit" if isinstance(changed, int)
                 else "NOT clean: the package's files changed since the commit")
        return f"git commit {git.get('commit', '?')} ({state}); {files}"
    return f"installed distribution er-expectations {code.get('version', '?')}; {files}"


def benchmark_use(results: Sequence[Any]) -> dict[str, Any] | None:
    """Clusters and draws of the benchmark used on this release, those set aside because the
    release lacks their records (SPEC 2.1), and the records of the release added after the
    benchmark was labelled (SPEC 14), from the first result that records them."""
    for result in results:
        body = result.get("result") if isinstance(result, Mapping) else getattr(result, "result", None)
        details = body.get("details") if isinstance(body, Mapping) else None
        if isinstance(details, Mapping) and isinstance(details.get("clusters_set_aside"), int):
            keys = ("clusters", "draws", "clusters_set_aside", "records_set_aside")
            if all(isinstance(details.get(k), int) for k in keys):
                use: dict[str, Any] = {k: int(details[k]) for k in keys}
                for key in ("records_added", "records_added_in_sampled"):
                    use[key] = int(details[key]) if isinstance(details.get(key), int) else 0
                known = details.get("known_column")
                use["known_column"] = known if isinstance(known, str) else None
                version = details.get("benchmark_version")
                use["benchmark_version"] = version if isinstance(version, int) else None
                return use
    return None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def universe_text(use: Mapping[str, Any]) -> str:
    """What the benchmark's labelling universe did on this release (SPEC 14), in words."""
    if use.get("known_column") is None:
        return ("the benchmark does not record which records were known when it was labelled, so every record "
                "of this release is evaluated: a record added since labelling to the predicted cluster of a "
                "benchmark entity counts as an error (rebuild the benchmark with er-expectations benchmark, "
                "SPEC 14)")
    version = use.get("benchmark_version")
    head = f"benchmark version {version}" if version is not None else f"records known at labelling ({use['known_column']})"
    added = int(use.get("records_added") or 0)
    if not added:
        return f"{head}: every record of this release was known when the benchmark was labelled"
    inside = int(use.get("records_added_in_sampled") or 0)
    verb = "is" if added == 1 else "are"
    pronoun = "it is" if added == 1 else "they are"
    return (f"{head}: {_plural(added, 'record')} of this release {verb} unknown to the benchmark (not in the "
            f"release it was labelled or topped up on; {inside:,} of them in the predicted clusters of sampled "
            f"records); {pronoun} not evaluated (SPEC 14; a top-up labels them)")


def provenance_lines(meta: Mapping[str, Any] | None, results: Sequence[Any]) -> list[tuple[str, str]]:
    """(heading, text) lines for the page's overview, in reading order."""
    found = (meta or {}).get(PROVENANCE_KEY) if isinstance(meta, Mapping) else None
    lines: list[tuple[str, str]] = []
    if not isinstance(found, Mapping):
        lines.append(("Provenance", "not recorded: this result was not produced by an er-expectations "
                      "checkpoint run (run it with er-expectations run to record its inputs and versions)"))
    else:
        release = found.get("release") if isinstance(found.get("release"), Mapping) else {}
        run = found.get("run") if isinstance(found.get("run"), Mapping) else {}
        soft = found.get("software") if isinstance(found.get("software"), Mapping) else {}
        if release.get("label"):
            lines.append(("Release", str(release["label"])))
        lines.append(("Run", f"{run.get('name', '?')} at {run.get('time', '?')} (run id {run.get('id', '?')})"))
        lines.append(("Software", f"er-expectations {soft.get('er_expectations', '?')}, Great Expectations "
                      f"{soft.get('great_expectations', '?')}, Python {soft.get('python', '?')}"))
        code = soft.get("code")
        if isinstance(code, Mapping):
            lines.append(("Code revision", code_revision_text(code)))
        if isinstance(found.get("checkpoint"), Mapping):
            lines.append(("Checkpoint file", _file(found["checkpoint"])))
        for suite in found.get("suites") or []:
            if isinstance(suite, Mapping):
                lines.append((f"Suite {suite.get('name', '?')}", _file(suite)))
        for fact in found.get("inputs") or []:
            if isinstance(fact, Mapping):
                lines.append((f"Input: {fact.get('role', '?')}", _file(fact)))
        if isinstance(release.get("table"), Mapping):
            lines.append(("Release table validated", _file(release["table"]) + " (inside the GX project)"))
    use = benchmark_use(results)
    if use is not None:
        total = use["clusters"] + use["clusters_set_aside"]
        text = f"{use['clusters']:,} of its {total:,} sampled clusters used ({use['draws']:,} draws)"
        if use["clusters_set_aside"]:
            text += (f"; {use['clusters_set_aside']:,} cluster(s) ({use['records_set_aside']:,} records) set aside "
                     "because this release does not hold their records (SPEC 2.1)")
        elif use["records_set_aside"]:
            n = use["records_set_aside"]
            text += f"; {n:,} benchmark record{'s' if n != 1 else ''} not in this release set aside"
        lines.append(("Benchmark in this release", text))
        lines.append(("Records known at labelling", universe_text(use)))
    return lines
