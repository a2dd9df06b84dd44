"""Every statistic on every engine: the registry test of the engines (scikit-learn's
``test_common.py`` style).

Two registries meet here. *What the package computes*, read from the package itself: the
aggregates of each engine interface (a release, a release pair, a labelling batch), the
summary statistics of a release (SPEC 3), the estimated metrics and true statistics of a
benchmark under three weight designs (SPEC 4-7), the agreement, the fixed-subset statistics
and the diff of a release against its baseline (SPEC 5, 10), the rules of labelling QC
(SPEC 9), and every expectation of the GX layer. *Where it runs*: the engines of
``er_expectations/engines/registry.py`` (pandas, SQL on SQLite and on PostgreSQL, DuckDB, Spark),
reached through the registry as the GX metrics reach them. Each (statistic, engine) pair is
one test: on every case of its family, the engine's answer equals the pandas engine's
(floats to 1e-9 and NaN equal to NaN; counts, ids, flags, notes and texts exactly) and the
independent reference of ``tests/support/reference_impl.py`` (brute force, written from the
SPEC). Pandas is the only reference of the soft labelling rule 5 (name similarity) and of
the diff's randomly drawn examples (the reference checks their sizes and sources); the
observed values of the GX release family are checked against the reference too, those of
the GX drift and labelling families are the statistics of the pair and labelling families.

The registry tests at the end fail when the package gains something this file does not run:
an engine, an aggregator in an engine's registry line, a public member of an engine's
interface, a summary statistic, a metric, an agreement metric, a drift statistic, a change
class, a labelling rule or an expectation.

Aggregates are computed once per (engine, case) and shared by the tests of that engine, so
the cost is that of the cases, not of the number of statistics. The cases are those of the
pairwise-agreement tests this file replaces (random releases of ``reference_impl.random_case``,
the GX release, drift and labelling cases of ``tests/support``, the PatentsView releases and
demo labels); Spark, slow per query, runs fewer of them. Hostile cases specific to one
engine (collations, ids beyond 2**53, bind parameters, rows fetched, missing columns,
SQLite without ``ln``) stay in the engine's own modules.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from support import reference_impl as ref
from support.compare import assert_identical
from support.drift import drift_frame, drift_suite, frame, shaped_frame
from support.enginetools import (
    duckdb_load,
    duckdb_params,
    engine_params,
    postgres_url,
    spark_frame,
    spark_session,
)
from support.gxtools import assert_same, validate
from support.labeltools import RELEASE, injected, label_suite, labels_case, load_demo, whole_table
from support.paths import PV_DATA
from support.refcheck import check_estimate_row
from support.releases import release_frame

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.analysis.drift import (
    AGREEMENT_METRICS,
    DRIFT_STATISTICS,
    agreement_of,
    diff_of,
    statistic_change_of,
)
from er_expectations.analysis.labelling_batch import (
    fetch_labelling_batch,
    labelling_batch,
    split_labelling_batch,
)
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.analysis.labels import RULES, parse_labels, records_id_kind
from er_expectations.engines.registry import ENGINES, EngineEntry
from er_expectations.gx import expectation_names
from er_expectations.gx import expectations as gxe
from er_expectations.gx.expectations.labels import LABEL_EXPECTATIONS
from er_expectations.stats import METRICS, SUMMARY_STATISTICS, estimate_metrics, summary_statistics
from er_expectations.stats.drift import CHANGE_CLASSES

sa = pytest.importorskip("sqlalchemy")

# -- where data lives: the engines of the registry --------------------------------------------------

#: Every place a table can live, and the engine of ``engines/registry.py`` that aggregates it.
BACKENDS = {"pandas": "pandas", "sqlite": "sql", "postgres": "sql", "duckdb": "duckdb", "spark": "spark"}
#: pytest params of the backends that run here (PostgreSQL, DuckDB and Spark when available).
ENGINE_PARAMS = [pytest.param("pandas", marks=pytest.mark.pandas), *engine_params(), *duckdb_params()]
#: Fields of a registry line that are not aggregators.
NOT_AGGREGATORS = {"name", "gx_engine", "connection", "dialect", "checkpoint"}  # checkpoint: config keys (CheckpointKeys)


class Backend:
    """Loads pandas frames where one backend keeps its data and builds the registry's
    aggregators on them (``from_batch``, the pair and labelling classes)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entry = ENGINES[BACKENDS[name]]
        self.bind = None
        self.tables: list[str] = []
        self.folder: str | None = None
        if name == "sqlite":
            self.bind = sa.create_engine("sqlite://")
        elif name == "postgres":
            self.bind = sa.create_engine(postgres_url())
        elif name == "duckdb":  # a database file, as a checkpoint's (filtered batches are copied)
            self.folder = tempfile.mkdtemp(prefix="erx_duckdb_")
            self.bind = sa.create_engine(f"duckdb:///{self.folder}/common.duckdb")

    def table(self, df: pd.DataFrame):
        """``df`` as the backend holds it: the frame, a table name or a Spark DataFrame."""
        if self.name == "pandas":
            return df
        if self.name == "spark":
            return spark_frame(spark_session(), df)
        name = f"erx_common_{uuid.uuid4().hex[:10]}"
        if self.name == "duckdb":
            duckdb_load(self.bind, name, df)
        else:
            df.to_sql(name, self.bind, index=False)
        self.tables.append(name)
        return name

    def release(self, table, prediction: str, record_id: str | None = None):
        return self.entry.load("release").from_batch(table, connection=self.bind, prediction=prediction,
                                                     record_id=record_id)

    def pair(self, table, current: str, baseline: str):
        return self.entry.load("pair")(self.release(table, current), self.release(table, baseline))

    def close(self) -> None:
        if self.name == "postgres":
            with self.bind.begin() as conn:
                for name in self.tables:
                    conn.execute(sa.text(f'DROP TABLE IF EXISTS "{name}"'))
        if self.bind is not None:
            self.bind.dispose()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def plain(value):
    """Plain Python values, for comparing the answers of two engines: numpy scalars as int,
    float or bool, tuples and arrays as lists, pd.NA as None."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or value is pd.NA:
        return None
    return value


def null(value) -> bool:
    return ref.is_null(value)


def rows_sorted(rows) -> list:
    """Rows in one order whatever their types and nulls (the order a database returns is none)."""
    return sorted((list(r) for r in rows), key=lambda r: [(v is None, str(v)) for v in r])


# -- family 1: a release (SPEC 2.1, 3-8) --------------------------------------------------------------

HILL_ORDERS = (0, 1, 2, math.inf)
#: Weight designs of the benchmark: (weights, draws) of ``benchmark_sample``.
DESIGNS = {"cluster_size": ("cluster_size", None, None), "uniform+draws": ("uniform", "n_draws", None),
           "column+draws": ({"column": "w"}, "n_draws", None),
           # SPEC 14: the records unknown to the benchmark (null 'known_at') are set aside
           "known+draws": ("cluster_size", "n_draws", "known_at")}


def release_cases(engine: str) -> list[tuple]:
    """(seed, id kind, largest size) of ``reference_impl.random_case``: twelve seeds in a
    database, four larger ones on Spark (a few dozen jobs each), all of them on pandas."""
    sql = [(seed, kind, 60) for kind in ("str", "int") for seed in range(12)]
    spark = [(seed, kind, 120) for kind in ("str", "int") for seed in range(4)]
    return {"pandas": sql + spark, "spark": spark}.get(engine, sql)


@functools.cache
def release_frame_of(case: tuple) -> pd.DataFrame:
    """The random case, with a column 'known_at' (SPEC 14): null on about a quarter of the records
    outside the benchmark (records added after labelling), the version 1 elsewhere."""
    seed, kind, n_max = case
    df = ref.random_case(seed, n_max=n_max, id_kind=kind)
    rng = np.random.default_rng(seed)
    late = (rng.random(len(df)) < 0.25) & df["ref"].isna().to_numpy()
    known_at = pd.Series(1, index=df.index, dtype="Int64")
    known_at[late] = pd.NA
    return df.assign(known_at=known_at)


def _table_fields(table) -> dict:
    return plain({"sizes": table.sizes, "counts": table.counts, "named": table.n_named_clusters,
                  "homonymous": table.n_homonymous_clusters, "varied": table.n_varied_clusters})


def _sample_fields(sample) -> dict:
    """The benchmark sample with its clusters in the order of their labels (as text)."""
    order = sorted(range(len(sample.labels)), key=lambda i: str(sample.labels[i]))
    out = {"labels": [str(sample.labels[i]) for i in order]}
    for name in ("size", "weight", "draws", "homonym", "name_variation", "has_name"):
        values = getattr(sample, name)
        out[name] = None if values is None else plain(np.asarray(values)[order])
    out["pieces"] = sorted((str(sample.labels[c]), str(p), int(n), int(m)) for c, p, n, m in zip(
        sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True))
    out["pieces"] = [list(p) for p in out["pieces"]]
    for name in ("n_records", "n_clusters", "design", "records_set_aside", "clusters_set_aside", "known_column",
                 "records_added", "records_added_in_sampled", "benchmark_version"):
        out[name] = plain(getattr(sample, name))
    return out


def _estimate_fields(result) -> dict:
    return plain({"estimate": result.estimate, "std_error": result.std_error, "ci_lower": result.ci_lower,
                  "ci_upper": result.ci_upper, "draws": result.draws, "clusters": result.clusters,
                  "note": result.note, "interval": result.interval})


def release_answers(backend: Backend, case: tuple) -> dict:
    df = release_frame_of(case)
    rel = backend.release(backend.table(df), "pred", record_id="record")
    table = rel.clustering_table(name="name")
    out: dict = {"release.clustering_table": _table_fields(table)}
    out.update({f"summary:{k}": plain(v) for k, v in summary_statistics(table, hill_orders=HILL_ORDERS).items()})
    out["release.benchmark_sample"] = {}
    for design, (weights, draws, known) in DESIGNS.items():
        sample = rel.benchmark_sample(reference="ref", weights=weights, draws=draws, name="name", known=known)
        out["release.benchmark_sample"][design] = _sample_fields(sample)
        for metric, result in estimate_metrics(sample).items():
            out.setdefault(f"estimate:{metric}", {})[design] = _estimate_fields(result)
    rows = rel.benchmark_rows(reference="ref", columns={"name": "name"})
    out["release.benchmark_rows"] = rows_sorted([str(r), None if null(n) else n]
                                                for r, n in zip(rows["ref"], rows["name"], strict=True))
    return out


@functools.cache
def release_reference(case: tuple) -> dict:
    df = release_frame_of(case)
    pred, names, refs = (ref.column_values(df, c) for c in ("pred", "name", "ref"))
    clusters = ref.group_positions(pred)
    hist = Counter(len(m) for m in clusters.values())
    cluster_names = {c: {names[i] for i in m if names[i] is not None} for c, m in clusters.items()}
    holders = Counter(n for ns in cluster_names.values() for n in ns)
    out: dict = {"release.clustering_table": {
        "sizes": sorted(hist), "counts": [hist[s] for s in sorted(hist)],
        "named": sum(1 for ns in cluster_names.values() if ns),
        "homonymous": sum(1 for ns in cluster_names.values() if any(holders[n] > 1 for n in ns)),
        "varied": sum(1 for ns in cluster_names.values() if len(ns) > 1)}}
    out.update({f"summary:{k}": v for k, v in ref.summarize_ref(df, "pred", name="name",
                                                               hill_orders=HILL_ORDERS).items()})
    known_at = ref.column_values(df, "known_at")
    for design, (weights, draws, known) in DESIGNS.items():
        w = weights["column"] if isinstance(weights, dict) else weights
        # SPEC 14 by brute force: a record unknown to the benchmark is outside the release
        keep = [known is None or k is not None for k in known_at]
        kept = pd.Series([p if k else None for p, k in zip(pred, keep, strict=True)], index=df.index, dtype=object)
        frame_d = df.assign(pred=kept) if known else df
        pred_d = ref.column_values(frame_d, "pred")
        size = Counter(str(p) for p in pred_d if p is not None)
        pieces = Counter((str(r), str(p)) for p, r in zip(pred_d, refs, strict=True) if p is not None and r is not None)
        sampled = {str(p) for p, r in zip(pred, refs, strict=True) if p is not None and r is not None}
        added = [str(p) for p, k in zip(pred, keep, strict=True) if p is not None and not k]
        rows, info = ref.benchmark_table_ref(frame_d, "pred", "ref", weights=w, draws=draws, name="name")
        rows = sorted(rows, key=lambda r: str(r["label"]))
        out.setdefault("release.benchmark_sample", {})[design] = {
            "labels": [str(r["label"]) for r in rows], "size": [r["size"] for r in rows],
            "weight": [r["weight"] for r in rows], "draws": [r["draws"] for r in rows],
            "has_name": [r["has_name"] for r in rows], "n_records": info["N"],
            "n_clusters": info["n_pred_clusters"], "records_set_aside": info["records_set_aside"],
            "pieces": sorted([c, p, n, size[p]] for (c, p), n in pieces.items()),
            "known_column": known, "records_added": len(added),
            "records_added_in_sampled": sum(1 for p in added if p in sampled),
            "benchmark_version": 1 if known else None}
        kwargs = {"weights": w, "draws": draws, "name": "name"}
        out.setdefault("estimates", {})[design] = (ref.estimate_ref(frame_d, "pred", "ref", **kwargs)[0],
                                                   ref.estimate_ref(frame_d, "pred", "ref", name_domain="subset",
                                                                    **kwargs)[0])
    out["release.benchmark_rows"] = rows_sorted([str(r), n] for r, n in zip(refs, names, strict=True) if r is not None)
    return out


def check_release(statistic: str, got, reference: dict) -> None:
    if statistic.startswith("summary:"):
        key = statistic.removeprefix("summary:")
        assert ref.close(got, reference[statistic]), (key, got, reference[statistic])
    elif statistic.startswith("estimate:"):
        metric = statistic.removeprefix("estimate:")
        for design, row in got.items():
            expected, subset = reference["estimates"][design]
            problems = check_estimate_row(metric, row, expected[metric], 0.95)
            if problems and metric in ref.NAME_METRICS:  # the other reading of a cluster without names
                problems = check_estimate_row(metric, row, subset[metric], 0.95)
            assert not problems, (design, problems)
    elif statistic == "release.benchmark_sample":
        for design, sample in got.items():
            want = reference[statistic][design]
            for key, value in want.items():
                if key == "weight":
                    assert all(ref.close(a, b) for a, b in zip(sample[key], value, strict=True)), (design, key)
                else:
                    assert sample[key] == value, (design, key, sample[key], value)
    else:
        assert got == reference[statistic], (got, reference[statistic])


# -- family 2: a release and its baseline (SPEC 5, 10) ------------------------------------------------


def _patentsview_pair() -> pd.DataFrame:
    pred = pd.read_parquet(PV_DATA / "predictions.parquet",
                           columns=["mention_id", "inventor_id_20211230", "inventor_id_20200630"])
    records = pd.read_parquet(PV_DATA / "records.parquet", columns=["mention_id", "name_last"])
    df = pred.merge(records, on="mention_id").rename(columns={"inventor_id_20211230": "pred",
                                                              "inventor_id_20200630": "base", "name_last": "name"})
    return df.astype(object).where(df.notna(), None)


#: The pair cases: frames with a current release ``pred`` and its baseline ``base``.
PAIR_CASES: dict[str, Callable[[], pd.DataFrame]] = {
    "shaped-str": lambda: shaped_frame(3, ids="str"),
    "shaped-int": lambda: shaped_frame(3, ids="int"),
    "no-common": lambda: frame(["a", None, "b", None], [None, "x", None, "y"]),
    "one-cluster": lambda: frame(["é"] * 5 + [None], ["A"] * 6),
    "singletons": lambda: frame([f"c{i}" for i in range(7)], [f"B{i}" for i in range(7)]),
    "merged": lambda: frame(["m"] * 6, ["Z", "z", "é", "e", "E", "_"]),
    "drift-str": lambda: drift_frame(0, ids="str").rename(columns={"pred__baseline": "base"}),
    "drift-int": lambda: drift_frame(1, ids="int").rename(columns={"pred__baseline": "base"}),
    "patentsview": _patentsview_pair,
}
#: (examples, seed) of the diff of a case (others: 4 examples of each change, seed 1).
DIFF_EXAMPLES = {"patentsview": (5, 3), "merged": (2, 0)}
#: The label of the baseline release, a constant column (``column_value``).
BASELINE_LABEL = "2020-06-30"


def pair_cases(engine: str) -> list[str]:
    """Spark (slow per query) runs the PatentsView releases; the shaped and edge cases run there
    in ``test_engines_drift_sums.py``, the random drift cases in the GX family below."""
    return ["patentsview"] if engine == "spark" else list(PAIR_CASES)


@functools.cache
def pair_frame_of(case: str) -> pd.DataFrame:
    return PAIR_CASES[case]().assign(base__release=BASELINE_LABEL)


def _stat_args(statistic: str) -> dict:
    return {"q": 2 if statistic == "hill_number" else None,
            "name": "name" if statistic in ("homonymy_rate", "name_variation_rate") else None}


def pair_answers(backend: Backend, case: str) -> dict:
    pair = backend.pair(backend.table(pair_frame_of(case)), "pred", "base")
    agreement = agreement_of(pair, beta=1.5)
    out: dict = {f"agreement:{m}": [plain(v), agreement.notes.get(m)] for m, v in agreement.values.items()}
    out["pair.n_common"] = plain(pair.n_common)
    out["pair.contingency_sums"] = plain(dataclasses.asdict(pair.contingency_sums()))
    out["pair.change_counts"] = plain(dataclasses.asdict(pair.change_counts()))
    cur, base = pair.restricted()
    out["pair.restricted"] = [_table_fields(r.clustering_table(name="name")) if pair.n_common else None
                              for r in (cur, base)]
    counts = pair.change_counts()
    picks = {k: list(range(min(3, counts.clusters[k]))) for k in range(1, len(CHANGE_CLASSES))}
    changed = pair.changed_clusters(picks, max_sources=5)
    out["pair.changed_clusters"] = [plain([c.kind, c.position, str(c.label), c.size,
                                           [[str(b), n, s] for b, n, s in c.sources]]) for c in changed]
    labels = [c.label for c in changed]
    out["pair.name_counts"] = sorted([str(c), n, k] for c, n, k in pair.name_counts("name", labels))
    out["pair.column_value"] = plain(pair.column_value("base__release"))
    for statistic in DRIFT_STATISTICS:
        out[f"change:{statistic}"] = plain(statistic_change_of(pair, statistic, **_stat_args(statistic)).to_dict())
    examples, seed = DIFF_EXAMPLES.get(case, (4, 1))
    out["diff"] = plain(diff_of(pair, name="name", examples=examples, seed=seed).to_dict())
    if case == "patentsview":  # the case as test_engines_drift_sums.py ran it
        assert out["pair.n_common"] > 100_000 and out["diff"]["records_moved"] > 0
    return out


@functools.cache
def pair_reference(case: str) -> dict:
    df = pair_frame_of(case)
    cur, base, names = (ref.column_values(df, c) for c in ("pred", "base", "name"))
    common = [i for i in range(len(df)) if cur[i] is not None and base[i] is not None]
    sub = df.iloc[common]
    clusters, records, moved = ref.brute_force_diff(base, cur)
    cur_sets = ref.group_positions([cur[i] for i in common])
    base_sets = ref.group_positions([base[i] for i in common])
    cells = Counter((cur[i], base[i]) for i in common)
    pairs = sum(n * (n - 1) // 2 for n in cells.values())
    out: dict = {"pair.n_common": len(common), "diff": {"clusters": clusters, "records": records,
                                                         "records_moved": moved, "common_records": len(common)}}
    out["pair.contingency_sums"] = {
        "records": len(common), "true_clusters": len(base_sets), "pred_clusters": len(cur_sets),
        "cell_pairs": pairs, "pred_pairs": sum(len(m) * (len(m) - 1) // 2 for m in cur_sets.values()),
        "true_pairs": sum(len(m) * (len(m) - 1) // 2 for m in base_sets.values()),
        "exact_clusters": len(set(cur_sets.values()) & set(base_sets.values()))}
    out["pair.change_counts"] = {"clusters": [clusters[k] for k in CHANGE_CLASSES],
                                 "records": [records[k] for k in CHANGE_CLASSES],
                                 "before_clusters": len(base_sets),
                                 "before_clusters_split": sum(1 for m in base_sets.values()
                                                              if len({cur[common[i]] for i in m}) > 1)}
    size_of = {str(c): len(m) for c, m in cur_sets.items()}
    base_size = {str(c): len(m) for c, m in base_sets.items()}
    out["sizes"] = size_of, base_size
    out["names"] = Counter((str(cur[i]), str(names[i])) for i in common if names[i] is not None)
    out["pair.column_value"] = BASELINE_LABEL
    if common:
        exact = ref.exact_metrics_ref(sub, "pred", "base", beta=1.5, all_pairs=False)
        c, p, t = pairs, out["pair.contingency_sums"]["pred_pairs"], out["pair.contingency_sums"]["true_pairs"]
        denominator = p + 1.5**2 * t  # pairwise F from the pair counts: defined when P or R is
        exact["pairwise_f"] = (1 + 1.5**2) * c / denominator if denominator else math.nan
        out.update({f"agreement:{m}": v for m, v in exact.items()})
        out["pair.restricted"] = []
        for column in ("pred", "base"):
            hist = Counter(len(m) for m in ref.group_positions(ref.column_values(sub, column)).values())
            out["pair.restricted"].append({"sizes": sorted(hist), "counts": [hist[s] for s in sorted(hist)]})
        for statistic in DRIFT_STATISTICS:
            args = _stat_args(statistic)
            orders = (args["q"],) if args["q"] is not None else ()
            key = ref.hill_label(args["q"]) if args["q"] is not None else statistic
            out[f"change:{statistic}"] = [
                ref.summarize_ref(sub, column, name=args["name"], hill_orders=orders)[key]
                for column in ("pred", "base")]
    else:
        out.update({f"agreement:{m}": math.nan for m in AGREEMENT_METRICS})
        out.update({f"change:{s}": [math.nan, math.nan] for s in DRIFT_STATISTICS})
    return out


def check_pair(statistic: str, got, reference: dict) -> None:
    if statistic.startswith("agreement:"):
        assert ref.close(got[0], reference[statistic]), (got, reference[statistic])
    elif statistic.startswith("change:"):
        assert ref.close(got["current"], reference[statistic][0]), (got, reference[statistic])
        assert ref.close(got["baseline"], reference[statistic][1]), (got, reference[statistic])
        assert got["common_records"] == reference["pair.n_common"]
    elif statistic == "pair.contingency_sums":
        assert {k: got[k] for k in reference[statistic]} == reference[statistic]
    elif statistic == "pair.restricted":
        if reference["pair.n_common"]:
            assert [{k: t[k] for k in ("sizes", "counts")} for t in got] == reference[statistic]
    elif statistic == "pair.changed_clusters":
        sizes, base_sizes = reference["sizes"]
        for _kind, _position, label, size, sources in got:
            assert size == sizes[label]
            assert all(s == base_sizes[b] and 0 < n <= s for b, n, s in sources)
    elif statistic == "pair.name_counts":
        assert all(reference["names"][(c, n)] == k for c, n, k in got)
    elif statistic == "diff":
        assert {k: got[k] for k in reference[statistic]} == reference[statistic]
    else:
        assert got == reference[statistic], (got, reference[statistic])


# -- family 3: a labelling batch (SPEC 9) -------------------------------------------------------------


def labelling_cases(engine: str) -> list[tuple]:
    """(seed, id kind) of ``labels_case``, and the demo labels on pandas and SQLite (loading
    the whole release into PostgreSQL or Spark is slow: there the GX family below runs them)."""
    cases = [(seed, kind) for kind in ("str", "int") for seed in (range(1) if engine == "spark" else range(4))]
    return [*cases, ("demo", "str")] if engine in ("pandas", "sqlite") else cases


@functools.cache
def labelling_case_of(case: tuple) -> dict:
    """The labels, the records, the pandas labelling batch and its columns."""
    seed, kind = case
    if seed == "demo":
        labels, records = load_demo()
        args = {"record": "mention_id", "pred": RELEASE, "block": "block", "name": "name"}
    else:
        labels, records = labels_case(seed, ids=kind)
        args = {"record": "record", "pred": "pred", "block": "block", "name": "name"}
    batch = labelling_batch(labels, records, prediction=args["pred"], record_id=args["record"], block="block", name="name")
    return {"labels": labels, "records": records, "batch": batch, **args}


def _labels_fields(parsed) -> dict:
    """The parsed labels, one list per column, in the order of the draws (a database keeps none)."""
    order = np.argsort(parsed.draw, kind="stable")
    columns = {"draw": parsed.draw, "record": parsed.record, "removed": parsed.removed, "added": parsed.added,
               "predicted_cluster": parsed.predicted_cluster, "true_cluster": parsed.true_cluster}
    return {k: None if v is None else [plain(v[i]) for i in order] for k, v in columns.items()}


def labelling_answers(backend: Backend, case: tuple) -> dict:
    c = labelling_case_of(case)
    record, pred = c["record"], c["pred"]
    if backend.entry.labelling is None:  # pandas: the batch is the labelling table itself
        labels, records, columns = split_labelling_batch(c["batch"], record_id=record, prediction=pred)
        parsed = parse_labels(labels, id_kind=records_id_kind(records[record]), columns=columns)
        rows = records[[record, pred]]  # the rules read the labels table as it is
    else:  # a database or Spark holds the whole release: the rows the rules read are fetched
        table = whole_table(c["batch"], c["records"], draw="draw", record_columns=[record, pred, "block", "name"],
                            lists="list" if backend.name == "spark" else "text")
        source = backend.entry.load("labelling")(backend.release(backend.table(table), pred))
        fetched = fetch_labelling_batch(source, record_id=record, prediction=pred)
        parsed = labels = fetched.labels
        columns = fetched.columns
        records, rows = fetched.records(block="block", name="name"), fetched.records()
    q = qc_labels(labels, records, pred, record_id=record, block="block", name="name", columns=columns)
    out: dict = {"labelling.label_rows": _labels_fields(parsed),
                 "labelling.record_rows": rows_sorted(plain(list(r)) for r in rows.itertuples(index=False))}
    for rule in RULES:
        failing = q.failing(rule)
        out[f"rule:{rule}"] = {"checked": plain(q.checked[rule]), "failed": q.failed(rule),
                               "violations": plain(failing.drop(columns=["records"]).to_dict("records")),
                               "records": [plain(list(v)) for v in failing["records"]]}
    return out


@functools.cache
def labelling_reference(case: tuple) -> dict:
    c = labelling_case_of(case)
    ids, preds = ref.column_values(c["records"], c["record"]), ref.column_values(c["records"], c["pred"])
    lab = c["labels"].sort_values("draw", kind="stable")
    named = {*lab["record_id"], *(i for cell in lab["removed"] for i in cell), *(i for cell in lab["added"] for i in cell)}
    drawn_ids = set(lab["record_id"])
    drawn = {p for i, p in zip(ids, preds, strict=True) if i in drawn_ids and p is not None}
    rows = rows_sorted([i, p] for i, p in zip(ids, preds, strict=True) if i in named or (p is not None and p in drawn))
    failing = ref.brute_force_rules(c["records"], lab, record=c["record"], pred=c["pred"])
    out: dict = {"labelling.record_rows": plain(rows),
                 "labelling.label_rows": plain({
                     "draw": lab["draw"].tolist(), "record": lab["record_id"].tolist(),
                     "removed": [list(dict.fromkeys(cell)) for cell in lab["removed"]],
                     "added": [list(dict.fromkeys(cell)) for cell in lab["added"]],
                     "predicted_cluster": [None if null(v) else v for v in lab["predicted_cluster"]],
                     "true_cluster": [None if null(v) else v for v in lab["true_cluster"]]})}
    for rule in RULES:
        out[f"rule:{rule}"] = sorted(d for d, r in failing if r == rule)
    return out


#: The labelling rules of the reference (``brute_force_rules``), and the soft rule (name
#: similarity by rapidfuzz) for which the pandas engine is the reference.
REFERENCE_RULES, SOFT_RULES = {1, 2, 3, 4, 6, 7}, {5}


def check_labelling(statistic: str, got, reference: dict) -> None:
    if statistic in {f"rule:{r}" for r in SOFT_RULES}:
        return
    if statistic.startswith("rule:"):
        assert sorted({v["draw"] for v in got["violations"]}) == reference[statistic]
    else:
        assert got == reference[statistic]


# -- family 4: every expectation through GX's datasource of each engine -------------------------------


def gx_release_suite() -> list:
    """Every expectation of a release: the suite of the old test_gx_engines.py (first ten) and
    the other estimated metrics and the control chart (skipped without a history store, its
    value computed all the same)."""
    common = {"prediction_column": "pred", "record_id_column": "record"}
    bench = {**common, "reference_column": "ref"}
    return [
        gxe.ExpectAverageClusterSizeToBeBetween(**common, min_value=1.0),
        gxe.ExpectMatchingRateToBeBetween(**common, min_value=0.0),
        gxe.ExpectHillNumberToBeBetween(**common, q=2, min_value=1.0),
        gxe.ExpectHomonymyRateToBeBetween(**common, name_column="name", max_value=1.0),
        gxe.ExpectNameVariationRateToBeBetween(**common, name_column="name", max_value=1.0),
        gxe.ExpectEstimatedPairwisePrecisionToBeBetween(**bench, min_value=0.5),
        gxe.ExpectEstimatedPairwiseRecallToBeBetween(**bench, min_value=0.5, weights="uniform"),
        gxe.ExpectEstimatedBCubedFToBeBetween(**bench, min_value=0.5, ci_method="bootstrap", n_boot=200, seed=3),
        gxe.ExpectStatisticToMatchBenchmarkEstimate(**bench, statistic="homonymy_rate", name_column="name"),
        gxe.ExpectSubgroupDisparityToBeBelow(**bench, group_column="grp", max_disparity=0.5, min_draws=5),
        gxe.ExpectNoErrorSliceAbove(**bench, feature_columns=["grp"], name_column="name", max_lift=2.0, min_draws=5),
        gxe.ExpectEstimatedPairwiseFToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedClusterPrecisionToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedClusterRecallToBeBetween(**bench, min_value=0.0, weights="uniform"),
        gxe.ExpectEstimatedClusterFToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedBCubedPrecisionToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedBCubedRecallToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedHomogeneityToBeBetween(**bench, min_value=0.0),
        gxe.ExpectStatisticWithinControlLimits(**common, statistic="n_clusters"),
    ]


def _patentsview_drift() -> tuple[pd.DataFrame, list]:
    """Two PatentsView releases of the 133,541 mentions, with the benchmark and the names."""
    pred = pd.read_parquet(PV_DATA / "predictions.parquet",
                           columns=["mention_id", "inventor_id_20211230", "inventor_id_20200630"])
    records = pd.read_parquet(PV_DATA / "records.parquet", columns=["mention_id", "name_first", "name_last"])
    bench = pd.read_parquet(PV_DATA / "benchmark.parquet")
    df = pred.merge(records, on="mention_id").merge(bench, on="mention_id", how="left")
    df["name"] = df["name_first"].str.cat(df["name_last"], sep=" ")
    df = df.drop(columns=["name_first", "name_last"]).astype(object).where(lambda d: d.notna(), None)
    return df, drift_suite(pred="inventor_id_20211230", record="mention_id", ref="benchmark_id",
                           baseline_column="inventor_id_20200630")


@functools.cache
def _labels_gx_batch(case: tuple) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The pandas labelling batch of a case, its records and columns: built once, for every engine."""
    seed, kind = case
    if isinstance(seed, int):
        labels, records = labels_case(seed, ids=kind)
        args = {"record": "record", "pred": "pred"}
    else:  # the demo labels, clean or with one injected error of rule ``kind``
        labels, records = load_demo()
        if kind is not None:
            labels, _ = injected(labels, records, kind)
        args = {"record": "mention_id", "pred": RELEASE}
    batch = labelling_batch(labels, records, prediction=args["pred"], record_id=args["record"], block="block", name="name")
    return batch, records, args


