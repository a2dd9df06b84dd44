"""The benchmark's manifest (SPEC 14): which release and which records each version knew.

A benchmark file written by ``er-expectations benchmark`` holds one row per record known at
labelling (column ``benchmark_version``). Beside it, ``<file>.manifest.json`` records for
auditors what the rows cannot say: the release each version was labelled or topped up on,
the number of records known and a fingerprint of their ids (so that a changed or truncated
benchmark file is detected), the design and what the labels were built from. The file is
plain JSON, written atomically; a benchmark without one still works (its rows carry the rule).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write_text
from er_expectations.engines.base import KNOWN_COLUMN

__all__ = ["MANIFEST_FORMAT", "MANIFEST_SUFFIX", "check_manifest", "manifest_path", "new_manifest",
           "read_manifest", "record_fingerprint", "version_entry", "write_manifest"]

#: Appended to the benchmark file's name: ``benchmark.parquet`` → ``benchmark.parquet.manifest.json``.
MANIFEST_SUFFIX = ".manifest.json"
#: What the manifest's ``format`` key says (a newer format is refused, not misread).
MANIFEST_FORMAT = "er-expectations benchmark manifest 1"


def manifest_path(benchmark: str | os.PathLike) -> Path:
    """The manifest beside a benchmark file."""
    p = Path(benchmark)
    return p.with_name(p.name + MANIFEST_SUFFIX)


def record_fingerprint(ids: pd.Series | np.ndarray) -> str:
    """A fingerprint of a set of record ids, independent of their order and of the file format
    (SPEC 14): every id is hashed as its text (``12`` and ``"12"`` alike), so that a benchmark
    read from Parquet (integer ids) or from CSV (ids read back as text) gives the same value."""
    values = pd.Series(ids)
    if values.isna().any():
        raise InputError("record ids for the fingerprint contain nulls; every known record has an id")
    hashed = pd.util.hash_array(values.astype(str).to_numpy(dtype=object))
    return "sha256:" + hashlib.sha256(np.sort(hashed).tobytes()).hexdigest()


def version_entry(*, version: int, release: str, known: pd.Series, added: int, benchmark_records: int,
                  clusters: int, draws: int, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One version of the benchmark: the release it was made on, what it knew and added."""
    return {
        "version": int(version),
        "made_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "release": str(release),
        "known_records": int(len(known)),
        "records_added_by_this_version": int(added),
        "fingerprint": record_fingerprint(known),
        "benchmark_records": int(benchmark_records),
        "clusters": int(clusters),
        "draws": int(draws),
        "source": dict(source or {}),
    }


def new_manifest(benchmark: pd.DataFrame, *, record_id: str, reference: str, release: str,
                 design: Mapping[str, Any], source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of a benchmark just built from labels (version 1)."""
    if KNOWN_COLUMN not in benchmark.columns:
        raise InputError(f"the benchmark has no {KNOWN_COLUMN!r} column: it does not record its labelling universe")
    bench = benchmark[reference].notna()
    entry = version_entry(version=1, release=release, known=benchmark[record_id], added=len(benchmark),
                          benchmark_records=int(bench.sum()), clusters=int(benchmark.loc[bench, reference].nunique()),
                          draws=int(benchmark.attrs.get("draws", 0)), source=source)
    return {"format": MANIFEST_FORMAT, "record_id": record_id, "reference": reference,
            "design": dict(design), "versions": [entry]}


def write_manifest(benchmark: str | os.PathLike, manifest: Mapping[str, Any]) -> Path:
    """Write the manifest beside ``benchmark`` atomically; returns its path."""
    path = manifest_path(benchmark)
    atomic_write_text(path, json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
    return path


def read_manifest(benchmark: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest beside ``benchmark``, or ``None`` when there is none."""
    path = manifest_path(benchmark)
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: the benchmark's manifest cannot be read ({exc}); restore it from the copy made "
                         "with the benchmark, or delete it (the benchmark's rows still carry its records)") from None
    if not isinstance(found, dict) or found.get("format") != MANIFEST_FORMAT or \
            not isinstance(found.get("versions"), list) or not found["versions"]:
        raise InputError(f"{path}: not a benchmark manifest of this version of er-expectations "
                         f"(expected format {MANIFEST_FORMAT!r} and a list of versions)")
    return found


def check_manifest(manifest: Mapping[str, Any], benchmark: pd.DataFrame, *, record_id: str,
                   where: str) -> None:
    """The benchmark's rows are the records its manifest's latest version knew (SPEC 14).

    A benchmark file edited, truncated or swapped after it was written no longer matches:
    that is an error naming the file and both counts, not a silently different universe.
    """
    latest = manifest["versions"][-1]
    if KNOWN_COLUMN not in benchmark.columns:
        raise InputError(f"{where}: the manifest says the benchmark knows {latest['known_records']:,} records, but "
                         f"the file has no {KNOWN_COLUMN!r} column; restore the file written with the manifest")
    known = benchmark.loc[benchmark[KNOWN_COLUMN].notna(), record_id]
    if len(known) != int(latest["known_records"]) or record_fingerprint(known) != latest["fingerprint"]:
        raise InputError(
            f"{where}: the benchmark's known records ({len(known):,}) are not those its manifest records for "
            f"version {latest['version']} ({int(latest['known_records']):,} records, fingerprint "
            f"{str(latest['fingerprint'])[:19]}…); the file was changed after it was written: restore it, or "
            "rebuild it with er-expectations benchmark")
