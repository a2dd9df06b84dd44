"""Reading CSV record tables (``core/io.read_table``): ids are text, exactly as written.

Issue 18, item 13: the id "NA" (or "null", "NaN", "None") is an id, not a missing value; an
empty cell is the only null; a ragged row (too few or too many fields) is an error naming the
file and the line, whatever columns are read; spaces around an id are kept, never stripped.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from er_expectations.core.errors import InputError
from er_expectations.core.io import read_table, text_dtype


def write(tmp_path, text: str, name: str = "t.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_na_like_ids_are_ids_and_only_an_empty_cell_is_null(tmp_path):
    path = write(tmp_path, "rid,cluster\nNA,1\nnull,1\nNaN,2\nNone,2\nn/a,\nr6,NA\n")
    frame = read_table(path)
    assert frame["rid"].tolist() == ["NA", "null", "NaN", "None", "n/a", "r6"]
    assert frame["cluster"].isna().tolist() == [False, False, False, False, True, False]
    assert frame["cluster"].tolist()[:4] == ["1", "1", "2", "2"] and frame["cluster"].iloc[5] == "NA"
    # the same with only some columns read
    assert read_table(path, ["rid"])["rid"].tolist() == ["NA", "null", "NaN", "None", "n/a", "r6"]


def test_every_pandas_reads_the_same_text_dtype_with_nan_for_the_empty_cell(tmp_path):
    """pandas 3's default ``str`` on every supported pandas (2.1.4 to 3.x, .ci/compat): with
    ``dtype=str`` pandas < 3 turned an empty cell into the text "None"."""
    frame = read_table(write(tmp_path, "rid,cluster\nr1,\nNone,7\n"))
    for column in ("rid", "cluster"):
        dtype = frame[column].dtype
        assert isinstance(dtype, pd.StringDtype) and dtype == text_dtype(), dtype
        assert dtype.storage in ("pyarrow", "pyarrow_numpy") and dtype.na_value is not pd.NA
    empty = frame["cluster"].iloc[0]
    assert isinstance(empty, float) and math.isnan(empty)
    assert frame["rid"].tolist() == ["r1", "None"] and frame["cluster"].iloc[1] == "7"


@pytest.mark.parametrize("columns", [None, ["a", "b"]], ids=["all columns", "some columns"])
@pytest.mark.parametrize(("body", "line"), [("1,2,3\n4,5\n6,7,8\n", 3), ("1,2,3\n4,5,6\n7,8,9,10\n", 4)],
                         ids=["short row", "long row"])
def test_a_ragged_row_is_an_error_naming_file_and_line(tmp_path, body, line, columns):
    path = write(tmp_path, "a,b,c\n" + body)
    with pytest.raises(InputError) as info:
        read_table(path, columns)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ")
    assert "3 fields" in message and "header" in message


def test_a_quoted_field_with_a_newline_is_not_ragged_and_lines_count_physically(tmp_path):
    path = write(tmp_path, 'a,b,c\n"x\ny",5,6\n7,8\n')
    with pytest.raises(InputError) as info:
        read_table(path)
    assert str(info.value).startswith(f"{path}:4: ")  # the header, two lines of the quoted row, then line 4
    good = write(tmp_path, 'a,b,c\n"x\ny",5,6\n7,8,\n', "good.csv")
    frame = read_table(good)
    assert frame["a"].tolist() == ["x\ny", "7"] and frame["c"].isna().tolist() == [False, True]


def test_spaces_around_ids_are_kept_exactly(tmp_path):
    path = write(tmp_path, "rid,cluster\n r1,c1\nr1 ,c1\nr1,c1\n")
    assert read_table(path)["rid"].tolist() == [" r1", "r1 ", "r1"]


def test_a_tsv_file_is_read_the_same_way(tmp_path):
    path = write(tmp_path, "rid\tcluster\nNA\t1\nr2\t\n", "t.tsv")
    frame = read_table(path)
    assert frame["rid"].tolist() == ["NA", "r2"] and frame["cluster"].isna().tolist() == [False, True]
    ragged = write(tmp_path, "rid\tcluster\nNA\t1\t3\n", "r.tsv")
    with pytest.raises(InputError, match=r"r\.tsv:2: "):
        read_table(ragged)


def test_a_file_that_is_not_utf8_still_says_so(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("rid,name\nr1,Jos\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_table(path)
