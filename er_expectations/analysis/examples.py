"""Example data with a known truth: RLdata10000 and the paper's "all-but-one" prediction.

The paper's simulation study (section "RLData10000 Simulation") links two records when
they agree on at least four of first name, last name, birth year, month and day, and
takes the connected components. Tests, benchmarks and the documentation use it through
:func:`rldata_frame`; :func:`agreement_prediction` is the rule itself.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError

__all__ = ["RLDATA_FIELDS", "agreement_prediction", "rldata_frame"]

#: The five fields of the paper's rule.
RLDATA_FIELDS = ("fname_c1", "lname_c1", "by", "bm", "bd")


def agreement_prediction(records: pd.DataFrame, fields: Sequence[str] = RLDATA_FIELDS, *,
                         min_agree: int = 4) -> np.ndarray:
    """Connected components of "agree on at least ``min_agree`` of ``fields``".

    Two records agree on ≥ m fields exactly when they agree on every field of some
    m-subset, so each m-subset is a blocking key: records with equal keys are linked.
    Values are compared as text (a missing value is the empty string, so two missing
    values agree, as in the paper's R code). Returns, per record, the smallest row
    position of its component.
    """
    fields = list(fields)
    missing = [f for f in fields if f not in records.columns]
    if missing:
        raise InputError(f"fields: no column(s) {', '.join(map(repr, missing))} in the records")
    if not 1 <= min_agree <= len(fields):
        raise InputError(f"min_agree={min_agree!r} must be between 1 and the number of fields ({len(fields)})")
    n = len(records)
    text = records[fields].astype("string").fillna("")
    keys = []
    for subset in itertools.combinations(fields, min_agree):
        codes, _ = pd.factorize(pd.MultiIndex.from_frame(text[list(subset)]))
        keys.append(np.asarray(codes, dtype=np.int64))
    label = np.arange(n, dtype=np.int64)
    while True:  # min-label propagation over the blocks until nothing changes
        before = label
        for codes in keys:
            low = np.full(int(codes.max()) + 1 if n else 0, n, dtype=np.int64)
            np.minimum.at(low, codes, label)
            label = np.minimum(label, low[codes])
        label = label[label]  # pointer jumping: follow the chain to its root
        if np.array_equal(label, before):
            return label


def rldata_frame(folder: str | os.PathLike) -> pd.DataFrame:
    """RLdata10000 (``folder`` holds RLdata10000.tsv and identity.RLdata10000.tsv) as one
    frame: the record fields, ``truth`` (true entity id) and ``pred`` (the all-but-one
    prediction, pairwise precision 0.914 and recall 0.969)."""
    folder = Path(folder)
    try:
        records = pd.read_csv(folder / "RLdata10000.tsv", sep="\t", keep_default_na=False)
        identity = pd.read_csv(folder / "identity.RLdata10000.tsv", sep="\t")
    except FileNotFoundError as error:
        raise InputError(f"{error.filename}: not found; RLdata10000 lives in shared/data/rldata") from error
    if len(records) != len(identity):
        raise InputError(f"{folder}: {len(records)} records but {len(identity)} identities")
    out = records.copy()
    out["truth"] = identity.iloc[:, 0].to_numpy()
    out["pred"] = agreement_prediction(records)
    return out
