"""``erx.estimate_by_group``: performance by subgroup of entities and the gaps between them (SPEC 8).

Groups come either from an entity-level column (``group_column=``: constant within a true
cluster, e.g. a country or a team's own segment) or from ethnicity imputed from surnames
(``surname=``, :func:`er_expectations.analysis.ethnicity.impute_ethnicity`, whose categories
``groups`` maps to group names). The estimates are the domain estimators of
:mod:`er_expectations.stats.subgroups`; only group aggregates are returned, never a
cluster's imputed ethnicity.

Importing this module imports neither ethnicolr nor torch; the surname path imports the
imputation when it is used.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.base import WeightsSpec
from er_expectations.engines.groups import cluster_attribute
from er_expectations.engines.pandas.release import PandasRelease, check_column
from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    METRICS,
    BenchmarkSample,
    check_beta,
    check_ci_level,
    check_interval_options,
    interval_seed,
    uses_bootstrap,
)
from er_expectations.stats.blind_spot import group_blind_spots
from er_expectations.stats.subgroups import (
    ADJUSTMENTS,
    COMPARISONS,
    DEFAULT_MIN_DRAWS,
    MEMBERSHIPS,
    GroupResult,
    Membership,
    check_min_draws,
    check_subgroup_metrics,
    estimate_groups,
)

__all__ = [
    "GROUP_COLUMNS",
    "estimate_by_group",
    "groups_chart",
    "groups_spec",
    "wrap_label",
    "groups_frame",
    "membership_from_attribute",
    "membership_from_ethnicity",
    "parse_groups",
    "sample_membership",
]

#: Columns of the frame returned by :func:`estimate_by_group`.
GROUP_COLUMNS = ("estimate", "std_error", "ci_lower", "ci_upper", "draws", "clusters", "comparison",
                 "disparity", "disparity_se", "disparity_ci_lower", "disparity_ci_upper", "p_value",
                 "p_adjusted", "status", "note", "ci_method", "disparity_ci_method", "zero_event")


def _choice(value: object, choices: Sequence[str], parameter: str) -> str:
    if not isinstance(value, str) or value not in choices:
        close = did_you_mean(str(value), choices)
        raise InputError(f"{parameter}={value!r} is not one of {', '.join(choices)}{'; ' + close if close else ''}")
    return value


def _is_value(value: object) -> bool:
    """A group name or value: a non-blank text or a number (compared as text), not a boolean or a list."""
    return isinstance(value, str | numbers.Real) and not isinstance(value, bool) and bool(str(value).strip())


def parse_groups(groups: object, *, parameter: str = "groups") -> dict[str, tuple[str, ...]] | None:
    """``groups`` as {group name: values}: None, a list of values (one group each) or a mapping.

    A mapping's value may be one text or a list of texts. Values are compared as text. The
    groups must be disjoint; names and values must be non-empty texts.
    """
    if groups is None:
        return None
    if isinstance(groups, Mapping):
        items = list(groups.items())
    elif isinstance(groups, Iterable) and not isinstance(groups, (str, bytes)):
        items = [(v, [v]) for v in groups]
    else:
        raise InputError(f"{parameter}={groups!r}: give a mapping of group names to values, e.g. "
                         "{'api': ['api'], 'other': ['white', 'black', 'hispanic', 'aian', '2prace']}, "
                         "or a list of values (one group each)")
    if not items:
        raise InputError(f"{parameter} is empty: name at least one group, or leave it out for one group per value")
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, values in items:
        if not _is_value(name):
            raise InputError(f"{parameter}: group name {name!r} is not a text; name every group")
        name = str(name)
        vals = [values] if isinstance(values, (str, int, float)) and not isinstance(values, bool) else values
        if not isinstance(vals, Iterable) or isinstance(vals, (bytes, Mapping)):
            raise InputError(f"{parameter}[{name!r}]={values!r}: give a value or a list of values")
        vals = list(vals)
        for v in vals:
            if not _is_value(v):
                raise InputError(f"{parameter}: group {name!r} has {v!r}, which is not a value; give the values as text")
        vals = [str(v) for v in vals]
        if not vals:
            raise InputError(f"{parameter}[{name!r}] is empty: give the values that make up the group")
        for v in vals:
            if v in owner and owner[v] != name:
                raise InputError(f"{parameter}: the groups overlap: {v!r} is in both {owner[v]!r} and {name!r}; "
                                 "a cluster must belong to one group at most. Put each value in one group")
            owner[v] = name
        if name in out:
            raise InputError(f"{parameter}: group {name!r} is named twice")
        out[name] = tuple(dict.fromkeys(vals))
    return out


def membership_from_attribute(values: np.ndarray, groups: Mapping[str, Sequence[str]] | None, *,
                              parameter: str = "groups", column: Hashable = "group_column") -> Membership:
    """Hard membership from one attribute value per sampled cluster (None: unknown).

    Without ``groups`` every distinct value is a group (sorted by its text). Values are
    compared as text; a value named in ``groups`` that no sampled cluster has is an error.
    """
    known = np.array([v is not None for v in values], dtype=bool)
    text = np.array(["" if v is None else str(v) for v in values], dtype=object)
    present = sorted({t for t, k in zip(text, known, strict=True) if k})
    if groups is None:
        groups = {v: (v,) for v in present}
    for name, vals in groups.items():
        for v in vals:
            if v not in present:
                close = did_you_mean(v, present)
                raise InputError(f"{parameter}[{name!r}]: no sampled cluster has {column}={v!r}"
                                 f"{'; ' + close if close else ''} Values present: {', '.join(present[:20])}")
    pi = np.zeros((len(values), len(groups)))
    for j, vals in enumerate(groups.values()):
        pi[:, j] = np.isin(text, list(vals)) & known
    return Membership(tuple(groups), pi, known, "hard")


def membership_from_ethnicity(imputed: pd.DataFrame, labels: np.ndarray, groups: Mapping[str, Sequence[str]] | None,
                              *, kind: str, categories: Sequence[str], parameter: str = "groups") -> Membership:
    """Membership from :func:`impute_ethnicity`'s frame, aligned with the sample's ``labels``.

    ``groups`` maps group names to categories (None: one group per category). Hard
    membership follows ``label``; soft membership sums the probabilities of the group's
    categories. Abstained clusters are in no group.
    """
    cats = list(categories)
    if groups is None:
        groups = {c: (c,) for c in cats}
    for name, vals in groups.items():
        for v in vals:
            if v not in cats:
                close = did_you_mean(v, cats)
                raise InputError(f"{parameter}[{name!r}]: {v!r} is not a Census category"
                                 f"{'; ' + close if close else ''} The categories are {', '.join(cats)}")
    pos = pd.Index(imputed["cluster"]).get_indexer(pd.Index(labels))
    if (pos < 0).any():
        missing = labels[np.flatnonzero(pos < 0)[0]]
        raise InputError(f"the imputed ethnicity has no row for benchmark cluster {missing!r}")
    rows = imputed.iloc[pos]
    known = ~rows["abstained"].to_numpy(dtype=bool)
    pi = np.zeros((len(labels), len(groups)))
    if kind == "hard":
        label = rows["label"].astype(object).to_numpy()
        for j, vals in enumerate(groups.values()):
            pi[:, j] = np.isin(label, list(vals)) & known
    else:
        probs = rows[cats].to_numpy(dtype=np.float64)
        probs = np.where(known[:, None] & np.isfinite(probs), probs, 0.0)
        total = probs.sum(axis=1, keepdims=True)
        probs = np.divide(probs, total, out=np.zeros_like(probs), where=total > 0)  # rounding in the tables
        for j, vals in enumerate(groups.values()):
            pi[:, j] = np.clip(probs[:, [cats.index(v) for v in vals]].sum(axis=1), 0.0, 1.0)
    return Membership(tuple(groups), pi, known, kind)


#: Imputations kept per process, by the content of the benchmark rows they were made from:
#: the releases of a checkpoint share their benchmark records and names, so the imputation
#: runs once per checkpoint instead of once per release.
_IMPUTATIONS: OrderedDict[tuple, pd.DataFrame] = OrderedDict()
_MAX_IMPUTATIONS = 8


def _imputed(df: pd.DataFrame, reference: Hashable, surname: Hashable, *, first_name: Hashable | None,
             table: str, year: int, how: str) -> pd.DataFrame:
    """:func:`impute_ethnicity` of the benchmark rows, cached by their content (ids and names).

    The key is a SHA-256 of the sorted row hashes of the benchmark's (reference, surname,
    first name) values, so another table with the same benchmark records and names reuses
    the result and any change of a name or a cluster makes a new one.
    """
    from er_expectations.analysis.ethnicity import impute_ethnicity

    for parameter, column in (("reference", reference), ("surname", surname), ("first_name", first_name)):
        if column is not None:
            check_column(df, column, parameter)
    columns = [reference, surname] + ([first_name] if first_name is not None else [])
    rows = df.loc[df[reference].notna().to_numpy(), columns]
    try:
        hashes = np.sort(pd.util.hash_pandas_object(rows, index=False).to_numpy())
    except TypeError:  # unhashable values: no cache, the imputation reports what is wrong
        return impute_ethnicity(df, reference=reference, surname=surname, first_name=first_name, table=table, year=year, how=how)
    key = (str(reference), str(surname), str(first_name), table, int(year), how, len(rows),
           hashlib.sha256(hashes.tobytes()).hexdigest())
    if key in _IMPUTATIONS:
        _IMPUTATIONS.move_to_end(key)
        return _IMPUTATIONS[key]
    imputed = impute_ethnicity(df, reference=reference, surname=surname, first_name=first_name, table=table, year=year, how=how)
    _IMPUTATIONS[key] = imputed
    while len(_IMPUTATIONS) > _MAX_IMPUTATIONS:
        _IMPUTATIONS.popitem(last=False)
    return imputed


def sample_membership(rel: Any, sample: BenchmarkSample, *, reference: Hashable,
                      surname: Hashable | None = None, first_name: Hashable | None = None,
                      group_column: Hashable | None = None, groups: object = None, membership: str = "hard",
                      table: str = "census", year: int = 2010, how: str = "mode") -> tuple[Membership, dict[str, Any]]:
    """The membership of every sampled cluster and its provenance (for ``attrs``/results).

    ``rel`` is a release of any engine (pandas, SQL, Spark): only its benchmark records are
    read (``rel.benchmark_rows``), with the group column or the names.
    """
    kind = _choice(membership, MEMBERSHIPS, "membership")
    if (surname is None) == (group_column is None):
        raise InputError("give exactly one of surname=<surname column> (groups from imputed ethnicity) or "
                         "group_column=<column> (an entity-level attribute)"
                         + ("; both were given" if surname is not None else "; neither was given"))
    if first_name is not None and surname is None:
        raise InputError("first_name= helps impute ethnicity from surnames; give surname= too, or leave it out")
    parsed = parse_groups(groups)
    if group_column is not None:
        if kind == "soft":
            raise InputError("membership='soft' needs membership probabilities, which an attribute column does not "
                             "give; use membership='hard' with group_column=, or surname= for soft membership")
        rows = rel.benchmark_rows(reference=reference, columns={"group_column": group_column})
        values = cluster_attribute(rows, sample.labels, reference=reference, column=group_column)
        m = membership_from_attribute(values, parsed, column=group_column)
        return m, {"source": "group_column", "group_column": str(group_column)}
    from er_expectations.analysis.ethnicity import (
        CATEGORIES,  # no table read, no ethnicolr or torch import
    )

    names = {"surname": surname} if first_name is None else {"surname": surname, "first_name": first_name}
    rows = rel.benchmark_rows(reference=reference, columns=names)
    imputed = _imputed(rows, reference, surname, first_name=first_name, table=table, year=year, how=how)
    m = membership_from_ethnicity(imputed, sample.labels, parsed, kind=kind, categories=CATEGORIES)
    info = {"source": "surname", "surname": str(surname), "first_name": None if first_name is None else str(first_name),
            "table": table, "year": year, "how": how}
    info.update({f"imputation_{k}": v for k, v in imputed.attrs.items() if isinstance(v, (str, int, float, bool))})
    return m, info


def groups_frame(results: Sequence[GroupResult], sample: BenchmarkSample, membership: Membership, *,
                 info: Mapping[str, Any], beta: float, ci_level: float, compare_to: str, min_draws: int,
                 adjust: str, ci_method: str = DEFAULT_CI_METHOD, n_boot: int | None = None,
                 seed: int | None = None) -> pd.DataFrame:
    """The documented frame of :func:`estimate_by_group` (group aggregates only), with the
    blind spot of each group's pairwise precision and F (SPEC 6.1) in ``attrs['blind_spots']``
    and, when it is a warning, in the row's note."""
    spots = group_blind_spots(sample, membership, list(results), beta=beta)
    notes = {(r.group, r.metric): r.note for r in results}
    for key, spot in spots.items():
        if spot.warning:
            text = spot.text(METRICS[key[1]].label)
            notes[key] = f"{notes[key]}; {text}" if notes[key] else text
    rows = [{
        "group": r.group, "metric": r.metric,
        "estimate": r.estimate.estimate, "std_error": r.estimate.std_error,
        "ci_lower": r.estimate.ci_lower, "ci_upper": r.estimate.ci_upper,
        "draws": r.draws, "clusters": r.clusters, "comparison": r.comparison.estimate,
        "disparity": r.disparity.estimate, "disparity_se": r.disparity.std_error,
        "disparity_ci_lower": r.disparity.ci_lower, "disparity_ci_upper": r.disparity.ci_upper,
        "p_value": r.p_value, "p_adjusted": r.p_adjusted, "status": r.status, "note": notes[(r.group, r.metric)],
        "ci_method": r.estimate.interval, "disparity_ci_method": r.disparity.interval,
        "zero_event": r.disparity.zero_event,
    } for r in results]
    frame = pd.DataFrame(rows, columns=["group", "metric", *GROUP_COLUMNS]).set_index(["group", "metric"])
    text = ("status", "note", "ci_method", "disparity_ci_method")
    frame = frame.astype({c: "float64" for c in GROUP_COLUMNS if c not in (*text, "clusters", "zero_event")})
    frame = frame.astype({"clusters": "int64", "zero_event": "bool", **dict.fromkeys(text, "object")})
    k = int(sample.labels.shape[0])
    blind: dict[str, dict[str, Any]] = {}
    for (group, metric), spot in spots.items():
        blind.setdefault(group, {})[metric] = {**spot.as_dict(), "text": spot.text(METRICS[metric].label)}
    frame.attrs.update({
        "blind_spots": blind,
        "groups": list(membership.groups),
        "membership": membership.kind,
        "compare_to": compare_to,
        "adjust": adjust,
        "min_draws": min_draws,
        "ci_level": ci_level,
        "beta": beta,
        "design": sample.design,
        "sampled_clusters": k,
        "draws_total": int(sample.k),
        "abstained": membership.abstained,
        "abstention_rate": membership.abstained / k if k else math.nan,
        "ci_method": ci_method,
        **info,
    })
    if uses_bootstrap(ci_method):
        frame.attrs.update({"n_boot": n_boot, "seed": seed})
    return frame


