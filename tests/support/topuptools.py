"""Top-up tests (SPEC 14.3): a synthetic population with known truth, a labelling release L (a
share of the records) and a later release T (every record), and labellers who are always right:
they fill the sampling worksheet and the top-up worksheet from the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd


def population(seed: int, *, entities: int = 120, share: float = 0.8, perfect: bool = True,
               int_ids: bool = False) -> pd.DataFrame:
    """One row per record: ``mention_id``, ``truth``, ``name`` (the entity's name, written in
    varying case and word order), ``pred_L`` (null on the records added after labelling) and
    ``pred_T``. A perfect prediction is the truth; an imperfect one moves about 15 % of the
    records to another entity's cluster and splits off about 10 % into clusters of their own,
    independently on L and T."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(0.35, size=entities), 8)
    truth = np.repeat(np.arange(entities), sizes)
    n = truth.size
    ids = np.arange(1000, 1000 + n) if int_ids else np.asarray([f"m{i:05d}" for i in range(n)], dtype=object)
    writings = [lambda k: f"Given{k} Family{k}", lambda k: f"FAMILY{k}, given{k}", lambda k: f"given{k}  family{k}"]
    names = [writings[int(rng.integers(3))](int(t)) for t in truth]

    def predicted() -> np.ndarray:
        if perfect:
            return truth.astype(np.int64).copy()
        pred = truth.astype(np.int64).copy()
        u = rng.random(n)
        moved = u < 0.15
        pred[moved] = rng.integers(0, entities, size=int(moved.sum()))
        split = (u >= 0.15) & (u < 0.25)
        pred[split] = entities + np.arange(int(split.sum()))
        return pred

    in_l = rng.random(n) < share
    pred_l = pd.array(np.where(in_l, predicted(), 0), dtype="Int64")
    pred_l[~in_l] = pd.NA
    return pd.DataFrame({"mention_id": ids, "truth": truth, "name": names, "pred_L": pred_l,
                         "pred_T": pd.array(predicted(), dtype="Int64")})


def fill_sample(sheet: pd.DataFrame, records: pd.DataFrame, prediction: str) -> pd.DataFrame:
    """The sampling worksheet answered from the truth on the release ``prediction``."""
    release = records[records[prediction].notna()]
    truth = dict(zip(release["mention_id"], release["truth"], strict=True))
    members_of = release.groupby("truth")["mention_id"].agg(list).to_dict()
    out = sheet.copy()
    removed, added = [], []
    for r, members in zip(out["record_id"], out["members"], strict=True):
        t = truth[r]
        members = list(members)
        removed.append([m for m in members if truth[m] != t])
        added.append([m for m in members_of[t] if m not in set(members)])
    out["removed"] = removed
    out["added"] = added
    return out


def fill_topup(sheet: pd.DataFrame, benchmark: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """The top-up worksheet answered from the truth: yes when the record's true entity is the row's."""
    truth = dict(zip(records["mention_id"].astype(str), records["truth"], strict=True))
    bench = benchmark[benchmark["reference"].notna()]
    entity_truth = {str(e): truth[str(r)] for e, r in zip(bench["reference"], bench["mention_id"], strict=True)}
    out = sheet.copy()
    out["belongs"] = ["yes" if truth[str(r)] == entity_truth[str(e)] else "no"
                      for e, r in zip(out["entity"], out["mention_id"], strict=True)]
    return out