def _labels_gx_case(engine: str, case: tuple) -> tuple[pd.DataFrame, list]:
    batch, records, args = _labels_gx_batch(case)
    if engine == "pandas":
        return batch.copy(), label_suite(**args)
    table = whole_table(batch, records, draw="draw", record_columns=[args["record"], args["pred"], "block", "name"],
                        lists="list" if engine == "spark" else "text")
    if case[0] == "demo":
        assert len(table) > 133_000
    return table, label_suite(**args)


class DemoTables:
    """The demo labels' whole tables in SQLite and PostgreSQL, written fast: their 133k record rows
    (the same in every demo case: checked) are loaded once per engine, and each case's table is
    that table's schema, the case's label rows, then the record rows copied inside the database,
    in the order ``whole_table`` gives (label rows first)."""

    def __init__(self, tmp_path_factory) -> None:
        self.tmp = tmp_path_factory
        self.base: dict[str, tuple[str, pd.DataFrame]] = {}  # engine -> (url, record rows)

    def load(self, engine: str, df: pd.DataFrame) -> tuple[str, str]:
        """Writes ``df`` as a new table; returns (url, table)."""
        drawn = df["draw"].notna()
        first = int(drawn.sum())
        assert drawn.iloc[:first].all() and not drawn.iloc[first:].any()  # label rows, then record rows
        rows = df.iloc[first:].reset_index(drop=True)
        if engine not in self.base:
            url = (f"sqlite:///{self.tmp.mktemp('demo_sqlite') / 'demo.db'}" if engine == "sqlite"
                   else postgres_url())
            bind = sa.create_engine(url)
            rows.to_sql(f"demo_rows_{engine}_{uuid.uuid4().hex[:8]}", bind, index=False)
            bind.dispose()
            self.base[engine] = (url, rows)
        url, base_rows = self.base[engine]
        pd.testing.assert_frame_equal(rows, base_rows)  # the record rows are the ones loaded
        base = self._base_table(engine, url)
        table = f"release_{uuid.uuid4().hex[:8]}"
        bind = sa.create_engine(url)
        try:
            with bind.begin() as conn:
                if engine == "sqlite":
                    ddl = conn.execute(sa.text("SELECT sql FROM sqlite_master WHERE name = :n"), {"n": base}).scalar()
                    conn.execute(sa.text(ddl.replace(base, table, 1)))
                else:
                    conn.execute(sa.text(f'CREATE TABLE "{table}" (LIKE "{base}" INCLUDING ALL)'))
            df.iloc[:first].to_sql(table, bind, index=False, if_exists="append")
            with bind.begin() as conn:
                conn.execute(sa.text(f'INSERT INTO "{table}" SELECT * FROM "{base}"'))
        finally:
            bind.dispose()
        return url, table

    @staticmethod
    def _base_table(engine: str, url: str) -> str:
        bind = sa.create_engine(url)
        try:
            names = [n for n in sa.inspect(bind).get_table_names() if n.startswith(f"demo_rows_{engine}_")]
        finally:
            bind.dispose()
        (name,) = names
        return name

    def drop(self, url: str, table: str) -> None:
        bind = sa.create_engine(url)
        with bind.begin() as conn:
            conn.execute(sa.text(f'DROP TABLE IF EXISTS "{table}"'))
        bind.dispose()

    def close(self) -> None:
        for engine, (url, _) in self.base.items():
            self.drop(url, self._base_table(engine, url))


