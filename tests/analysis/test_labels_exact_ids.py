"""Labels name records exactly as the records write them (issue 18, item 13).

Spaces around an id are part of it everywhere (records, predictions, labels: never stripped
in one place and kept in another); an empty true-cluster cell is "not filled in", not an id
shared by every draw that leaves it empty.
"""

from __future__ import annotations

import pandas as pd
import pytest

from er_expectations import InputError
from er_expectations.analysis.labelqc import check_labels
from er_expectations.analysis.labels import parse_labels


@pytest.fixture()
def spaced():
    """' r1' and 'r1' are two records of two predicted clusters."""
    return pd.DataFrame({"id": [" r1", "r1", "r2", "r3", "r4"], "pred": ["A", "B", "A", "B", "B"]})


def test_a_drawn_id_with_spaces_is_that_record(spaced):
    labels = pd.DataFrame({"draw": [1, 2], "record_id": [" r1", "r1"], "removed": ["", ""], "added": ["", ""],
                           "predicted_cluster": ["A", "B"]})
    # stripped, draw 1 would be record 'r1' of cluster B: "labels of another release"
    assert check_labels(labels, spaced, prediction="pred", record_id="id").empty


def test_ids_in_a_list_cell_are_kept_exactly(spaced):
    labels = pd.DataFrame({"draw": [1], "record_id": ["r1"], "removed": ["r3; r4"], "added": [""]})
    parsed = parse_labels(labels)
    assert parsed.removed == [("r3", " r4")]
    violations = check_labels(labels, spaced, prediction="pred", record_id="id", rules=[4])
    assert violations["rule"].tolist() == [4] and violations["records"].tolist() == [[" r4"]]


def test_an_integer_id_with_spaces_is_refused_naming_draw_and_column():
    records = pd.DataFrame({"id": [1, 2, 3], "pred": ["A", "A", "B"]})
    labels = pd.DataFrame({"draw": [1], "record_id": [" 2"], "removed": [""], "added": [""]})
    with pytest.raises(InputError, match=r"draw 1, column 'record_id': ' 2' is not an integer record id"):
        check_labels(labels, records, prediction="pred", record_id="id")


@pytest.mark.parametrize("empty", ["", "  ", None])
def test_empty_true_cluster_cells_are_not_ids(empty):
    # four draws of four different true clusters (nothing removed or added: the true cluster
    # is the predicted one), none with a true-cluster id written: rule 7 has nothing to compare
    records = pd.DataFrame({"id": [f"r{i}" for i in range(8)], "pred": ["A", "A", "B", "B", "C", "C", "D", "D"]})
    labels = pd.DataFrame({"draw": [1, 2, 3, 4], "record_id": ["r0", "r2", "r4", "r6"],
                           "removed": [""] * 4, "added": [""] * 4, "true_cluster": [empty] * 4})
    assert check_labels(labels, records, prediction="pred", record_id="id").empty
    # one id written twice for two different sets is still caught
    labels["true_cluster"] = ["T1", "T1", empty, empty]
    violations = check_labels(labels, records, prediction="pred", record_id="id", rules=[7])
    assert set(violations["draw"]) == {1, 2}


# -- draw numbers and integer ids that are not what they look like (issue 18, item 16) --------------


@pytest.mark.parametrize("draw", ["--5", "²", "1e20", "+-3", "٣", 2.5, "1.0.0"])
def test_a_draw_number_that_is_no_whole_number_is_an_input_error(draw):
    labels = pd.DataFrame({"draw": [1, draw], "record_id": ["a", "b"], "removed": ["", ""], "added": ["", ""]})
    with pytest.raises(InputError, match=r"labels column 'draw', row 2: draw number .* is not a whole number"):
        parse_labels(labels)


@pytest.mark.parametrize("draw", [10**20, 1e20, "9223372036854775808", "-9223372036854775809", str(2**80)])
def test_a_whole_draw_number_beyond_int64_says_so(draw):
    labels = pd.DataFrame({"draw": [1, draw], "record_id": ["a", "b"], "removed": ["", ""], "added": ["", ""]})
    with pytest.raises(InputError, match=r"labels column 'draw', row 2: draw number .* is beyond the 64-bit range"):
        parse_labels(labels)


def test_draw_numbers_at_the_int64_limits_are_kept():
    big = 2**63 - 1
    labels = pd.DataFrame({"draw": [str(big), "-3", "+4"], "record_id": ["a", "b", "c"], "removed": [""] * 3,
                           "added": [""] * 3})
    assert parse_labels(labels).draw.tolist() == [big, -3, 4]


@pytest.mark.parametrize("value", ["--5", "²", "٣", "9223372036854775808", "1e3"])
def test_an_integer_record_id_that_is_no_int64_is_an_input_error(value):
    labels = pd.DataFrame({"draw": [1], "record_id": [value], "removed": [""], "added": [""]})
    with pytest.raises(InputError, match="is not an integer record id"):
        parse_labels(labels, id_kind="integer")
