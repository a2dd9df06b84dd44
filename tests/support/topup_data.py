"""A small synthetic population for top-up tests (SPEC 14.3), truth known.

40 people with 2 to 6 records each. The labelling release L holds 80 % of the records (the
others arrived later); the later release T holds them all. T's prediction is the truth except
that some pairs of people are merged (their new records are candidates of each other, to be
answered 'no'), one new record of a sampled person is split off (asked for its name), and one new record of a sampled person (``LOST``, a misspelt name) sits alone in
a cluster of its own: no worksheet row asks about it, the labeller finds it by search.

The benchmark is written directly (SPEC 14.1): one row per record of L, the reference on the
records of the sampled people, one draw each, uniform weight, ``benchmark_version`` 1. The
worksheet is built by SPEC 14.3's rule from the truth of what T predicts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

FIRST = ["Ada", "Boris", "Chen", "Dina", "Emil", "Fatou", "Gus", "Hana", "Ivo", "Jana", "Kofi", "Lena", "Milo",
         "Nora", "Otto", "Pia", "Quinn", "Rosa", "Sven", "Tara"]
LAST = ["Abbott", "Baranov", "Castillo", "Dupont"]
RELEASE = "pred_t"
SAMPLED = list(range(0, 40, 3))  # 14 sampled people
MERGED = [(0, 1), (6, 7), (12, 14), (21, 22)]  # T lumps these pairs (sampled person first)


def population(seed: int = 7) -> pd.DataFrame:
    """Records: ``rid``, ``name``, ``block``, ``person`` (truth), ``in_l`` (in release L), ``pred_t``."""
    rng = np.random.default_rng(seed)
    rows = []
    rid = 1000
    for person in range(40):
        name = f"{FIRST[person % 20]} {LAST[person // 20 * 2 + person % 2]}"
        for k in range(int(rng.integers(2, 7))):
            rows.append({"rid": rid, "name": name, "block": name.split()[1].lower(), "person": person,
                         "in_l": k < 1 or rng.random() < 0.9})
            rid += 1
    frame = pd.DataFrame(rows)
    merged = {b: a for a, b in MERGED}
    later = frame["person"].isin(list(merged)) & frame.duplicated("person")  # lumped people's later records
    frame.loc[later, "in_l"] = False
    frame[RELEASE] = [f"t{merged.get(p, p)}" for p in frame["person"]]
    split = frame.index[frame["person"] == 9][-1]  # a new record of sampled person 9, split off: same name
    frame.loc[split, ["in_l", RELEASE]] = [False, "t9-split"]
    # the lost record: a new record of sampled person 3 under a misspelt name, predicted alone
    lost = {"rid": rid, "name": "Dnia Baranovv", "block": "baranovv", "person": 3, "in_l": False,
            RELEASE: "t-lost"}
    return pd.concat([frame, pd.DataFrame([lost])], ignore_index=True)


def _lost_id() -> int:
    return int(population()["rid"].iloc[-1])


LOST = _lost_id()


def benchmark(records: pd.DataFrame) -> pd.DataFrame:
    """Version 1 of the benchmark: one row per record of L, references on the sampled people."""
    known = records[records["in_l"]]
    sampled = known["person"].isin(SAMPLED)
    return pd.DataFrame({
        "rid": known["rid"].astype("int64").to_numpy(),
        "reference": [f"p{p}" if s else None for p, s in zip(known["person"], sampled, strict=True)],
        "draws": pd.array([1 if s else None for s in sampled], dtype="Int64"),
        "weight": [1.0 if s else np.nan for s in sampled],
        "benchmark_version": np.ones(len(known), dtype="int64"),
    })


def worksheet(records: pd.DataFrame, bench: pd.DataFrame) -> pd.DataFrame:
    """The top-up worksheet of release T by SPEC 14.3: for each sampled entity, the new records
    in a predicted cluster holding one of its records, then those carrying one of its names."""
    known = set(bench["rid"])
    new = records[~records["rid"].isin(known)]
    rows = []
    for entity, group in bench.dropna(subset=["reference"]).groupby("reference", sort=True):
        mine = records[records["rid"].isin(group["rid"])]
        clusters, names = set(mine[RELEASE]), set(mine["name"])
        seen = set()
        for reason, hit in (("predicted with the entity", new[RELEASE].isin(clusters)),
                            ("same name as the entity", new["name"].isin(names))):
            for _, r in new[hit].iterrows():
                if r["rid"] in seen:
                    continue
                seen.add(r["rid"])
                rows.append({"entity": entity, "rid": int(r["rid"]), "predicted_cluster": r[RELEASE],
                             "reason": reason, "belongs": None, "release": RELEASE, "benchmark_version": 1,
                             "name": r["name"]})
    sheet = pd.DataFrame(rows)
    sheet["rid"] = sheet["rid"].astype("int64")
    sheet["belongs"] = sheet["belongs"].astype(object)
    return sheet


def truth_of(records: pd.DataFrame, sheet: pd.DataFrame) -> list[str]:
    """The right ``belongs`` of each worksheet row."""
    person = dict(zip(records["rid"], records["person"], strict=True))
    return ["yes" if f"p{person[r]}" == e else "no" for e, r in zip(sheet["entity"], sheet["rid"], strict=True)]


def write_all(folder: Path) -> dict[str, Path]:
    """Records (release T: every record), benchmark and worksheet files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    records = population()
    bench = benchmark(records)
    sheet = worksheet(records, bench)
    paths = {"records": folder / "records.parquet", "benchmark": folder / "benchmark.parquet",
             "worksheet": folder / "topup.parquet"}
    records.drop(columns=["in_l"]).to_parquet(paths["records"])
    bench.to_parquet(paths["benchmark"])
    sheet.to_parquet(paths["worksheet"])
    return paths


def make_topup_project(folder: Path):
    """The top-up project over :func:`write_all`'s files in ``folder / 'project'``."""
    from er_expectations.labelling.topup_project import init_topup_project

    paths = write_all(folder)
    return init_topup_project(folder / "project", topup=paths["worksheet"], benchmark=paths["benchmark"],
                              records=paths["records"], record_id="rid", prediction=RELEASE, name="name",
                              block="block", attributes=["name", "block"])