def _pandas_only_case(engine: str, case: tuple) -> tuple[pd.DataFrame, list]:
    """The expectations whose metrics run on pandas only (``engines = PANDAS_ONLY``): the error
    audit, on the release case with tags carried by a column. On every other engine the answer
    is their one clear refusal, checked in :func:`gx_answers`."""
    from er_expectations.analysis.error_audit import encode_tags, parse_tags

    df = release_frame(ids=case[0])
    clusters = df["ref"].dropna().unique()[:12]
    tags = pd.DataFrame({"cluster": pd.Series(list(clusters), dtype=object),
                         "kind": ["over", "under"] * 6, "tag": ["twins", "<b>typo</b>", "twins"] * 4})
    df["tags"] = encode_tags(parse_tags(tags, benchmark_ids=df["ref"].dropna()), df, "ref")
    bench = {"prediction_column": "pred", "record_id_column": "record", "reference_column": "ref"}
    return df, [gxe.ExpectErrorCauseRateToBeBelow(**bench, tags_column="tags", tag="twins", max_rate=0.5),
                gxe.ExpectErrorCauseRateToBeBelow(**bench, tags_column="tags", tag="<b>typo</b>", max_rate=0.5,
                                                  share="erroneous", ci_method="linearization")]


#: The GX families: their cases by engine and the frame and suite of a case.
GX_FAMILIES: dict[str, dict] = {
    "gx-release": {
        "cases": lambda engine: [("str",), ("int",)],
        "build": lambda engine, case: (release_frame(ids=case[0]), gx_release_suite()),
    },
    "gx-drift": {
        "cases": lambda engine: [*((seed, kind) for kind in ("str", "int")
                                   for seed in (range(1) if engine == "spark" else range(3))), ("patentsview",)],
        "build": lambda engine, case: (_patentsview_drift() if case[0] == "patentsview"
                                       else (drift_frame(case[0], ids=case[1]), drift_suite())),
    },
    "gx-labels": {
        "cases": lambda engine: [*((seed, kind) for kind in ("str", "int")
                                   for seed in (range(1) if engine == "spark" else range(4))),
                                 *(("demo", rule) for rule in ((None, 6) if engine == "spark"
                                                               else (None, 1, 2, 3, 4, 5, 6, 7)))],
        "build": _labels_gx_case,
    },
    "gx-pandas-only": {"cases": lambda engine: [("str",), ("int",)], "build": _pandas_only_case},
}