@old_call_forms(positional=('prediction', 'reference'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def estimate_by_group(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    surname: Hashable | None = None,
    first_name: Hashable | None = None,
    group_column: Hashable | None = None,
    groups: object = None,
    membership: str = "hard",
    metrics: str | Iterable[str] | None = None,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    ci_level: float = 0.95,
    compare_to: str = "rest",
    min_draws: int = DEFAULT_MIN_DRAWS,
    adjust: str = "holm",
    beta: float = 1.0,
    table: str = "census",
    year: int = 2010,
    how: str = "mode",
    record_id: Hashable | None = None,
    ci_method: str = DEFAULT_CI_METHOD,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
) -> pd.DataFrame:
    """Estimates by subgroup of entities and each group's gap to the rest (or to all), SPEC 8.

    Groups: ``group_column=`` (constant within each true cluster; ``groups`` is None for one
    group per value, a list of values, or {name: [values]}) or ``surname=`` (ethnicity
    imputed per true cluster with the shipped Census tables, ``first_name=`` optional;
    ``groups`` maps names to categories, e.g. ``{"api": ["api"], "other": ["white",
    "black", "hispanic", "aian", "2prace"]}``; None gives one group per category).
    ``membership="hard"`` follows the imputed ``label``, ``"soft"`` sums the probabilities
    of the group's categories; abstained clusters (unknown membership) are in no group and
    are counted in ``attrs``.

    Returns one row per (group, metric), indexed by ``group`` and ``metric``: ``estimate``,
    ``std_error``, ``ci_lower``, ``ci_upper``, ``draws`` (Σ d·π over the group),
    ``clusters``, ``comparison`` (the estimate of the rest, or of all entities),
    ``disparity`` (estimate − comparison) with ``disparity_se`` (paired linearisation on the
    shared draws) and its interval, ``p_value`` (H0: no gap), ``p_adjusted`` (``adjust``
    over every tested row), ``status`` ("ok", "too small": fewer than ``min_draws`` draws
    in the group or its rest, reported but not tested; "undefined") and ``note``.
    Cluster precision and cluster F have no subgroup form and are refused.

    ``ci_method`` (SPEC 6, 8) builds the intervals of the group estimates and of the gaps:
    "recommended" (the default: BCa estimates, the hull gap), "linearization" (the paired
    normal interval of the gap), "logit" (logit
    intervals, the gap by MOVER), "bootstrap", "bca", "studentized" (``n_boot`` resamples
    of the shared draws, seeded by ``seed``, every group and its comparison on the same
    resamples so that the gap keeps the pairing), "bca_mover" (the gap by MOVER of the two
    sides' BCa intervals), "hull" (the smallest gap interval holding both the paired normal
    and the "bca_mover" one). Columns
    ``ci_method`` and ``disparity_ci_method`` name the method of each row's intervals;
    ``zero_event`` is True when a side without an error entered the gap by its zero-event
    bound (the gap's interval then reflects the number of draws, never zero width).


    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids (null: the record is not in this release).
    reference : hashable
        The column of true cluster ids of the benchmark records (null elsewhere).
    surname : hashable, optional
        The surname column: groups by imputed ethnicity (SPEC 8), above.
    first_name : hashable, optional
        The first-name column, for BIFSG with ``surname``.
    group_column : hashable, optional
        A column constant within each true cluster: one group per value (or ``groups``).
    groups : list or mapping, optional
        Which values or categories form the groups, above.
    membership : str
        ``"hard"`` or ``"soft"`` membership of imputed groups.
    metrics : str or iterable of str, optional
        Metric ids; default the performance metrics with a subgroup form.
    weights : str, dict or column name
        The sampling design, as in :func:`er_expectations.estimate`.
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    ci_level : float
        Confidence level, in (0, 1).
    compare_to : str
        ``"rest"`` (every other entity) or ``"all"``.
    min_draws : int
        The fewest draws a group (and its rest) needs to be tested, at least 2.
    adjust : str
        The multiple-testing adjustment of the p-values (``"holm"``, ``"bonferroni"``, ``"none"``).
    beta : float
        β of the F scores.
    table : str
        The ethnicity table (``"census"`` or ``"census_lstm"``), with ``surname``.
    year : int
        The Census year of the table.
    how : str
        ``"mode"`` or ``"mean"``: how a cluster's surnames give its ethnicity.
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.
    ci_method : str
        How the intervals are computed, above.
    n_boot : int
        Bootstrap resamples.
    seed : int, optional
        Seed of the bootstrap (``DEFAULT_SEED``, 0, when None: the same data give the same
        interval on every run).

    Returns
    -------
    pandas.DataFrame
        One row per (group, metric), above.

    Examples
    --------
    Two regions with the same errors (one merge of two entities each): no gap.

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b", "c", "c", "d", "d"],
    ...                    "truth": ["t1", "t1", "t2", "t3", "t4", "t4", "t5", "t6"],
    ...                    "region": ["n", "n", "n", "n", "s", "s", "s", "s"]})
    >>> by = erx.estimate_by_group(df, prediction="pred", reference="truth", group_column="region",
    ...                            weights="uniform", metrics=["pairwise_precision"], min_draws=2)
    >>> by["disparity"].tolist()
    [0.0, 0.0]
    """
    ci_method, n_boot, seed = check_interval_options(ci_method, n_boot, seed, gaps=True)
    if uses_bootstrap(ci_method):
        seed = interval_seed(seed)
    beta = check_beta(beta)
    ci_level = check_ci_level(ci_level)
    ids = check_subgroup_metrics(metrics)
    compare_to = _choice(compare_to, COMPARISONS, "compare_to")
    adjust = _choice(adjust, ADJUSTMENTS, "adjust")
    min_draws = check_min_draws(min_draws)
    _choice(membership, MEMBERSHIPS, "membership")
    parse_groups(groups)
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    sample = rel.benchmark_sample(reference=reference, weights=weights, draws=draws)
    m, info = sample_membership(rel, sample, reference=reference, surname=surname, first_name=first_name,
                                group_column=group_column, groups=groups, membership=membership, table=table,
                                year=year, how=how)
    results = estimate_groups(sample, m, ids, beta=beta, ci_level=ci_level, compare_to=compare_to,
                              min_draws=min_draws, adjust=adjust, ci_method=ci_method, n_boot=n_boot, seed=seed)
    return groups_frame(results, sample, m, info=info, beta=beta, ci_level=ci_level, compare_to=compare_to,
                        min_draws=min_draws, adjust=adjust, ci_method=ci_method, n_boot=n_boot, seed=seed)


#: The verdicts a disparity check gives each group (SPEC 13), and their colours on its chart.
GROUP_VERDICTS = {"not beyond the limit": "#1a7f37", "gap too large": "#b42318", "not tested": "#9a9a9a"}


def groups_spec(rows: Sequence[Mapping[str, Any]], *, title: str, comparison: str = "the rest",
                colour_by: str = "status") -> dict[str, Any]:
    """The Vega-Lite specification of group estimates with their intervals and each group's
    comparison, as a dict :mod:`er_expectations.core.charts` renders (``to_svg``,
    ``write_chart``, ``data_uri``).

    ``rows`` are group aggregates (``group``, ``estimate``, ``ci_lower``, ``ci_upper``,
    ``comparison``, ``status``), e.g. ``frame.xs(metric, level="metric").reset_index()``
    records. Built as a plain dict, key for key what altair's ``to_dict`` wrote for this chart,
    without building altair's objects. ``colour_by="verdict"`` colours each group by the verdict
    of a disparity check (the rows' ``verdict``: :data:`GROUP_VERDICTS`), so that the chart and
    the check's table say the same thing.
    """
    from er_expectations.core.charts import vega_lite

    field = "verdict" if colour_by == "verdict" else "status"
    data = [{"group": str(r["group"]),
             "estimate": _finite(r.get("estimate")), "ci_lower": _finite(r.get("ci_lower")),
             "ci_upper": _finite(r.get("ci_upper")), "comparison": _finite(r.get("comparison")),
             field: str(r.get(field) or "")} for r in rows]

    labels = {str(r["group"]): wrap_label(str(r["group"])) for r in rows}
    axis = {"labelLimit": 0, "labelLineHeight": 13}  # each line is at most _LABEL_WIDTH characters
    long = {name: lines for name, lines in labels.items() if lines != [name]}
    if long:  # long names on several lines (a Vega expression: group name -> its lines)
        expr = "datum.value"
        for name, lines in long.items():
            expr = f"datum.value === {json.dumps(name)} ? {json.dumps(lines)} : ({expr})"
        axis["labelExpr"] = expr
        # lines run down from the tick: a label of k lines moves up by half its extra lines
        by_lines = {k: [n for n, lines in long.items() if len(lines) == k] for k in range(2, _LABEL_LINES + 1)}
        axis["labelOffset"] = {"condition": [{"test": f"indexof({json.dumps(names)}, datum.value) >= 0",
                                              "value": -6.5 * (k - 1)} for k, names in by_lines.items() if names],
                               "value": 0}

    def y() -> dict[str, Any]:
        return {"axis": axis, "field": "group", "sort": None, "title": None, "type": "nominal"}

    if field == "verdict":
        status = {"field": "verdict", "scale": {"domain": list(GROUP_VERDICTS), "range": list(GROUP_VERDICTS.values())},
                  "title": "verdict", "type": "nominal"}
    else:
        status = {"field": "status", "scale": {"domain": ["ok", "too small", "undefined"],
                                               "range": ["#1f5fa8", "#9a9a9a", "#c0392b"]},
                  "title": "status", "type": "nominal"}
    layers = [
        {"mark": {"type": "rule", "strokeWidth": 2},
         "encoding": {"color": status, "x": {"axis": {"labelFlush": False, "labelOverlap": "greedy"},
                                             "field": "ci_lower", "scale": {"zero": False},
                                             "title": "estimate and interval", "type": "quantitative"},
                      "x2": {"field": "ci_upper"}, "y": y()}},
        {"mark": {"type": "point", "filled": True, "size": 60},
         "encoding": {"color": {"field": field, "type": "nominal"},
                      "x": {"field": "estimate", "type": "quantitative"}, "y": y()}},
        {"mark": {"type": "tick", "color": "#333333", "size": 14, "thickness": 2},
         "encoding": {"tooltip": {"value": None}, "x": {"field": "comparison", "type": "quantitative"},
                      "y": y()}},
    ]
    # one band per group, as high as the longest label (bands are equal): labels never overlap
    height = len(data) * max([28, *(13 * len(lines) + 10 for lines in labels.values())])
    return vega_lite({"layer": layers, "data": {"values": data}, "height": max(60, height),
                      "title": {"text": title,
                                "subtitle": f"point: group estimate; line: its interval; tick: {comparison}"},
                      "width": 420})


#: Characters per line of a group's label on a chart, and lines at most (then "…"): a long
#: group name wraps instead of running into the next one or being cut to one line (issue 18,
#: item 6); the check's table and the image's text give every name in full.
_LABEL_WIDTH = 28
_LABEL_LINES = 3


def wrap_label(text: str, *, width: int = _LABEL_WIDTH, lines: int = _LABEL_LINES) -> list[str]:
    """``text`` as at most ``lines`` lines of at most ``width`` characters, broken at spaces
    (a word longer than a line is cut into pieces); the last line ends in "…" when text is left.
    An empty or blank name reads "(empty)", not nothing."""
    import textwrap

    out = textwrap.wrap(" ".join(text.split()), width=width, break_long_words=True,
                        break_on_hyphens=True) or ["(empty)"]
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: width - 1].rstrip() + "…"
    return out


def groups_chart(rows: Sequence[Mapping[str, Any]], *, title: str, comparison: str = "the rest") -> Any:
    """:func:`groups_spec` as an altair chart (for notebooks and further altair editing).
    altair is imported here, not when the module is."""
    import altair as alt

    return alt.LayerChart.from_dict(groups_spec(rows, title=title, comparison=comparison))


def _finite(x: object) -> float | None:
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None
