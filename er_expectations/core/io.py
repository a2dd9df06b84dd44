"""Reading record tables from Parquet or CSV, with errors that name the file."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.errors import EmptyDataError

from er_expectations.core.errors import InputError

__all__ = ["atomic_write", "atomic_write_text", "combine_name", "csv_text", "read_table", "remove_stale_temporaries",
           "id_kind", "nested_columns", "nullable_integers", "same_id_kind", "table_columns"]

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


_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _read_csv_text(path: Path, sep: str, columns: list[str]) -> pd.DataFrame:
    """pandas < 3: pyarrow's CSV reader with every column read as text (pandas' pyarrow engine
    there infers types first and casts after: "7" next to an empty cell became "7.0", an empty
    cell "None"), converted to :func:`text_dtype` columns."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        path, parse_options=pacsv.ParseOptions(delimiter=sep),
        convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in columns},
                                             include_columns=columns, null_values=[""],
                                             strings_can_be_null=True))
    dtype = text_dtype()
    return table.to_pandas(types_mapper=lambda t: dtype if t in (pa.string(), pa.large_string()) else None)


def text_dtype() -> pd.StringDtype:
    """The dtype of CSV cells on every supported pandas: pandas 3's default ``str`` (pyarrow
    storage, NaN for null), which pandas 2.3 spells ``StringDtype("pyarrow", na_value=nan)`` and
    pandas 2.1 and 2.2 ``StringDtype("pyarrow_numpy")``."""
    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except TypeError:  # pandas < 2.3
        return pd.StringDtype("pyarrow_numpy")


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
            return _exact_integers(p, pd.read_parquet(p, columns=list(columns) if columns is not None else None))
        sep = "\t" if p.suffix.lower() == ".tsv" else ","
        # every cell is text, exactly as written ("NA" and " r1 " are ids); only an empty cell is
        # null. pyarrow's parser refuses a row with too few or too many fields, even for the
        # columns not read (pandas' own parser pads or drops them silently)
        if _PANDAS_3:
            return pd.read_csv(p, sep=sep, usecols=list(columns) if columns is not None else None,
                               dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8",
                               engine="pyarrow")
        return _read_csv_text(p, sep, list(columns) if columns is not None else list(available))
    except OSError as exc:
        if exc.errno is not None:
            raise InputError(f"{p}: cannot read the file: {exc.strerror}") from exc
        raise _read_problem(p, kind, exc) from exc
    except Exception as exc:  # pyarrow / parser errors: say which file (and line)
        if kind == "csv":
            _find_csv_problem(p, sep)
        raise _read_problem(p, kind, exc) from exc


def _find_csv_problem(path: Path, sep: str) -> None:
    """After a CSV parse error, find its line with Python's csv module (the error path only):
    raise an :class:`InputError` for bytes that are not UTF-8, or
    ``<file>:<line>: …`` for a row whose number of fields differs from the header's."""
    import csv

    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter=sep)
            header = next(reader, None)
            if header is None:
                return
            start = reader.line_num
            for row in reader:
                if row and len(row) != len(header):
                    raise InputError(
                        f"{path}:{start + 1}: the row has {len(row)} field{'s' if len(row) != 1 else ''} but the header "
                        f"has {len(header)} fields; fix the row (a missing value is an empty cell, a value holding "
                        f"{sep!r} is quoted)")
                start = reader.line_num
    except UnicodeDecodeError as exc:
        raise _read_problem(path, "csv", exc) from exc
    except csv.Error:
        return


