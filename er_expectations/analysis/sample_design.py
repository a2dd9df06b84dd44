"""The sampling design recorded with a sample, its labels and its benchmark (SPEC 12.3; issue 28).

The weights of a benchmark are the inverse of each true cluster's chance to be drawn
(SPEC 1), so they can only be recomputed from the design the draws were made with. Under the
expected-errors design that is the floor λ and the ER system's pair probabilities (SPEC
12.3): a benchmark built with another floor or another pairs file has wrong weights and
nothing in the estimates says so. ``er-expectations sample`` therefore writes, beside the
worksheet, ``<worksheet>.design.json``; the workbench copies it into its project and writes
it beside the labels it exports; ``er-expectations benchmark`` reads it beside the labels and
refuses a contradicting option.

Why a sidecar file and not columns or Parquet metadata: a CSV file cannot hold metadata, and
constant columns would be shown to the labellers, edited in spreadsheets and copied into
every labels table the workbench writes; a small JSON file beside the table works the same
for both formats, is the pattern of the benchmark's manifest (SPEC 14.4), is written
atomically and can be read by a person. A labels file moved without it is treated as an old
sample (a warning names the design and floor used), never silently.

:func:`design_effect` is Kish's design effect of a benchmark's weights relative to drawing
records uniformly (the default design, whose effect is 1).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write_text

__all__ = ["DEFF_WARNING", "DESIGN_FORMAT", "DESIGN_SUFFIX", "SampleDesign", "design_effect", "design_path",
           "file_sha256", "read_design", "write_design"]

#: Appended to the worksheet's or labels file's name: ``sheet.csv`` → ``sheet.csv.design.json``.
DESIGN_SUFFIX = ".design.json"
#: What the file's ``format`` key says (a newer format is refused, not misread).
DESIGN_FORMAT = "er-expectations sample design 1"
#: Kish's design effect above which ``benchmark`` warns that intervals may under-cover
#: (benchmarks/README.md, "Design effect of the expected-errors weights"). The populations of
#: the coverage studies have, at the floor λ = 0.5, design effects 1.2 (RLdata10000, three pair
#: models) and 1.5 (the heavy-tailed population), where every metric covered ≥ 87 % and
#: ≥ 91.6 % at 800 draws; at λ = 0.1, 3.1–3.4 and 5.1, where pairwise recall covered 71–77 %
#: and b-cubed precision 78 %. 2 lies between, and a sample's own effect tends to fall short
#: of its population's (the heaviest weights are the rarest draws).
DEFF_WARNING = 2.0

DESIGNS = ("cluster_size", "uniform", "expected_errors")


def design_path(table: str | os.PathLike) -> Path:
    """The design file beside a worksheet or labels file."""
    p = Path(table)
    return p.with_name(p.name + DESIGN_SUFFIX)


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class SampleDesign:
    """How a sample was drawn (SPEC 1, 12.3): what ``benchmark`` needs to recompute its weights.

    ``name`` is ``cluster_size`` (records drawn uniformly) or ``expected_errors``; ``floor``,
    ``match_probabilities`` (the path as given), ``match_probabilities_path`` (absolute) and
    ``match_probabilities_sha256`` only for ``expected_errors``. ``release`` is the predicted
    cluster column, ``population`` its number of records (N of SPEC 12.3), ``draws`` and
    ``seed`` those of the sample.
    """

    name: str
    release: str
    record_id: str
    population: int
    draws: int
    seed: int | None = None
    floor: float | None = None
    match_probabilities: str | None = None
    match_probabilities_path: str | None = None
    match_probabilities_sha256: str | None = None

    @classmethod
    def drawn(cls, *, name: str, release: object, record_id: object, population: int, draws: int,
              seed: int | None, floor: float | None = None,
              match_probabilities: str | os.PathLike | None = None) -> SampleDesign:
        """The record of a sample just drawn (the pairs file is fingerprinted here)."""
        pairs = None if match_probabilities is None else Path(match_probabilities)
        return cls(name=name, release=str(release), record_id=str(record_id), population=int(population),
                   draws=int(draws), seed=None if seed is None else int(seed),
                   floor=None if name != "expected_errors" or floor is None else float(floor),
                   match_probabilities=None if pairs is None else str(match_probabilities),
                   match_probabilities_path=None if pairs is None else str(pairs.expanduser().resolve()),
                   match_probabilities_sha256=None if pairs is None else file_sha256(pairs))

    def as_dict(self) -> dict[str, Any]:
        """The JSON object written to the design file (and the benchmark's manifest)."""
        return {"format": DESIGN_FORMAT, **asdict(self)}

    @classmethod
    def problem(cls, data: object) -> str | None:
        """What is wrong with a design record (``None``: nothing), in words without a location."""
        if not isinstance(data, Mapping) or data.get("format") != DESIGN_FORMAT:
            return f"not a sample design of this version of er-expectations (expected format {DESIGN_FORMAT!r})"
        fields = {k: v for k, v in data.items() if k != "format"}
        unknown = sorted(set(fields) - set(cls.__dataclass_fields__))
        if unknown:
            return f"unknown key {unknown[0]!r} in the sample design"
        for key in ("name", "release", "record_id", "population", "draws"):
            if fields.get(key) is None:
                return f"key {key!r} of the sample design is missing"
        if fields["name"] not in DESIGNS:
            return f"design {fields['name']!r} is not one of {', '.join(DESIGNS)}"
        for key in ("population", "draws"):
            if isinstance(fields[key], bool) or not isinstance(fields[key], int) or fields[key] < 1:
                return f"{key} = {fields[key]!r} is not a whole number ≥ 1"
        if fields["name"] == "expected_errors":
            floor = fields.get("floor")
            if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 < floor <= 1:
                return f"the expected-errors design needs its floor in (0, 1], found {floor!r}"
            sha = fields.get("match_probabilities_sha256")
            if not isinstance(sha, str) or len(sha) != 64:
                return ("the expected-errors design needs the SHA-256 of its match-probability file (key "
                        "'match_probabilities_sha256')")
        return None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str) -> SampleDesign:
        """Read a design record; a wrong or incomplete one is an error naming ``where`` and the problem."""
        wrong = cls.problem(data)
        if wrong is not None:
            raise InputError(f"{where}: {wrong}; restore the file written with the sample")
        fields = {k: v for k, v in data.items() if k != "format"}
        if fields.get("floor") is not None:
            fields["floor"] = float(fields["floor"])
        return cls(**fields)

    def describe(self) -> str:
        """The design in words: ``expected_errors (floor 0.3, pairs.parquet sha256 1f2e…)``."""
        if self.name != "expected_errors":
            return self.name
        return (f"expected_errors (floor {self.floor:g}, match probabilities {self.match_probabilities} "
                f"sha256 {str(self.match_probabilities_sha256)[:12]}…)")