def gx_results(result) -> dict:
    """{(expectation type, its arguments): (success, result)}; no expectation may have raised."""
    out = {}
    for r in result.results:
        info = r.exception_info or {}
        for i in [v for v in info.values() if isinstance(v, dict)] or [info]:
            assert not i.get("raised_exception"), i.get("exception_message")
        cfg = r.expectation_config
        key = (cfg.type, json.dumps({k: v for k, v in cfg.kwargs.items() if k != "batch_id"}, sort_keys=True,
                                    default=str))
        assert key not in out, key
        out[key] = (r.success, r.result)
    return out


def gx_answers(family: str, engine: str, case: tuple, tmp_path, demo_tables: DemoTables) -> dict:
    df, suite = GX_FAMILIES[family]["build"](engine, case)
    out: dict = {}
    if family == "gx-labels" and case[0] == "demo" and engine in ("sqlite", "postgres"):
        loaded = demo_tables.load(engine, df)
        try:
            result = validate(engine, None, suite, tmp_path, loaded=loaded)
        finally:
            demo_tables.drop(*loaded)
    else:
        result = validate(engine, df, suite, tmp_path)
    if family == "gx-pandas-only" and engine != "pandas":  # one clear refusal per expectation
        for r in result.results:
            info = r.exception_info or {}
            messages = [i.get("exception_message") or "" for i in ([v for v in info.values() if isinstance(v, dict)]
                                                                   or [info]) if i.get("raised_exception")]
            assert messages and all("pandas" in m for m in messages), messages
            out.setdefault(f"expectation:{r.expectation_config.type}", {})["refused"] = messages[0]
        return out
    for key, value in gx_results(result).items():
        out.setdefault(f"expectation:{key[0]}", {})[key] = value
    if engine == "pandas":  # what each case is for, as the tests it replaces asserted
        values = [v for per in out.values() for v in per.values()]
        if family == "gx-release":
            assert all(isinstance(r["observed_value"], float) and not math.isnan(r["observed_value"])
                       for _, r in values if r["details"].get("slices") != [])  # a search may find no slice
        elif family == "gx-drift" and case[0] != "patentsview":
            assert any(not ok for ok, _ in values)  # failures: the release diff is compared too
            assert any("diff" in r["details"] for ok, r in values if not ok)
        elif family == "gx-drift":
            (change,) = [r["details"] for key, (_, r) in out["expectation:expect_statistic_change_to_be_below"].items()
                         if '"statistic": "n_clusters"' in key[1]]
            assert change["common_records"] > 100_000 and change["current"] != change["baseline"]
        elif family == "gx-labels" and case[0] != "demo":  # errors: the failing draws are compared too
            failed = {key[0] for per in out.values() for key, (ok, _) in per.items() if not ok}
            assert len(failed) >= 3, failed
        elif family == "gx-labels" and case[1] not in (None, 5):  # the injected error is caught
            rule_type = f"expectation:{LABEL_EXPECTATIONS[case[1]].expectation_type}"
            assert not all(ok for ok, _ in out[rule_type].values())
    return out