def _exact_integers(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """Integer columns of a Parquet file that hold nulls, read as pandas' nullable integers.

    pandas turns them into float64, which rounds every id above 2**53 (hashed or snowflake
    cluster ids): 2**62+1 and 2**62+2 would become one cluster. Columns without nulls are
    int64 already and are left alone.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    lossy = [f.name for f in schema if f.name in frame.columns and pa.types.is_integer(f.type)
             and not pd.api.types.is_integer_dtype(frame[f.name].dtype)]
    if not lossy:
        return frame
    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
                pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}
    table = pq.read_table(path, columns=lossy)
    for name in lossy:
        values = table.column(name).to_pandas(types_mapper=nullable.get)
        frame[name] = pd.Series(values.array, index=frame.index)
    return frame


def nested_columns(path: str | os.PathLike, columns: Sequence[str], *, format: str | None = None,  # noqa: A002
                   ) -> dict[str, str]:
    """The ``columns`` of a Parquet file that hold lists, structs or maps, with their kind
    (``{"pred": "list"}``), read from the schema; a CSV file holds none."""
    p = Path(path)
    if file_kind(p, format) != "parquet":
        return {}
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {}
    for field in pq.read_schema(p):
        if field.name in columns and pa.types.is_nested(field.type):
            kinds[field.name] = ("list" if pa.types.is_list(field.type) or pa.types.is_large_list(field.type)
                                 else "struct" if pa.types.is_struct(field.type)
                                 else "map" if pa.types.is_map(field.type) else str(field.type))
    return kinds


def nullable_integers(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``columns`` of numpy integer type as pandas' nullable integers (Int64, UInt64, …), in place.

    A join or a concatenation that leaves a row without a value turns an int64 column into
    float64, which rounds ids above 2**53 (2**62+1 and 2**62+2 become one cluster): call this
    first and the ids keep their type and value.
    """
    for c in columns:
        dtype = frame[c].dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "iu":
            frame[c] = frame[c].astype(("UInt" if dtype.kind == "u" else "Int") + str(dtype.itemsize * 8))
        elif pd.api.types.is_object_dtype(dtype) and pd.api.types.infer_dtype(frame[c], skipna=True) == "integer":
            # Python ints (rows a database returned): Int64 when they fit, as they are otherwise
            with contextlib.suppress(TypeError, ValueError, OverflowError):
                frame[c] = frame[c].astype("Int64")
    return frame


def id_kind(ids: pd.Series) -> str:
    """What kind of values a record id column holds: 'integer', 'number', 'text' or its dtype.

    A categorical column holds the kind of its categories (the README allows categorical ids).
    """
    if isinstance(ids.dtype, pd.CategoricalDtype):
        return id_kind(pd.Series(ids.cat.categories, name=ids.name))
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


def csv_text(frame: pd.DataFrame, *, index: bool = False, sep: str = ",") -> str:
    """The CSV text of ``frame`` for a file people open in a spreadsheet: THE one writer of every
    CSV the package writes (worksheets, labels and benchmark files, diffs, history exports,
    summaries, estimates, plans; issue 18, item 17).

    Every text cell, index label and column name a spreadsheet would run as a formula (one
    starting with ``=``, ``+``, ``-``, ``@``, a tab or a CR that is not a number:
    :func:`~er_expectations.core.text.runs_as_formula`) is written with a leading apostrophe
    (:func:`~er_expectations.core.text.spreadsheet_safe`); numbers are written as they are. Rows
    end in CRLF (RFC 4180), so that a cell holding a lone CR is quoted, not split; a cell holding
    the separator or a quote is quoted. A caller whose cells are ids that must be read back
    unchanged refuses formula-like ids before (``analysis/sampling.py``)."""
    from er_expectations.core.text import spreadsheet_safe

    def safe(value: object) -> object:
        return spreadsheet_safe(value) if isinstance(value, str) else value

    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            out.isetitem(position, pd.Series([safe(v) for v in column.tolist()], index=out.index, dtype=object))
    out.columns = [safe(c) for c in out.columns]
    if index:
        if isinstance(out.index, pd.MultiIndex):
            out.index = pd.MultiIndex.from_tuples([tuple(safe(v) for v in t) for t in out.index],
                                                  names=[safe(n) for n in out.index.names])
        else:
            out.index = pd.Index([safe(v) for v in out.index], name=safe(out.index.name))
    return out.to_csv(index=index, sep=sep, lineterminator="\r\n")
