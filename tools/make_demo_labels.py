"""Build the demo labels table ``er_expectations/data/patentsview/labels.parquet`` (issue 8).

It is what a labeller would have written had they labelled the PatentsView benchmark
(``benchmark.parquet``, 401 hand-resolved inventor clusters) against the release
``inventor_id_20211230``, starting from a drawn record's predicted cluster (SPEC 2.2):

* each benchmark cluster is restricted to the records present in that release (SPEC 2.1);
  clusters left empty drop out;
* one draw per remaining cluster; the drawn record r is chosen uniformly at random among
  the cluster's records (numpy ``default_rng(SEED)``), the draws are numbered 1..k in a
  random order (same generator);
* ``removed`` = ĉ(r) \\ c(r), ``added`` = c(r) \\ ĉ(r) (sorted id lists),
  ``predicted_cluster`` = ĉ(r)'s id in the release, ``true_cluster`` = the benchmark id.

Run from the repository root: ``python tools/make_demo_labels.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

RELEASE = "inventor_id_20211230"
SEED = 20261126
DATA = Path(__file__).resolve().parents[1] / "er_expectations" / "data" / "patentsview"


def build(predictions: pd.DataFrame, benchmark: pd.DataFrame, *, release: str = RELEASE, seed: int = SEED) -> pd.DataFrame:
    """The demo labels table (one row per benchmark cluster present in ``release``)."""
    pred = predictions[["mention_id", release]].dropna(subset=[release])
    bench = benchmark.merge(pred, on="mention_id", how="inner")  # c ∩ R_t
    members = pred.groupby(release)["mention_id"].agg(lambda s: frozenset(s))
    truth = bench.groupby("benchmark_id")["mention_id"].agg(lambda s: sorted(s))
    rng = np.random.default_rng(seed)
    ids = sorted(truth.index)
    order = rng.permutation(len(ids))
    rows = []
    for draw, i in enumerate(order, start=1):
        tid = ids[i]
        c = truth[tid]
        r = c[int(rng.integers(len(c)))]
        cid = pred.loc[pred["mention_id"] == r, release].iloc[0]
        chat = members[cid]
        rows.append({"draw": draw, "record_id": r, "predicted_cluster": cid,
                     "removed": sorted(chat - set(c)), "added": sorted(set(c) - chat), "true_cluster": tid})
    return pd.DataFrame(rows)


def main() -> None:
    labels = build(pd.read_parquet(DATA / "predictions.parquet"), pd.read_parquet(DATA / "benchmark.parquet"))
    schema = pa.schema([("draw", pa.int64()), ("record_id", pa.string()), ("predicted_cluster", pa.string()),
                        ("removed", pa.list_(pa.string())), ("added", pa.list_(pa.string())),
                        ("true_cluster", pa.string())])
    table = pa.Table.from_pandas(labels, schema=schema, preserve_index=False)
    pq.write_table(table, DATA / "labels.parquet")
    print(f"{len(labels)} draws written to {DATA / 'labels.parquet'}")


if __name__ == "__main__":
    main()