@functools.cache
def gx_release_reference(kind: str) -> dict:
    """The summary statistics and estimates of the GX release case, by the reference."""
    df = release_frame(ids=kind)
    summary = ref.summarize_ref(df, "pred", name="name", hill_orders=(2,))
    estimates = {w: ref.estimate_ref(df, "pred", "ref", weights=w)[0] for w in ("cluster_size", "uniform")}
    return {"summary": summary, "estimates": estimates}


#: Expectation type -> (summary statistic or metric) the reference knows, for the release family.
GX_REFERENCE = {
    "expect_average_cluster_size_to_be_between": ("summary", "average_cluster_size"),
    "expect_matching_rate_to_be_between": ("summary", "matching_rate"),
    "expect_hill_number_to_be_between": ("summary", "hill_number_2"),
    "expect_homonymy_rate_to_be_between": ("summary", "homonymy_rate"),
    "expect_name_variation_rate_to_be_between": ("summary", "name_variation_rate"),
    "expect_statistic_within_control_limits": ("summary", "n_clusters"),
    **{f"expect_estimated_{m}_to_be_between": ("estimate", m) for m in ref.PERFORMANCE_METRICS},
}


def check_gx(statistic: str, got: dict, case: tuple, family: str) -> None:
    """The release family's observed values against the reference (the drift and labelling
    values are those of the pair and labelling families above, checked there)."""
    expectation = statistic.removeprefix("expectation:")
    if family != "gx-release" or expectation not in GX_REFERENCE:
        return
    kind, key = GX_REFERENCE[expectation]
    reference = gx_release_reference(case[0])
    for config, (_, result) in got.items():
        if kind == "summary":
            want = reference["summary"][key]
        else:
            weights = json.loads(config[1]).get("weights") or "cluster_size"
            want = reference["estimates"][weights][key]["estimate"]
        assert ref.close(result["observed_value"], want), (config, result["observed_value"], want)


