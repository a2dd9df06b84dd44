"""Where a drift check finds its baseline release in a batch (SPEC 10).

A GX batch holds one release. A drift expectation compares it with a *baseline* release,
so the baseline's prediction travels in the batch as one more column:

* ``<prediction_column>__baseline`` — the release before this one in the checkpoint's
  order (``baseline: previous``, the default);
* ``<prediction_column>__baseline__<label>`` — a pinned release (``baseline: <label>``);
* ``<baseline column>__release`` — the baseline's label on every row (null when the batch
  has no baseline: the first release), shown in the results.

The checkpoint runner adds these columns (:func:`add_baseline_columns`) to the release
tables when a suite declares drift checks; from Python, add them yourself (any column of
the batch can be named as ``baseline_column``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from er_expectations.core.hints import did_you_mean, quote_list

if TYPE_CHECKING:
    from er_expectations.config import ConfigIssue, SuiteConfig
    from er_expectations.run.data.base import BatchLayout, ReleaseSource
from er_expectations.analysis.baseline_columns import (
    PREVIOUS,
    baseline_label_column,
    default_baseline_column,
)

__all__ = [
    "PREVIOUS",
    "BaselineNeed",
    "add_baseline_columns",
    "baseline_releases",
    "baseline_needs",
    "check_baselines",
    "release_frames",
    "baseline_label_column",
    "default_baseline_column",
]










@dataclass(frozen=True, slots=True)
class BaselineNeed:
    """One baseline column a drift expectation of a suite reads, and which release fills it."""

    column: str
    baseline: str  # "previous" or a release label
    suite: Any  # the SuiteConfig
    expectation: Any  # the ExpectationConfig
    parameter: str = "baseline"  # where the release is named in the suite


def baseline_needs(suites: Sequence[SuiteConfig]) -> list[BaselineNeed]:
    """Every drift expectation of the suites with the baseline column it reads."""
    from er_expectations.gx.expectations import (
        EXPECTATION_TYPES,  # deferred: GX, for the classes' flags
    )

    needs = []
    for suite in suites:
        for cfg in suite.expectations:
            if not getattr(EXPECTATION_TYPES.get(cfg.name), "reads_baseline", False):
                continue
            baseline = str(cfg.kwargs.get("baseline") or PREVIOUS)
            column = cfg.kwargs.get("baseline_column") or default_baseline_column(
                str(cfg.kwargs.get("prediction_column")), baseline)
            needs.append(BaselineNeed(str(column), baseline, suite, cfg))
    return needs


def check_baselines(needs: Sequence[BaselineNeed], data: BatchLayout, checkpoint_name: str,
                    checkpoint_path: object, suites: Sequence[SuiteConfig] = ()) -> list[ConfigIssue]:
    """A pinned baseline must be a release of the checkpoint's predictions; one column, one baseline.

    The release a check pins by name (``suites``; the ``baseline_release`` of a control-limit
    check: its class's ``pinned_release_parameter``) must be one too.
    """
    from er_expectations.config import ConfigIssue
    from er_expectations.gx.expectations import (
        EXPECTATION_TYPES,  # deferred: GX, for the classes' flags
    )

    pinned = [BaselineNeed("", str(cfg.kwargs[parameter]), suite, cfg, parameter)
              for suite in suites for cfg in suite.expectations
              if (parameter := getattr(EXPECTATION_TYPES.get(cfg.name), "pinned_release_parameter", None))
              and cfg.kwargs.get(parameter)]
    issues: list[ConfigIssue] = []
    releases = data.all_releases() if needs or pinned else []
    labels = [r.label for r in releases]
    known = {r.key for r in releases} | set(labels)
    filled: dict[str, str] = {}
    for need in [*needs, *pinned]:
        cfg = need.expectation
        line, col = cfg.locations.get(need.parameter, (cfg.line, None))
        if need.parameter == "baseline_release":
            if need.baseline not in known:
                close = did_you_mean(need.baseline, labels)
                issues.append(ConfigIssue(
                    str(need.suite.path), line, col,
                    f"{cfg.name}: baseline_release '{need.baseline}' is not a release of checkpoint "
                    f"'{checkpoint_name}' ({checkpoint_path}), whose releases are "
                    f"{quote_list(labels, conjunction='and')}",
                    (f"{close} " if close else "") + "write the label of one of these releases"))
            continue
        if need.baseline != PREVIOUS and need.baseline not in known:
            close = did_you_mean(need.baseline, labels)
            issues.append(ConfigIssue(
                str(need.suite.path), line, col,
                f"{cfg.name}: baseline '{need.baseline}' is not a release of checkpoint '{checkpoint_name}' "
                f"({checkpoint_path}), whose releases are {quote_list(labels, conjunction='and')}",
                (f"{close} " if close else "") + "write baseline: previous, or the label of one of these releases"))
        elif filled.setdefault(need.column, need.baseline) != need.baseline:
            line, col = cfg.locations.get("baseline_column", (line, col))
            issues.append(ConfigIssue(
                str(need.suite.path), line, col,
                f"{cfg.name}: baseline_column '{need.column}' would hold two baselines "
                f"('{filled[need.column]}' and '{need.baseline}')",
                "leave baseline_column out (each baseline gets its own column) or give each baseline its own"))
    return issues


def baseline_releases(data: Any, needs: Sequence[BaselineNeed]) -> Callable[[ReleaseSource], dict[str, Any]]:
    """``baselines(release)``: each baseline column of ``needs`` -> the release that fills it
    for ``release`` (``None`` when it has none: the first release under ``previous``).

    The baseline of ``previous`` is the release before in the checkpoint's order
    (``data.select()``), whatever releases this run validates.
    """
    order = data.select(None)
    labels = [r.label for r in order]
    every = {**{r.key: r for r in data.all_releases()}, **{r.label: r for r in data.all_releases()}}
    wanted = {need.column: need.baseline for need in needs}

    def baselines(release: ReleaseSource) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for column, baseline in wanted.items():
            if baseline == PREVIOUS:
                i = labels.index(release.label) if release.label in labels else -1
                found[column] = order[i - 1] if i > 0 else None
            else:
                found[column] = every[baseline]  # known: check_baselines ran before
        return found

    return baselines


def release_frames(data: Any, needs: Sequence[BaselineNeed]) -> Callable[[ReleaseSource], pd.DataFrame]:
    """``frame(release)``: the release's table with the baseline columns its suites read.

    Without drift expectations it is ``data.frame``. The baselines are those of
    :func:`baseline_releases`; each baseline release's prediction is read once per run.
    """
    if not needs:
        return data.frame
    baselines_of = baseline_releases(data, needs)
    every = {**{r.key: r for r in data.all_releases()}, **{r.label: r for r in data.all_releases()}}
    pinned = {every[need.baseline].label for need in needs if need.baseline != PREVIOUS}
    cache: dict[str, pd.DataFrame] = {}

    def table(release: ReleaseSource) -> pd.DataFrame:
        if release.label not in cache:
            cache[release.label] = data.frame(release)[[data.id_column, data.prediction_column]]
        return cache[release.label]

    def frame(release: ReleaseSource) -> pd.DataFrame:
        own = data.frame(release)
        baselines = {column: (base.label, table(base)) if base is not None else (None, None)
                     for column, base in baselines_of(release).items()}
        # keep only what a later release can ask for: this release (the next one's previous)
        # and the pinned baselines
        for label in [label for label in cache if label not in pinned]:
            del cache[label]
        cache[release.label] = own[[data.id_column, data.prediction_column]]
        return add_baseline_columns(own, id_column=data.id_column, prediction_column=data.prediction_column,
                                    baselines=baselines)

    return frame


def add_baseline_columns(frame: pd.DataFrame, *, id_column: str, prediction_column: str,
                         baselines: Mapping[str, tuple[str | None, pd.DataFrame | None]]) -> pd.DataFrame:
    """``frame`` with, for each baseline column, the baseline release's prediction and label.

    ``baselines`` maps a column name to (baseline label, that release's table with
    ``id_column`` and ``prediction_column``), or (None, None) when this release has no
    baseline (its columns are then null). Rows are matched on the record id; a record
    absent from the baseline is null there.
    """
    out = frame.copy(deep=False)
    source = frame[prediction_column]
    for column, (label, table) in baselines.items():
        if table is None:
            out[column] = _nulls_like(source)
            out[baseline_label_column(column)] = pd.Series(pd.NA, index=out.index, dtype="string")
            continue
        values = table.set_index(id_column)[prediction_column]
        mapped = out[id_column].map(values)
        if pd.api.types.is_integer_dtype(values.dtype) and not pd.api.types.is_integer_dtype(mapped.dtype):
            mapped = out[id_column].map(values.astype("Int64")).astype("Int64")  # ids stay integers
        out[column] = mapped
        out[baseline_label_column(column)] = pd.Series(label, index=out.index, dtype="string")
    return out


def _nulls_like(source: pd.Series) -> pd.Series:
    """An all-null column of the kind of ``source`` (integers stay nullable integers)."""
    if pd.api.types.is_integer_dtype(source.dtype):
        return pd.Series(pd.NA, index=source.index, dtype="Int64")
    return pd.Series(None, index=source.index, dtype=object)
