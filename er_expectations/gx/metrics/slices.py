"""GX metric ``er.slice_search``: slices of high error of the batch's release (SPEC 12.2).

It reads the batch's release and benchmark sample (the aggregates every estimate shares)
and, from the benchmark's records only (``benchmark_rows``, on every engine), the columns
that describe the entities. The search itself is :func:`er_expectations.analysis.slices.sample_slices`.
A sample too small to split is not an error: the value says why, and the expectation is
skipped (SPEC 13).
"""

from __future__ import annotations

import json

from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value

from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    RELEASE,
    RELEASE_KEYS,
    SAMPLE_KEYS,
    DependentMetric,
)
from er_expectations.stats.slices import minimum_draws

__all__ = ["SLICE_KEYS", "SLICE_SEARCH", "SliceSearchMetric", "encode_columns"]

SLICE_SEARCH = "er.slice_search"
#: The options of the search (metric value kwargs besides the sample's).
SLICE_KEYS = ("metric", "per", "feature_columns", "names_column", "surname_column", "derived", "max_depth",
              "min_share", "min_draws", "alpha", "ci_level", "max_lift", "max_rate", "split", "max_slices", "seed")


def encode_columns(columns: list[str] | None) -> str:
    """A list of columns as a hashable metric kwarg (JSON text, order kept)."""
    return json.dumps(list(columns or []))


class SliceSearchMetric(DependentMetric):
    """The slices of one cluster-wise error metric, found on half the draws, tested on the rest."""

    metric_name = SLICE_SEARCH
    value_keys = (*SAMPLE_KEYS, *SLICE_KEYS)
    depends = ((RELEASE, RELEASE_KEYS), (BENCHMARK_SAMPLE, SAMPLE_KEYS))

    @metric_value(engine=ExecutionEngine)  # pandas, SQL and Spark: only the benchmark rows are read
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        from er_expectations.analysis.slices import sample_slices

        kw = metric_value_kwargs
        sample = metrics[BENCHMARK_SAMPLE]
        split, min_draws = float(kw["split"]), int(kw["min_draws"])
        need = minimum_draws(min_draws, split)
        if sample.k < need:
            return {"skip": f"{sample.k} draws in the benchmark, and slice search needs at least {need} to split "
                            f"them (split={split:g}, min_draws={min_draws}: the estimation part must hold a slice "
                            "and its rest of min_draws draws each)", "draws": int(sample.k),
                    "sampled_clusters": int(sample.labels.shape[0]), "design": sample.design}
        features = json.loads(kw["feature_columns"])
        columns = {"prediction_column": kw["prediction_column"]}
        columns.update({f"feature_columns[{i}]": c for i, c in enumerate(features)})
        for key in ("names_column", "surname_column"):
            if kw.get(key):
                columns[key] = kw[key]
        rows = metrics[RELEASE].benchmark_rows(reference=kw["reference_column"], columns=columns)
        max_rate = kw.get("max_rate")
        null_lift = None if max_rate is not None else float(kw.get("max_lift") or 1.0)
        result, notes, power = sample_slices(
            rows, sample, prediction=kw["prediction_column"], reference=kw["reference_column"], metric=kw["metric"],
            per=kw["per"], features=features, derived=bool(kw["derived"]), name=kw.get("names_column"),
            surname=kw.get("surname_column"), max_depth=int(kw["max_depth"]), min_share=float(kw["min_share"]),
            min_draws=min_draws, alpha=float(kw["alpha"]), ci_level=float(kw["ci_level"]), null_lift=null_lift,
            null_rate=None if max_rate is None else float(max_rate), split=split,
            max_slices=int(kw["max_slices"]), seed=int(kw["seed"]), power=True)
        return {"result": result, "notes": notes, "power": None if power is None else power.as_dict(), "draws": int(sample.k),
                "sampled_clusters": int(sample.labels.shape[0]), "design": sample.design}