# -- the registry of statistics -----------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    cases: Callable[[str], list]
    answers: Callable
    reference: Callable | None
    check: Callable


FAMILIES: dict[str, Family] = {
    "release": Family(release_cases, release_answers, release_reference, check_release),
    "pair": Family(pair_cases, pair_answers, pair_reference, check_pair),
    "labelling": Family(labelling_cases, labelling_answers, labelling_reference, check_labelling),
    **{name: Family(spec["cases"], None, None, check_gx) for name, spec in GX_FAMILIES.items()},
}

#: The public members of each engine interface, by registry field, and the members that are
#: plumbing rather than an aggregate (constructors, shared checks, the engine's own codes).
INTERFACES: dict[str, set[str]] = {
    "release": {"clustering_table", "benchmark_sample", "benchmark_rows"},
    "pair": {"n_common", "contingency_sums", "change_counts", "restricted", "changed_clusters", "name_counts",
             "column_value"},
    "labelling": {"label_rows", "record_rows"},
}
PLUMBING: dict[str, set[str]] = {
    # from_batch builds it (the registry's constructor); the rest are the histogram and checks
    # every aggregate goes through, and the pandas engine's codes shared by its own aggregates
    "release": {"from_batch", "size_histogram", "nonempty_histogram", "n_records", "n_clusters",
                "check_draws_argument", "check_benchmark_counts", "restrict", "pred_codes", "cluster_sizes",
                "has_nulls", "name_codes",
                # the SQL type of the float casts (SQL: FLOAT; DuckDB: DOUBLE, its FLOAT is single precision)
                "float_type"},
    # the pandas pair's cells and id lookups (used by its changed_clusters and name_counts)
    "pair": {"common", "cells", "current_labels", "baseline_labels", "current_order"},
    # columns() and column() check the batch's columns before the rows are fetched
    "labelling": {"columns", "column"},
}


