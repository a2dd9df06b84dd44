"""Drawing the labelling sample and writing the worksheet (SPEC 1, 2.2; issue 8).

The default design of SPEC 1 draws *records* uniformly with replacement from the release
population and labels each drawn record's whole true cluster, so a true cluster is drawn
with probability proportional to its size ("cluster_size" design, w_c = 1/|c|). The
worksheet shows the labeller the drawn record's predicted cluster ĉ(r); they fill in
``removed`` (A_r) and ``added`` (B_r), which makes it a labels table (SPEC 2.2).
"""

from __future__ import annotations

import io
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.analysis.expected_errors import DEFAULT_FLOOR
from er_expectations.analysis.labels import LabelColumns
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError

__all__ = ["MAX_DRAWS", "MEMBERS", "draw_sample", "write_frame"]

#: Column of the worksheet listing the members of the drawn record's predicted cluster.
MEMBERS = "members"


#: Most draws :func:`draw_sample` makes: each is a worksheet row someone labels.
MAX_DRAWS = 100_000


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or int(n) < 1:
        raise InputError(f"n={n!r}: give the number of draws as a whole number ≥ 1")
    if int(n) > MAX_DRAWS:
        raise InputError(f"n={n!r}: give at most {MAX_DRAWS:,} draws (each draw is a worksheet row someone labels)")
    return int(n)


