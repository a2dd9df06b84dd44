"""The benchmark made from a labels table (SPEC 2.2): one row per record of each labelled true
cluster, with its design weight, after the quality control of SPEC 9."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np
import pandas as pd

from er_expectations.analysis.labelqc import evaluate_rules, prepare_labels
from er_expectations.analysis.labels import CRITICAL_RULES, LabelColumns, Labels, true_clusters
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.engines.base import KNOWN_COLUMN


def _reference_ids(parsed: Labels, groups: list[list[int]]) -> list[object]:
    """The reference id of every true cluster: the labeller's ``true_cluster`` when given,
    else ``"draw-<first draw>"`` (then every id is text, so that ids keep one type)."""
    given = []
    for idx in groups:
        names = [parsed.true_cluster[i] for i in idx if parsed.true_cluster[i] is not None] \
            if parsed.true_cluster is not None else []
        given.append(names[0] if names else None)
    if all(g is not None for g in given):
        return given
    draws = parsed.draw.tolist()
    out = [str(g) if g is not None else f"draw-{min(draws[i] for i in idx)}" for g, idx in zip(given, groups, strict=True)]
    if len(set(out)) < len(out):
        dup = pd.Series(out)[pd.Series(out).duplicated()].iloc[0]
        raise InputError(f"column {parsed.columns.true_cluster!r}: the id {dup!r} names a true cluster and is also the "
                         "id made up for an unnamed one; give every draw a true cluster id, or none")
    return out


def _record_inclusion(inclusion: pd.DataFrame | Hashable, records: pd.DataFrame, prediction: Hashable, *,
                      record_id: Hashable, wanted: np.ndarray) -> np.ndarray:
    """q_r of the records ``wanted`` (SPEC 12.3): from the frame of ``expected_error_probabilities``
    or a column of ``records``; 0 for a record outside the release (it cannot be drawn)."""
    if isinstance(inclusion, pd.DataFrame):
        if record_id not in inclusion.columns or "inclusion" not in inclusion.columns:
            raise InputError(f"inclusion: the frame needs the columns {record_id!r} and 'inclusion' (the frame that "
                             "expected_error_probabilities returns)")
        table = pd.Series(inclusion["inclusion"].to_numpy(dtype=np.float64), index=pd.Index(inclusion[record_id]))
        where = "the inclusion frame"
    else:
        if inclusion not in records.columns:
            raise InputError(f"inclusion={inclusion!r}: no such column in the records; give the column of q_r or the "
                             "frame of expected_error_probabilities")
        rows = records[prediction].notna().to_numpy()
        table = pd.Series(pd.to_numeric(records[inclusion], errors="coerce").to_numpy(dtype=np.float64)[rows],
                          index=pd.Index(records[record_id].to_numpy()[rows]))
        where = f"column {inclusion!r} of the records"
    if not table.index.is_unique:
        raise InputError(f"inclusion: {where} lists a record twice; give one q_r per record")
    bad = ~np.isfinite(table.to_numpy()) | (table.to_numpy() < 0) | (table.to_numpy() > 1)
    if bad.any():
        raise InputError(f"inclusion: {where} has q_r = {table.iloc[int(np.flatnonzero(bad)[0])]!r} for the record "
                         f"{table.index[int(np.flatnonzero(bad)[0])]!r}; every q_r is a probability in [0, 1]")
    pos = table.index.get_indexer(pd.Index(wanted))
    in_release = pd.Index(records[record_id].to_numpy()[records[prediction].notna().to_numpy()])
    missing = np.flatnonzero((pos < 0) & np.asarray(pd.Index(wanted).isin(in_release)))
    if missing.size:
        raise InputError(f"inclusion: {where} has no q_r for the record {wanted[int(missing[0])]!r} of a labelled "
                         f"cluster ({missing.size} such records); compute it on the release the sample was drawn from")
    q = np.where(pos >= 0, table.to_numpy()[np.maximum(pos, 0)], 0.0)
    return q


@old_call_forms(data=2, positional=('prediction',))
def benchmark_from_labels(
    labels: pd.DataFrame,
    records: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    design: str = "cluster_size",
    reference: str = "reference",
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
    inclusion: pd.DataFrame | Hashable | None = None,
) -> pd.DataFrame:
    """The benchmark built from labels that pass the critical rules (SPEC 2.1, 2.2, 9).

    Each draw gives a true cluster c(r) = (ĉ(r) \\ A_r) ∪ B_r; draws with the same set are
    one benchmark cluster drawn several times. Returns one row per benchmark record with
    columns ``record_id`` (named like the ``record_id`` argument, so that it joins onto the
    records), ``reference`` (the labeller's ``true_cluster`` id, else ``"draw-<first
    draw>"``), ``draws`` (how many draws gave that cluster) and ``weight`` w_c = 1/p_c of the
    design: ``"cluster_size"`` (records drawn uniformly, p_c ∝ |c|: w = 1/|c|, |c| counted
    in the labelled release), ``"uniform"`` (w = 1) or ``"expected_errors"`` (SPEC 12.3:
    records drawn with probability q_r; w = 1/π_c with π_c = Σ_{r∈c} q_r over every record of
    the true cluster, the records the labeller added included). ``inclusion`` gives q_r for
    that design: the frame of ``erx.expected_error_probabilities`` (same records, prediction,
    match probabilities and floor as ``draw_sample``), or the name of a column of ``records``
    holding it. The benchmark then has a column ``inclusion`` (q_r of each record), so that
    the weights can be checked and recomputed.

    Join it onto a release and estimate with ``erx.estimate(df, prediction=…,
    reference="reference", weights="cluster_size", draws="draws")`` (the size design is
    recomputed on each release's population, SPEC 2.1) or ``weights="weight"`` for a
    design given by the weight column. Labels that break a critical rule (all but rule 5)
    raise :class:`InputError` listing the violations.

    The benchmark carries its labelling universe (SPEC 14): every other record of the
    release the labels were drawn from (the records the labellers could see) follows the
    benchmark records, with a null ``reference``, ``draws`` and ``weight``; the column
    ``benchmark_version`` is 1 on every row. Joined onto a later release, it is null on the
    records added since, which the estimates then set aside and count. ``attrs`` holds
    ``known_records`` (the universe's size) beside the design and the counts.


    Parameters
    ----------
    labels : pandas.DataFrame
        The labels table (SPEC 2.2), one row per draw.
    records : pandas.DataFrame
        The release the labels were made against, one row per record.
    prediction : hashable
        The column of ``records`` with the predicted cluster ids.
    record_id : hashable
        The record id column of ``records``.
    design : str
        The sampling design of the draws (``"cluster_size"``, ``"uniform"`` or
        ``"expected_errors"``).
    reference : str
        The name of the output column with the benchmark cluster ids.
    columns : LabelColumns or mapping, optional
        Names of the labels-table columns.
    separator : str
        The separator of the ids in ``removed`` and ``added``.
    inclusion : pandas.DataFrame or hashable, optional
        q_r of every record (design ``"expected_errors"``), above.

    Returns
    -------
    pandas.DataFrame
        One row per record, above.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> records = pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["P1", "P1", "P2", "P2"]})
    >>> labels = pd.DataFrame({"draw": [1, 2], "record_id": ["a", "c"], "removed": ["", "d"],
    ...                        "added": ["", ""]})
    >>> bench = erx.benchmark_from_labels(labels, records, prediction="pred", record_id="id")
    >>> bench[["id", "reference"]].values.tolist()
    [['a', 'draw-1'], ['b', 'draw-1'], ['c', 'draw-2'], ['d', None]]
    """
    if design not in ("cluster_size", "uniform", "expected_errors"):
        raise InputError(f"design={design!r}: give 'cluster_size' (records drawn uniformly), 'uniform' "
                         "(true clusters drawn uniformly) or 'expected_errors' (records drawn by expected errors, "
                         "SPEC 12.3)")
    if (design == "expected_errors") != (inclusion is not None):
        raise InputError("design='expected_errors' needs inclusion= (the frame of expected_error_probabilities, or "
                         "a column of the records with q_r)" if inclusion is None else
                         f"inclusion= is given but design={design!r} does not use it; pass design='expected_errors'")
    if not isinstance(reference, str) or not reference:
        raise InputError(f"reference={reference!r}: give the name of the reference column to write")
    if reference in ("draws", "weight", "inclusion", KNOWN_COLUMN, record_id):
        raise InputError(f"reference={reference!r}: the name is taken by another output column; pick another")
    parsed, look = prepare_labels(labels, records, prediction, record_id=record_id, block=None, name=None,
                            columns=columns, separator=separator)
    if len(parsed) == 0:
        raise InputError("the labels table has no draws: there is no benchmark to build")
    truth = true_clusters(parsed, look)
    qc = evaluate_rules(parsed, look, CRITICAL_RULES, block=None, name=None, score=None, similarity=1.0, truth=truth)
    bad = qc.violations
    if not bad.empty:
        lines = [f"  draw {row.draw}, rule {row.rule} ({row.rule_name}): {row.message.removeprefix(f'draw {row.draw}: ')}"
                 for row in bad.head(10).itertuples()]
        more = f"\n  … and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise InputError(
            f"the labels break {len(bad)} critical rule check(s) on {bad['draw'].nunique()} draw(s) (SPEC 9); "
            "fix them before building the benchmark:\n" + "\n".join(lines) + more
        )
    order = np.argsort(truth.set_id, kind="stable")
    sets, first = np.unique(truth.set_id, return_index=True)
    sets = sets[np.argsort(first, kind="stable")]  # in the order of their first draw
    groups = {int(sid): [] for sid in sets}
    for i in order.tolist():
        groups[int(truth.set_id[i])].append(i)
    members = [groups[int(sid)] for sid in sets]
    ids = _reference_ids(parsed, members)
    reps = np.asarray([idx[0] for idx in members], dtype=np.int64)
    lengths = truth.start[reps + 1] - truth.start[reps]
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    codes = truth.codes[np.repeat(truth.start[reps], lengths) + within]
    ref_col = np.repeat(np.asarray(ids, dtype=object), lengths)
    draws_col = np.repeat(np.asarray([len(idx) for idx in members], dtype=np.int64), lengths)
    rec_col = truth.ids[codes]
    q_col = None
    if design == "expected_errors":
        q_col = _record_inclusion(inclusion, records, prediction, record_id=record_id, wanted=rec_col)
        cluster_of = np.repeat(np.arange(len(reps)), lengths)
        pi = np.bincount(cluster_of, weights=q_col, minlength=len(reps))
        weight_col = np.repeat(1.0 / pi, lengths)
    else:
        weight_col = np.repeat(1.0 / lengths if design == "cluster_size" else np.ones(len(reps)), lengths)
    id_dtype = records[record_id].dtype
    # the labelling universe: the release's records (SPEC 14), benchmark records first
    release_ids = records[record_id].to_numpy()[records[prediction].notna().to_numpy()]
    others = release_ids[~pd.Index(release_ids).isin(pd.Index(rec_col))] if len(release_ids) else release_ids
    n_bench, n_all = len(rec_col), len(rec_col) + len(others)
    ids = np.concatenate([np.asarray(rec_col, dtype=object), np.asarray(others, dtype=object)])
    out = pd.DataFrame({
        record_id: pd.Series(ids, dtype=id_dtype if n_all else object),
        reference: pd.Series(np.concatenate([ref_col, np.full(n_all - n_bench, None, dtype=object)]), dtype=object),
        "draws": pd.array(np.concatenate([draws_col, np.zeros(n_all - n_bench, dtype=np.int64)]), dtype="Int64"),
        "weight": np.concatenate([np.asarray(weight_col, dtype=np.float64), np.full(n_all - n_bench, np.nan)]),
    })
    out.loc[n_bench:, "draws"] = pd.NA
    if q_col is not None:
        out["inclusion"] = np.concatenate([np.asarray(q_col, dtype=np.float64), np.full(n_all - n_bench, np.nan)])
    out[KNOWN_COLUMN] = np.ones(n_all, dtype=np.int64)
    out.attrs.update({"design": design, "draws": len(parsed), "clusters": len(sets), "prediction": prediction,
                      "benchmark_records": n_bench, "known_records": n_all})
    return out