def _statistics() -> list[tuple[str, str]]:
    """(statistic, family) of everything the package computes, read from the package."""
    out = [(f"release.{m}", "release") for m in sorted(INTERFACES["release"])]
    out += [(f"summary:{s}", "release") for s in (*SUMMARY_STATISTICS, *(ref.hill_label(q) for q in HILL_ORDERS))]
    out += [(f"estimate:{m}", "release") for m in METRICS]
    out += [(f"pair.{m}", "pair") for m in sorted(INTERFACES["pair"])]
    out += [(f"agreement:{m}", "pair") for m in AGREEMENT_METRICS]
    out += [(f"change:{s}", "pair") for s in DRIFT_STATISTICS]
    out += [("diff", "pair")]
    out += [(f"labelling.{m}", "labelling") for m in sorted(INTERFACES["labelling"])]
    out += [(f"rule:{r}", "labelling") for r in RULES]
    out += [(f"expectation:{e}", _gx_family(e)) for e in expectation_names()]
    return out


@functools.cache
def _gx_suites() -> dict[str, set[str]]:
    suites = {"gx-release": gx_release_suite(), "gx-drift": drift_suite(), "gx-labels": label_suite(),
              "gx-pandas-only": _pandas_only_case("pandas", ("str",))[1]}
    return {family: {e.expectation_type for e in suite} for family, suite in suites.items()}