@old_call_forms(positional=('prediction', 'n'))
def draw_sample(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    n: int,
    seed: int,
    record_id: Hashable,
    columns: Sequence[Hashable] = (),
    label_columns: LabelColumns | Mapping[str, str] | None = None,
    design: str = "cluster_size",
    match_probabilities: pd.DataFrame | None = None,
    floor: float = DEFAULT_FLOOR,
    pair_columns: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Draw ``n`` records with replacement from the release and build the worksheet.

    ``df`` has one row per record; rows whose ``prediction`` is null are outside the release
    (SPEC 2.1) and never drawn. The same ``seed`` gives the same draws (numpy's
    ``default_rng``). Returns one row per draw: ``draw`` (1..n), ``record_id`` (the drawn
    record), ``predicted_cluster`` (ĉ(r)), ``size`` (|ĉ(r)|), ``members`` (ids of ĉ(r)),
    for every column c of ``columns`` (e.g. name, block) the drawn record's ``c`` and the
    members' ``members_c`` (aligned with ``members``), then empty ``removed`` and ``added``
    lists and empty ``true_cluster``, ``labeller`` and ``labelled_at`` for the labeller to
    fill. Labels-table column names follow ``label_columns`` (SPEC 2.2).

    ``design`` (SPEC 1, 12.3): ``"cluster_size"`` draws records uniformly (true clusters ∝
    size); ``"expected_errors"`` draws record r with probability q_r = (1 − λ)·e_r/Σe + λ/N,
    e_r = E|A_r| + E|B_r| from the ER system's ``match_probabilities`` (a table of record
    pairs with p, see :func:`~er_expectations.analysis.expected_errors.expected_error_probabilities`)
    and the uniform ``floor`` λ in (0, 1] (default
    :data:`~er_expectations.analysis.expected_errors.DEFAULT_FLOOR`, 0.7 since issue 28;
    recorded in ``attrs['floor']``). The worksheet then has a column ``inclusion``
    (q_r of the drawn record). The benchmark needs q_r of every record of each labelled
    cluster (records the labeller added too): ``erx.expected_error_probabilities`` with the
    same table and floor gives it, and ``benchmark_from_labels(design="expected_errors",
    inclusion=…)`` sums it over each true cluster (π_c) for the weights w_c = 1/π_c.


    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids (null: not in the release, never drawn).
    n : int
        How many draws (with replacement).
    seed : int
        Seed of the draws (numpy's ``default_rng``).
    record_id : hashable
        The record id column.
    columns : sequence of hashable
        Columns shown to the labeller (e.g. name, block), for the record and its cluster.
    label_columns : LabelColumns or mapping, optional
        Names of the labels-table columns (SPEC 2.2).
    design : str
        ``"cluster_size"`` or ``"expected_errors"``, above.
    match_probabilities : pandas.DataFrame, optional
        Record pairs with the ER system's match probability (design ``"expected_errors"``).
    floor : float
        The uniform floor λ in (0, 1] of design ``"expected_errors"``.
    pair_columns : mapping, optional
        Names of the pair table's columns (``record_a``, ``record_b``, ``p``).

    Returns
    -------
    pandas.DataFrame
        The worksheet, one row per draw, above.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"rid": ["r1", "r2", "r3", "r4"], "pred": ["a", "a", "b", "b"]})
    >>> sheet = erx.draw_sample(df, prediction="pred", n=3, seed=1, record_id="rid")
    >>> sheet[["draw", "record_id", "predicted_cluster", "size"]].values.tolist()
    [[1, 'r2', 'a', 2], [2, 'r3', 'b', 2], [3, 'r4', 'b', 2]]
    """
    from er_expectations.engines.pandas.release import check_column, check_frame, check_id_types
    from er_expectations.stats import check_seed

    frame = check_frame(df)
    n = _check_n(n)
    if design not in ("cluster_size", "expected_errors"):
        raise InputError(f"design={design!r}: give 'cluster_size' (records drawn uniformly) or 'expected_errors' "
                         "(records drawn by their expected errors, SPEC 12.3)")
    if design == "cluster_size" and match_probabilities is not None:
        raise InputError("match_probabilities is given but design='cluster_size' does not use it; "
                         "pass design='expected_errors' to draw by expected errors")
    if design == "expected_errors" and match_probabilities is None:
        raise InputError("design='expected_errors' needs match_probabilities: a table of record pairs with the "
                         "ER system's match probability p (columns record_a, record_b, p)")
    if seed is None or check_seed(seed) is None:
        raise InputError("seed=None: give a seed (an integer ≥ 0) so that the sample can be drawn again")
    check_column(frame, prediction, "prediction")
    check_column(frame, record_id, "record_id")
    if isinstance(columns, (str, bytes)):
        columns = [columns]
    columns = list(dict.fromkeys(columns))
    for c in columns:
        check_column(frame, c, "columns")
    cols = LabelColumns.of(label_columns)
    clash = {cols.draw, cols.record_id, cols.predicted_cluster, "size", MEMBERS, "inclusion", cols.removed, cols.added,
             cols.true_cluster, cols.labeller, cols.labelled_at}
    for c in columns:
        if str(c) in clash or f"{MEMBERS}_{c}" in clash:
            raise InputError(f"columns: {c!r} is also a worksheet column; rename it in the records first")

    population = np.flatnonzero(frame[prediction].notna().to_numpy())
    if population.size == 0:
        raise InputError(f"prediction column {prediction!r} is null on every row: the release is empty")
    rng = np.random.default_rng(int(seed))
    inclusion = None
    if design == "expected_errors":
        from er_expectations.analysis.expected_errors import INCLUSION, expected_error_probabilities

        inclusion = expected_error_probabilities(frame, prediction=prediction, record_id=record_id,
                                                 match_probabilities=match_probabilities, floor=floor,
                                                 pair_columns=pair_columns)
        q = inclusion[INCLUSION].to_numpy()
        # inverse CDF: record j with cum[j−1] ≤ u < cum[j], exactly q_j per draw
        cum = np.cumsum(q)
        choice = np.minimum(np.searchsorted(cum, rng.random(n) * cum[-1], side="right"), population.size - 1)
        picks = population[choice]
    else:
        picks = population[rng.integers(0, population.size, size=n)]
    drawn = frame.iloc[picks]
    if drawn[record_id].isna().any():
        raise InputError(f"record_id column {record_id!r} is null on a drawn record; every record needs an id")
    clusters = drawn[prediction]
    check_id_types(clusters, "prediction")
    wanted = pd.Index(pd.unique(clusters))
    member_rows = frame.loc[frame[prediction].isin(wanted).to_numpy(dtype=bool), [record_id, prediction, *columns]]
    dup = member_rows[record_id].duplicated(keep=False)
    if dup.any():
        shown = ", ".join(repr(v) for v in member_rows.loc[dup, record_id].unique()[:5])
        raise InputError(f"record_id column {record_id!r} has duplicated ids in the drawn clusters (e.g. {shown}); "
                         "each record must appear once")
    grouped = {cid: grp for cid, grp in member_rows.groupby(prediction, sort=False)}
    keys = clusters.tolist()
    data: dict[str, object] = {
        cols.draw: np.arange(1, n + 1, dtype=np.int64),
        cols.record_id: drawn[record_id].to_numpy(),
        cols.predicted_cluster: clusters.to_numpy(),
        "size": np.asarray([len(grouped[k]) for k in keys], dtype=np.int64),
        MEMBERS: [grouped[k][record_id].tolist() for k in keys],
    }
    for c in columns:
        data[str(c)] = drawn[c].to_numpy()
        data[f"{MEMBERS}_{c}"] = [grouped[k][c].tolist() for k in keys]
    if inclusion is not None:
        data["inclusion"] = inclusion["inclusion"].to_numpy()[choice]
    data[cols.removed] = [[] for _ in range(n)]
    data[cols.added] = [[] for _ in range(n)]
    for c in (cols.true_cluster, cols.labeller, cols.labelled_at):
        data[c] = pd.Series([None] * n, dtype="object")
    sheet = pd.DataFrame(data)
    if inclusion is not None:
        sheet.attrs.update({"floor": inclusion.attrs["floor"]})
    sheet.attrs.update({"seed": int(seed), "design": design, "prediction": prediction,
                        "population": int(population.size),
                        # shown to the labeller, never read back as ids: CSV neutralises their formulas
                        "display_columns": [str(c) for c in columns] + [f"{MEMBERS}_{c}" for c in columns]
                        + [cols.labeller, cols.labelled_at]})
    return sheet


def _csv_text(frame: pd.DataFrame, path: Path, *, separator: str, id_lists: Sequence[str],
              is_list: Sequence[str]) -> str:
    """The CSV text of a worksheet, labels or benchmark frame that people open in a spreadsheet.

    Display columns (``frame.attrs['display_columns']``: names, blocks and their member lists)
    are neutralised where a spreadsheet would run them as formulas
    (:func:`~er_expectations.core.text.spreadsheet_safe`); every other column holds ids, which
    are never changed: an id that would run as a formula, or that holds the list ``separator``
    in an id list, is refused with the way out.
    """
    from er_expectations.core.io import csv_text
    from er_expectations.core.text import runs_as_formula

    display = {str(c) for c in frame.attrs.get("display_columns", ())}
    out = frame.copy()
    for c in out.columns:
        name = str(c)
        listed = c in is_list
        joiner = separator if name in id_lists else " | "
        cells: list[object] = []
        for v in out[c].tolist():
            items = list(v) if listed and isinstance(v, (list, tuple, np.ndarray)) else None
            if name not in display:
                for item in items if items is not None else [v]:
                    text = item if isinstance(item, str) else None
                    if text is not None and runs_as_formula(text):
                        raise InputError(
                            f"{path}: column {name!r} holds the id {text!r}, which a spreadsheet would run as a "
                            f"formula; a CSV file cannot hold it unchanged: write {path.with_suffix('.parquet')} "
                            "instead (Parquet keeps every id as it is)")
                    if items is not None and name in id_lists and separator in str(item):
                        raise InputError(
                            f"{path}: column {name!r} lists the id {str(item)!r}, which holds the list separator "
                            f"{separator!r}, so its ids could not be told apart; give a separator no id holds "
                            f"(--separator, e.g. '|') or write {path.with_suffix('.parquet')}")
            if items is not None:
                v = joiner.join("" if x is None else str(x) for x in items)
            cells.append(v)
        out[c] = pd.Series(cells, index=out.index, dtype=object)
    return csv_text(out, sep="\t" if path.suffix.lower() == ".tsv" else ",")  # display cells neutralised there


def write_frame(frame: pd.DataFrame, path: str | os.PathLike, *, separator: str = ";",
                id_lists: Sequence[str] = (MEMBERS, "removed", "added")) -> Path:
    """Write a worksheet, labels or benchmark frame to Parquet or CSV (by suffix), atomically.

    Parquet keeps list columns as lists (an all-empty list column gets the element type of
    ``members`` or of the first id column). CSV writes the id lists ``id_lists`` as ids joined
    by ``separator`` (what :func:`er_expectations.analysis.labels.parse_labels` reads back) and other
    list columns joined by " | " (display only). Nothing is written if anything fails.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from er_expectations.core.io import atomic_write, file_kind

    p = Path(path)
    kind = file_kind(p)
    if p.is_dir():
        raise InputError(f"{p}: is a folder; give a file name such as {p / 'worksheet.parquet'}")
    if not p.parent.is_dir():
        raise InputError(f"{p}: the folder {p.parent} does not exist; create it first")
    is_list = [c for c in frame.columns if frame[c].dtype == object and frame[c].map(
        lambda v: isinstance(v, (list, tuple, np.ndarray))).any()]
    if kind == "parquet":
        table = pa.Table.from_pandas(frame, preserve_index=False)
        element = None
        for f in table.schema:
            if pa.types.is_list(f.type) and not pa.types.is_null(f.type.value_type) and f.name in id_lists:
                element = f.type.value_type
                break
        if element is None and len(frame.columns) > 1:
            first = table.schema.field(1).type  # the drawn record's id
            element = first if not pa.types.is_null(first) else pa.string()

        def typed(f: pa.Field) -> pa.Field:
            if pa.types.is_list(f.type) and pa.types.is_null(f.type.value_type):
                return pa.field(f.name, pa.list_(element or pa.string()))
            if pa.types.is_null(f.type):  # an empty column to fill in (true_cluster, labeller, …)
                return pa.field(f.name, pa.string())
            return f

        schema = pa.schema([typed(f) for f in table.schema], metadata=table.schema.metadata)
        table = table.cast(schema)
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        data: bytes | str = buffer.getvalue()
    else:
        data = _csv_text(frame, p, separator=separator, id_lists=id_lists, is_list=is_list)
    try:
        atomic_write(p, data)
    except OSError as error:
        raise InputError(f"{p}: cannot write: {error.strerror or error}") from error
    return p
