"""Assemble the evaluation table of each release from a checkpoint's data section.

A checkpoint names a records table, the predictions (one wide file with a column per
release, or one file per release), an optional benchmark and how to build the name. Each
release becomes one table with the record id, the prediction (renamed to the checkpoint's
``batch_column``), the reference and the name (SPEC 2.1), joined on the record id. Other
benchmark columns (a weights or draws column a suite names) can be carried along with
``extra_benchmark_columns``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from er_expectations.analysis.benchmark_life import check_manifest, read_manifest
from er_expectations.config.checkpoint import CheckpointConfig
from er_expectations.core.errors import InputError
from er_expectations.core.io import (
    combine_name,
    nested_columns,
    nullable_integers,
    read_table,
    same_id_kind,
    table_columns,
)
from er_expectations.engines.base import KNOWN_COLUMN
from er_expectations.run.baselines import release_frames
from er_expectations.run.data.base import BatchLayout, ReleaseSource, release_label
from er_expectations.run.data.parquet import ParquetBatches, parquet_tables

__all__ = ["ReleaseData"]


def _scalar_ids(path: Path, format: str | None, columns: Sequence[str]) -> None:  # noqa: A002
    """Record and cluster ids are one value per record: a list or struct column is refused once,
    before anything is validated (each expectation would otherwise fail on it)."""
    nested = nested_columns(path, columns, format=format)
    if nested:
        column, kind = next(iter(nested.items()))
        raise InputError(f"{path}: column {column!r} holds {kind} values; a record id or cluster id is one value "
                         "per record (an integer or a text): write the column as integers or text")


def _unique_ids(df: pd.DataFrame, column: str, path: Path) -> None:
    if df[column].isna().any():
        raise InputError(f"{path}: column {column!r} has {int(df[column].isna().sum())} null record ids")
    dup = df[column].duplicated(keep=False)
    if dup.any():
        ex = ", ".join(repr(v) for v in df.loc[dup, column].unique()[:3])
        raise InputError(f"{path}: column {column!r} has duplicated record ids (e.g. {ex}); each record must appear once")


class ReleaseData(ParquetBatches, BatchLayout):
    """Lazily loaded data of a checkpoint that reads files; ``frame(release)`` gives one batch table."""

    def __init__(
        self,
        checkpoint: CheckpointConfig,
        *,
        extra_benchmark_columns: Sequence[str] = (),
        extra_record_columns: Sequence[str] = (),
    ) -> None:
        if checkpoint.data.engine != "pandas":
            raise InputError(f"checkpoint {checkpoint.name!r} reads its tables from {checkpoint.data.engine} "
                             "(data.engine); this command reads files only: use a checkpoint without 'engine'")
        super().__init__(checkpoint, extra_benchmark_columns=extra_benchmark_columns,
                         extra_record_columns=extra_record_columns)
        self._base: pd.DataFrame | None = None
        self._wide: pd.DataFrame | None = None
        self._wide_names: dict[str, str] = {}

    #: Files are read when the run builds the batches: their releases are known to ``validate`` too.
    connected = True

    # -- what the runner asks (CheckpointData) ---------------------------------------------
    def batches(self, selected: Sequence[ReleaseSource], needs: Sequence[Any]) -> dict[str, bytes]:
        """Each release's table with the drift checks' baseline columns, as Parquet bytes."""
        frame = release_frames(self, needs)
        return parquet_tables((r.label, frame(r)) for r in selected)

    def provenance_inputs(self, base: Path) -> list[dict[str, Any]]:
        """Each input file's path (relative to ``base``), size and SHA-256."""
        from er_expectations.run.provenance import file_fact  # deferred: imports gx/ (GX)

        data = self.data
        facts = [file_fact("records", data.records.path, base=base)]
        predictions = data.predictions
        if getattr(predictions, "path", None) is not None:
            facts.append(file_fact("predictions", predictions.path, base=base))
        for file in getattr(predictions, "files", None) or ():
            facts.append(file_fact(f"predictions ({file.label})", file.path, base=base))
        if data.benchmark is not None:
            facts.append(file_fact("benchmark", data.benchmark.path, base=base))
        return facts

    # -- releases -------------------------------------------------------------------------
    def all_releases(self) -> list[ReleaseSource]:
        pred = self.data.predictions
        if pred.layout == "wide":
            cols = pred.match_columns(table_columns(pred.path, format=pred.format))
            return [ReleaseSource(release_label(c, pred.columns), c, pred.path, pred.format) for c in cols]
        return [ReleaseSource(f.label, f.label, f.path, f.format) for f in pred.files]

    # -- tables ---------------------------------------------------------------------------
    def _records(self) -> pd.DataFrame:
        """Record ids with the name, benchmark reference joined (built once)."""
        if self._base is None:
            rec = self.data.records
            cols = [rec.id_column] + (list(self.data.name.columns) if self.data.name else [])
            cols = list(dict.fromkeys([*cols, *self.record_columns]))
            _scalar_ids(rec.path, rec.format, [rec.id_column])
            base = read_table(rec.path, cols, format=rec.format)
            _unique_ids(base, rec.id_column, rec.path)
            if self.data.name:
                base[self.name_column] = combine_name(base, self.data.name.columns,
                                                      separator=self.data.name.separator)
                base = base[[rec.id_column, self.name_column, *self.record_columns]]
            if self.data.benchmark:
                b = self.data.benchmark
                _scalar_ids(b.path, b.format, [b.id_column, b.reference_column])
                bench = read_table(b.path, [b.id_column, b.reference_column, *self.extra_columns],
                                   format=b.format)
                _unique_ids(bench, b.id_column, b.path)
                manifest = read_manifest(b.path)
                if manifest is not None and KNOWN_COLUMN in bench.columns:  # SPEC 14.4: the file is what was written
                    check_manifest(manifest, bench, record_id=b.id_column, where=str(b.path))
                same_id_kind(base, rec.path, bench, b.path, rec.id_column, b.id_column)
                bench = bench.rename(columns={b.id_column: rec.id_column})
                # the record ids are unique (checked above): one hash lookup per benchmark id
                # (Series.isin of Arrow strings builds its value set in a Python loop)
                unknown = pd.Index(base[rec.id_column]).get_indexer(bench[rec.id_column]) < 0
                if unknown.any():
                    ex = ", ".join(repr(v) for v in bench.loc[unknown, rec.id_column].head(3))
                    raise InputError(
                        f"{b.path}: {int(unknown.sum())} benchmark record ids are not in the records table "
                        f"{rec.path} (e.g. {ex}); the benchmark must label records of the table"
                    )
                if self.tags_column is not None:
                    bench[self.tags_column] = self._tags(bench, base[rec.id_column])
                base = base.merge(bench, on=rec.id_column, how="left", validate="one_to_one")
            self._base = base
        return self._base

    def _tags(self, bench: pd.DataFrame, record_ids: pd.Series) -> pd.Series:
        """The tags file (``data.tags``) checked against the benchmark's clusters and the records,
        as the column of each benchmark record's cluster tags (SPEC 12.1)."""
        from er_expectations.analysis.error_audit import TagColumns, encode_tags, parse_tags

        t = self.data.tags
        reference = self.data.benchmark.reference_column
        columns = [t.id_column, t.kind_column, t.tag_column, *([t.records_column] if t.records_column else [])]
        table = read_table(t.path, columns, format=t.format)
        parsed = parse_tags(table, benchmark_ids=bench[reference].dropna(), record_ids=record_ids,
                            known_tags=t.known_tags, separator=t.separator, source=str(t.path),
                            text_ids=t.format == "csv",
                            columns=TagColumns(cluster=t.id_column, kind=t.kind_column, tag=t.tag_column,
                                               records=t.records_column or "records"))
        return encode_tags(parsed, bench, reference)

    def _aligned_wide(self) -> pd.DataFrame:
        """Every release column of the wide file joined to the records once (outer join).

        Release columns get internal names ``__release_<i>`` so that they never clash with
        the records' columns; :meth:`frame` then only picks columns.
        """
        if self._wide is None:
            pred = self.data.predictions
            keys = [r.key for r in self.all_releases()]
            _scalar_ids(pred.path, pred.format, [pred.id_column, *keys])
            wide = read_table(pred.path, [pred.id_column, *keys], format=pred.format)
            _unique_ids(wide, pred.id_column, pred.path)
            same_id_kind(self._records(), self.data.records.path, wide, pred.path, self.id_column, pred.id_column)
            self._wide_names = {key: f"__release_{i}" for i, key in enumerate(keys)}
            wide = nullable_integers(wide.rename(columns={pred.id_column: self.id_column, **self._wide_names}),
                                      list(self._wide_names.values()))
            # outer join: a record of the table absent from the release file is outside the
            # release (null prediction, SPEC 2.1), so its benchmark labels are set aside, not lost
            self._wide = wide.merge(
                self._records(), on=self.id_column, how="outer", validate="one_to_one", sort=False
            )
        return self._wide

    def frame(self, release: ReleaseSource) -> pd.DataFrame:
        """The evaluation table of one release: id, prediction, name, reference (and extras)."""
        pred = self.data.predictions
        base = self._records()
        rest = [c for c in base.columns if c != self.id_column]
        if pred.layout == "wide":
            aligned = self._aligned_wide()
            internal = self._wide_names[release.key]
            part = aligned[[self.id_column, internal, *rest]]
            return part.rename(columns={internal: self.prediction_column})
        _scalar_ids(release.path, release.format, [pred.id_column, pred.prediction_column])
        part = read_table(release.path, [pred.id_column, pred.prediction_column], format=release.format)
        _unique_ids(part, pred.id_column, release.path)
        same_id_kind(base, self.data.records.path, part, release.path, self.id_column, pred.id_column)
        part = nullable_integers(part.rename(columns={pred.id_column: self.id_column,
                                                       pred.prediction_column: self.prediction_column}),
                                  [self.prediction_column])
        # outer join, as for the wide layout
        return part.merge(base, on=self.id_column, how="outer", validate="one_to_one", sort=False)