def _gx_family(expectation: str) -> str:
    return next((f for f, types in _gx_suites().items() if expectation in types), "none")


STATISTICS = _statistics()


# -- the cache of answers --------------------------------------------------------------------------------


class Answers:
    """Answers of every (family, engine, case), computed once; backends closed at the end."""

    def __init__(self, tmp_path_factory) -> None:
        self.tmp = tmp_path_factory
        self.backends: dict[str, Backend] = {}
        self.done: dict[tuple, dict] = {}
        self.demo_tables = DemoTables(tmp_path_factory)

    def __call__(self, family: str, engine: str, case) -> dict:
        key = (family, engine, case)
        if key not in self.done:
            if family.startswith("gx-"):
                self.done[key] = gx_answers(family, engine, case, self.tmp.mktemp("gx"), self.demo_tables)
            else:
                if engine not in self.backends:
                    self.backends[engine] = Backend(engine)
                self.done[key] = FAMILIES[family].answers(self.backends[engine], case)
        return self.done[key]

    def close(self) -> None:
        for backend in self.backends.values():
            backend.close()
        self.demo_tables.close()


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    cache = Answers(tmp_path_factory)
    yield cache
    cache.close()


# -- the test: every statistic on every engine ----------------------------------------------------------


def _without_power(value):
    if isinstance(value, dict):
        return {k: _without_power(v) for k, v in value.items() if k != "power"}
    if isinstance(value, (list, tuple)):
        return type(value)(_without_power(v) for v in value)
    return value


def _powers(value):
    if isinstance(value, dict):
        if isinstance(value.get("power"), dict):
            yield value["power"]
        for v in value.values():
            yield from _powers(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _powers(v)


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
@pytest.mark.parametrize(("statistic", "family"), STATISTICS, ids=[s for s, _ in STATISTICS])
def test_statistic_on_engine(statistic, family, engine, answers):
    """The engine's answer equals pandas' and the reference's, on every case of the family."""
    assert family in FAMILIES, f"{statistic}: no case of test_common.py runs it (add it to a family's suite)"
    spec = FAMILIES[family]
    cases = spec.cases(engine)
    assert cases
    for case in cases:
        got = answers(family, engine, case)[statistic]
        if family == "gx-pandas-only" and engine != "pandas":
            assert "refused" in got  # gx_answers checked that the refusal names pandas
            continue
        if engine != "pandas":
            want = answers(family, "pandas", case)[statistic]
            if family.startswith("gx-"):  # GX results: floats to 1e-9, flags, texts and lists exactly
                if statistic == "expectation:expect_no_error_slice_above":
                    # KNOWN DEFECT (closing note, issue 28): the Monte Carlo power shown next to an
                    # empty slice result depends on the engine's order of the sampled clusters, so
                    # engines show different counts; compared without it until the simulation is
                    # made order-invariant, and checked to be a proportion
                    for value in _powers(got):
                        assert 0 <= value["found"] <= value["reps"], (statistic, case)
                    got, want = _without_power(got), _without_power(want)
                assert_same(got, want, (statistic, case))
            else:  # the engine's answers: floats to 1e-9, everything else exactly, type included
                assert_identical(got, want, (statistic, case))
            if statistic.startswith("summary:"):  # summary statistics: to 1e-12
                assert got == pytest.approx(want, rel=1e-12, nan_ok=True), (statistic, case)
        if family.startswith("gx-"):
            spec.check(statistic, got, case, family)
        else:
            spec.check(statistic, got, spec.reference(case))


# -- the registry tests: nothing the package computes, nor any engine, escapes the test above -----------


def test_every_engine_of_the_registry_is_a_backend():
    assert set(BACKENDS.values()) == set(ENGINES), (
        "an engine was added to engines/registry.py: name the backends that hold its data in BACKENDS "
        "(and load frames into them in Backend.table)")
    assert {p.values[0] for p in ENGINE_PARAMS} <= set(BACKENDS)


def test_every_aggregator_of_a_registry_line_is_run():
    fields = {f.name for f in dataclasses.fields(EngineEntry)} - NOT_AGGREGATORS
    assert fields == set(INTERFACES), f"EngineEntry has aggregators {sorted(fields - set(INTERFACES))} not run here"
    for entry in ENGINES.values():
        for part in INTERFACES:
            if getattr(entry, part) is None:
                assert part == "labelling" and entry.name == "pandas", (entry.name, part)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_every_member_of_an_engine_interface_is_a_statistic(engine):
    """A new public method of a release, pair or labelling class is an aggregate this file
    must run (or plumbing, named in PLUMBING with the reason)."""
    entry = ENGINES[engine]
    statistics = {s for s, _ in STATISTICS}
    for part, members in INTERFACES.items():
        if getattr(entry, part) is None:
            continue
        cls = entry.load(part)
        public = {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}
        unknown = public - members - PLUMBING[part]
        assert not unknown, f"{cls.__name__} has {sorted(unknown)}: run them in test_common.py or name them in PLUMBING"
        assert {f"{part}.{m}" for m in members} <= statistics


def test_every_statistic_of_the_package_is_run():
    """Read from the package: a new metric, statistic, agreement metric, drift statistic,
    change class, rule or expectation gets its own test_statistic_on_engine cases; these
    make sure the families compute and the reference knows every one of them."""
    statistics = {s for s, _ in STATISTICS}
    assert {f"summary:{s}" for s in SUMMARY_STATISTICS} <= statistics
    assert set(METRICS) == set(ref.ESTIMATE_METRICS_WITH_NAME), "the reference must estimate every metric"
    assert set(AGREEMENT_METRICS) == set(ref.PERFORMANCE_METRICS), "the reference must know every exact metric"
    clusters, _, _ = ref.brute_force_diff([1, 2], [1, 1])
    assert tuple(clusters) == CHANGE_CLASSES, "the reference diff must classify every change class"
    assert set(RULES) == REFERENCE_RULES | SOFT_RULES, "the reference must know every critical labelling rule"
    missing = [s for s, family in STATISTICS if family not in FAMILIES]
    assert not missing, f"no case of test_common.py runs {missing}: add them to a suite of GX_FAMILIES"
