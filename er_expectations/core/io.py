"""Reading record tables from Parquet or CSV, with errors that name the file."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from er_expectations.core.errors import InputError

__all__ = ["atomic_write", "atomic_write_text", "combine_name", "read_table", "remove_stale_temporaries",
           "id_kind", "same_id_kind", "table_columns"]

_PARQUET = {".parquet", ".pq", ".parq"}
_CSV = {".csv", ".tsv", ".txt"}


def file_kind(path: Path, declared: str | None = None) -> str:
    """``"parquet"`` or ``"csv"``: the declared format (a checkpoint's ``format:``), else the suffix."""
    if declared is not None:
        if declared not in ("parquet", "csv"):
            raise InputError(f"{path}: unknown format {declared!r}; use 'parquet' or 'csv'")
        return declared
    suffix = path.suffix.lower()
    if suffix in _PARQUET:
        return "parquet"
    if suffix in _CSV:
        return "csv"
    raise InputError(f"{path}: unknown file type {suffix!r}; use a .parquet or .csv (or .tsv) file")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _read_problem(p: Path, kind: str, exc: BaseException) -> InputError:
    """A one-line :class:`InputError` naming the file, what is wrong and the fix."""
    if p.stat().st_size == 0:
        return InputError(f"{p}: the file is empty (0 bytes); write the table again")
    if isinstance(exc, UnicodeError):
        with open(p, "rb") as fh:
            head = fh.read(4)
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return InputError(f"{p}: the file is UTF-16 text; save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)")
        where = ""
        if isinstance(exc, UnicodeDecodeError):
            where = f" (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        return InputError(f"{p}: the file is not UTF-8 text{where}; save it as UTF-8")
    if kind == "csv":
        from pandas.errors import EmptyDataError

        if isinstance(exc, EmptyDataError):
            return InputError(f"{p}: no header row; a CSV file starts with a line naming its columns")
        return InputError(f"{p}: cannot read the file as CSV: {_one_line(exc)}")
    return InputError(
        f"{p}: cannot read the file as Parquet ({_one_line(exc)}); it may be truncated or not a "
        "Parquet file: write it again"
    )


def table_columns(path: str | os.PathLike, *, format: str | None = None) -> list[str]:  # noqa: A002
    """Column names of a Parquet or CSV file without reading its rows (``format`` overrides the suffix)."""
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise InputError(f"{p}: is a folder, not a file")
        if p.exists():  # a FIFO or a device: reading it would block or never end
            raise InputError(f"{p}: is not a regular file (a pipe, socket or device); give the table file itself")
        raise InputError(f"{p}: file not found")
    kind = file_kind(p, format)
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(p).names)
        sep = "\t" if p.suffix.lower() == ".tsv" else ","
        return [str(c) for c in pd.read_csv(p, sep=sep, nrows=0, encoding="utf-8").columns]
    except OSError as exc:
        if exc.errno is not None:  # the operating system refused (permissions, I/O error)
            raise InputError(f"{p}: cannot read the file: {exc.strerror}") from exc
        raise _read_problem(p, kind, exc) from exc
    except Exception as exc:  # pyarrow / parser errors: say which file and what to do
        raise _read_problem(p, kind, exc) from exc


def read_table(path: str | os.PathLike, columns: Sequence[str] | None = None, *,
               format: str | None = None) -> pd.DataFrame:  # noqa: A002
    """Read a Parquet or CSV file (optionally only some columns); ids are kept as strings in CSV.

    ``format`` (``"parquet"`` or ``"csv"``, a checkpoint's ``format:``) overrides the suffix.
    """
    p = Path(path)
    kind = file_kind(p, format)
    available = table_columns(p, format=format)
    if columns is not None:
        missing = [c for c in columns if c not in available]
        if missing:
            from er_expectations.core.hints import did_you_mean

            hints = []
            for m in missing:
                hint = did_you_mean(m, available)
                hints.append(f"'{m}'" + (f" ({hint})" if hint else ""))
            raise InputError(f"{p}: no column {', '.join(hints)}; the file has: {', '.join(available[:20])}")
    try:
        if kind == "parquet":
            return pd.read_parquet(p, columns=list(columns) if columns is not None else None)
        sep = "\t" if p.suffix.lower() == ".tsv" else ","
        return pd.read_csv(p, sep=sep, usecols=list(columns) if columns is not None else None,
                           dtype=str, keep_default_na=True, encoding="utf-8")
    except OSError as exc:
        if exc.errno is not None:
            raise InputError(f"{p}: cannot read the file: {exc.strerror}") from exc
        raise _read_problem(p, kind, exc) from exc
    except Exception as exc:  # pyarrow / parser errors: say which file
        raise _read_problem(p, kind, exc) from exc


def id_kind(ids: pd.Series) -> str:
    """What kind of values a record id column holds: 'integer', 'number', 'text' or its dtype."""
    if pd.api.types.is_integer_dtype(ids.dtype):
        return "integer"
    if pd.api.types.is_float_dtype(ids.dtype):
        return "number"
    if pd.api.types.is_string_dtype(ids.dtype):
        inferred = pd.api.types.infer_dtype(ids, skipna=True)
        return "text" if inferred in ("string", "empty") else inferred
    return str(ids.dtype)


def same_id_kind(left: pd.DataFrame, left_path: str | os.PathLike, right: pd.DataFrame,
                 right_path: str | os.PathLike, column: str, right_column: str | None = None) -> None:
    """Record ids are joined across files: their types must agree (1 never equals '1')."""
    a, b = id_kind(left[column]), id_kind(right[right_column or column])
    if a != b:
        raise InputError(
            f"record ids have different types in {left_path} (column {column!r}: {a}) and "
            f"{right_path} (column {right_column or column!r}: {b}), so no record would match; "
            "write the ids with one type in every file (e.g. as text in both)"
        )


def combine_name(df: pd.DataFrame, columns: Sequence[str], *, separator: str = " ") -> pd.Series:
    """A name built from several columns (e.g. first and last name); null if all parts are null."""
    parts = [df[c].astype("string").str.strip() for c in columns]
    name = parts[0].fillna("")
    for part in parts[1:]:
        name = name.str.cat(part.fillna(""), sep=separator)
    name = name.str.strip()
    return name.mask(name == "", pd.NA)


#: What every temporary file of :func:`atomic_write` carries in its name.
_MARK = "er-expectations-"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write a file atomically: a temporary file in the same folder, then ``os.replace``.

    Readers see the old file or the new one, never a half-written one, and a run killed while
    writing leaves at most a hidden ``.<name>.er-expectations-*.tmp`` file. ``str`` is written as UTF-8. The file
    keeps the mode of the file it replaces, or gets the one a plain ``open()`` would give
    (``mkstemp`` makes it private); the data is flushed to disk before the rename.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = p.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{_MARK}", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Names of :func:`atomic_write`'s temporary files (``mkstemp`` adds 8 characters after the
#: mark): only they are deleted, never a user's file that merely looks temporary.
_TEMPORARY = re.compile(rf"^\..+\.{_MARK}[A-Za-z0-9_]{{8}}\.tmp$")


def remove_stale_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files that killed writers left under ``folder``; returns them.

    Call it only while holding the lock of ``folder`` (no other writer is running).
    """
    removed = []
    root = Path(folder)
    for path in root.rglob(".*.tmp") if root.is_dir() else ():
        if _TEMPORARY.match(path.name) and path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write` of a text (UTF-8)."""
    atomic_write(path, text)