def write_design(table: str | os.PathLike, design: SampleDesign | None) -> Path:
    """Write ``design`` beside ``table`` atomically; ``None`` removes a design file left there by an
    earlier table of the same name (it would describe other draws). Returns the design file."""
    path = design_path(table)
    if design is None:
        path.unlink(missing_ok=True)
        return path
    try:
        atomic_write_text(path, json.dumps(design.as_dict(), indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        raise InputError(f"{path}: cannot write: {error.strerror or error}") from error
    return path


def read_design(table: str | os.PathLike, *, file: str | os.PathLike | None = None) -> SampleDesign | None:
    """The design recorded beside ``table`` (or in ``file``), or ``None`` when there is none (an
    older sample)."""
    path = design_path(table) if file is None else Path(file)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: the sample's design cannot be read ({exc}); restore the file written with the "
                         "sample, or delete it and give --design and --floor as the sample was drawn") from None
    return SampleDesign.from_dict(data, where=str(path))


@dataclass(frozen=True)
class DesignEffect:
    """Kish's design effect of a benchmark's weights: ``value`` = 1 + CV² of the per-draw relative
    weights over ``draws`` draws, and ``effective_draws`` = draws / value."""

    value: float
    draws: int

    @property
    def effective_draws(self) -> float:
        return self.draws / self.value

    def warning(self, threshold: float = DEFF_WARNING) -> str | None:
        """The warning to print when the effect is above ``threshold``, else ``None``."""
        if not math.isfinite(self.value) or self.value <= threshold:
            return None
        return (f"design effect {self.value:.1f}: the weights vary so much that intervals at {self.draws:,} draws "
                f"behave like {self.effective_draws:,.0f} draws drawn uniformly; intervals (recall and b-cubed "
                f"first) may cover less than their level. A larger floor (about 0.5) keeps the effect below 2 "
                f"(benchmarks/README.md)")


def design_effect(benchmark: pd.DataFrame, *, reference: str) -> DesignEffect:
    """Kish's design effect of the weights of ``benchmark`` (SPEC 1; issue 28).

    Each draw of true cluster c weighs v_c = |c|·w_c relative to drawing records uniformly
    (the size design gives w_c = 1/|c|: every v_c equal, effect 1). Over the k draws (a
    cluster drawn d_c times counted d_c times), deff = k·Σ d_c v_c² / (Σ d_c v_c)² = 1 + CV²
    of the per-draw weights (Kish 1965): the variance of a weighted mean is about deff times
    that of k uniform draws, so the sample is worth k/deff uniform draws.
    """
    rows = benchmark[benchmark[reference].notna()]
    if rows.empty:
        return DesignEffect(value=float("nan"), draws=0)
    grouped = rows.groupby(reference, sort=False)
    size = grouped.size().to_numpy(dtype=np.float64)
    weight = grouped["weight"].first().to_numpy(dtype=np.float64)
    draws = grouped["draws"].first().to_numpy(dtype=np.float64) if "draws" in rows.columns else np.ones(len(size))
    v = size * weight
    k = float(draws.sum())
    value = k * float(np.sum(draws * v * v)) / float(np.sum(draws * v)) ** 2
    return DesignEffect(value=value, draws=int(k))
