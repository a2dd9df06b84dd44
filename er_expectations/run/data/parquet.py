"""The release tables of a checkpoint over files (and of a labelling batch): Parquet files in the
project (``er_data/<checkpoint>/<release>.parquet``), read by GX's file datasource (one Parquet
asset, one batch definition per release file)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write
from er_expectations.core.names import ensure_inside

__all__ = ["ASSET_NAME", "ParquetBatches", "parquet_bytes", "parquet_tables"]

#: Name of the Parquet asset of every checkpoint datasource.
ASSET_NAME = "releases"


def parquet_bytes(frame: Any) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def parquet_tables(frames: Iterator[tuple[str, Any]]) -> dict[str, bytes]:
    """The Parquet bytes (:func:`parquet_bytes`) of each ``(label, frame)``, by label.

    Each table is written in a thread while the next frame is built: Arrow encodes and
    compresses without the GIL, so the writing runs on another core next to pandas building
    the next release. The bytes are those of :func:`parquet_bytes`; the first error is raised
    (after the tables started are done).
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="er-parquet") as writer:
        started = {label: writer.submit(parquet_bytes, frame) for label, frame in frames}
        return {label: future.result() for label, future in started.items()}


def file_partitioners(source: Any) -> dict[str, Any]:
    """``{batch definition name: partitioner}`` of the releases asset of a file datasource."""
    try:
        asset = source.get_asset(ASSET_NAME)
    except (KeyError, LookupError, ValueError):
        return {}
    return {d.name: d.partitioner for d in asset.batch_definitions if d.partitioner is not None}


class ParquetBatches:
    """The GX side of batches written as Parquet files (:class:`~.base.CheckpointData`'s
    :meth:`write_batches`, :meth:`batch_definitions`, :meth:`batch_parameters`, :meth:`table_file`)."""

    def write_batches(self, folder: Path, selected: Sequence[Any], names: Mapping[str, str],
                      batches: dict[str, Any]) -> None:
        """Each release's Parquet bytes written (atomically) as ``folder/<name>.parquet``; taken out
        of ``batches`` as they are written."""
        targets = {r.label: ensure_inside(folder, folder / f"{names[r.label]}.parquet") for r in selected}
        try:
            for release in selected:
                atomic_write(targets[release.label], batches.pop(release.label))
        except OSError as error:
            raise InputError(f"cannot write the release tables under {folder}: {error}") from error

    def batch_definitions(self, ctx: Any, datasource: str, folder: Path, names: Mapping[str, str],
                          batches: Mapping[str, Any]) -> dict[str, Any]:
        """A file datasource on ``folder``, its Parquet asset and a batch definition per release
        file (label -> its file name ``names[label]``)."""
        from great_expectations.core.partitioners import FileNamePartitionerPath

        sources = ctx.data_sources
        base = str(folder)
        try:
            source = sources.get(datasource)
        except (KeyError, LookupError, ValueError):
            source = None
        kept: dict[str, Any] = {}  # the batch definitions of a moved project (releases not run now)
        if source is not None and (
            getattr(source, "type", None) != "pandas_filesystem"
            or str(getattr(source, "base_directory", "")) != base
        ):
            if getattr(source, "type", None) == "pandas_filesystem":
                kept = file_partitioners(source)
            sources.delete(datasource)
            source = None
        if source is None:
            source = sources.add_pandas_filesystem(datasource, base_directory=base)
        try:
            asset = source.get_asset(ASSET_NAME)
        except (KeyError, LookupError, ValueError):
            asset = source.add_parquet_asset(ASSET_NAME)
        for batch_name, partitioner in kept.items():  # file names, relative to the new folder
            if batch_name not in {f"release_{name}" for name in names.values()}:
                asset.add_batch_definition(name=batch_name, partitioner=partitioner)
        result: dict[str, Any] = {}
        for label, name in names.items():
            regex = re.compile(rf"^(?P<release>{re.escape(name)})\.parquet$")
            batch_name = f"release_{name}"
            try:
                definition = asset.get_batch_definition(batch_name)
            except (KeyError, LookupError, ValueError):
                definition = None
            if definition is not None:
                current = getattr(definition.partitioner, "regex", None)
                if current is None or current.pattern != regex.pattern:
                    asset.delete_batch_definition(batch_name)
                    definition = None
            if definition is None:
                definition = asset.add_batch_definition(
                    name=batch_name, partitioner=FileNamePartitionerPath(regex=regex)
                )
            result[label] = definition
        return result

    def batch_parameters(self, batch: Any) -> dict[str, Any] | None:
        """None: GX reads the batch from its file."""
        return None

    def table_file(self, folder: Path, name: str) -> Path | None:
        """The release table GX reads: ``folder/<name>.parquet``."""
        return folder / f"{name}.parquet"
