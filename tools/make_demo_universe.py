"""Give the demo benchmark ``er_expectations/data/patentsview/benchmark.parquet`` its labelling
universe (SPEC 14) and write its manifest.

The 401 hand-resolved inventor clusters hold 16 mentions that only the release
``inventor_id_20220630`` has (it is the latest release bundled, and every one of the 13,467
benchmark mentions is in it): the labellers saw that release's records. The universe is
therefore every record of ``inventor_id_20220630`` (all 133,541 mentions of the bundled
subset), each with ``benchmark_version`` 1, benchmark records first. No bundled release holds
a record outside it, so no demo estimate changes.

Run from the repository root: ``python tools/make_demo_universe.py`` (idempotent).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from er_expectations.analysis.benchmark_life import new_manifest, write_manifest
from er_expectations.engines.base import KNOWN_COLUMN

RELEASE = "inventor_id_20220630"
DATA = Path(__file__).resolve().parents[1] / "er_expectations" / "data" / "patentsview"


def main() -> None:
    path = DATA / "benchmark.parquet"
    bench = pd.read_parquet(path)
    bench = bench.loc[bench["benchmark_id"].notna(), ["mention_id", "benchmark_id"]]
    predictions = pd.read_parquet(DATA / "predictions.parquet", columns=["mention_id", RELEASE])
    release = predictions.loc[predictions[RELEASE].notna(), "mention_id"]
    missing = ~bench["mention_id"].isin(release)
    if missing.any():
        raise SystemExit(f"{int(missing.sum())} benchmark mentions are not in {RELEASE}")
    others = release[~release.isin(bench["mention_id"])]
    universe = pd.concat([bench, pd.DataFrame({"mention_id": others.to_numpy(), "benchmark_id": None})],
                         ignore_index=True)
    universe["benchmark_id"] = universe["benchmark_id"].astype(bench["benchmark_id"].dtype)
    universe[KNOWN_COLUMN] = 1
    universe.attrs["draws"] = int(bench["benchmark_id"].nunique())
    universe.to_parquet(path, index=False)
    manifest = new_manifest(universe, record_id="mention_id", reference="benchmark_id", release=RELEASE,
                            design={"name": "cluster_size"},
                            source={"note": "PatentsView's hand-labelled inventor benchmark (401 clusters, one draw "
                                            "each); universe from tools/make_demo_universe.py"})
    write_manifest(path, manifest)
    print(f"{path}: {len(bench):,} benchmark records, {len(universe):,} records known at labelling")


if __name__ == "__main__":
    main()
