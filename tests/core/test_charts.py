"""Static charts (er_expectations.core.charts): offline SVG/PNG, atomic files, escaped text."""

from __future__ import annotations

import base64

import pandas as pd
import pytest

from er_expectations.core import charts
from er_expectations.core.errors import InputError

alt = pytest.importorskip("altair")


def _chart(label: str):
    df = pd.DataFrame({"release": [label, "2022-06-30"], "value": [0.9, 0.8]})
    return alt.Chart(df).mark_point().encode(x="release:N", y="value:Q").properties(title=label)


def test_svg_escapes_hostile_text_and_has_no_script():
    svg = charts.to_svg(_chart('<script>alert(1)</script>"x'))
    assert svg.startswith("<svg")
    assert "<script" not in svg
    assert "&lt;script&gt;" in svg


def test_write_chart_by_suffix(tmp_path):
    png = charts.write_chart(_chart("a"), tmp_path / "c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = charts.write_chart(_chart("a"), tmp_path / "c.SVG")
    assert svg.read_text().startswith("<svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.SVG", "c.png"]  # no temporaries left


def test_unknown_suffix_is_refused_before_writing(tmp_path):
    with pytest.raises(InputError, match=r"\.svg or \.png"):
        charts.write_chart(_chart("a"), tmp_path / "c.pdf")
    assert not list(tmp_path.iterdir())


def test_data_uri_round_trips():
    uri = charts.data_uri(_chart("a"))
    assert uri.startswith("data:image/svg+xml;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]).decode().startswith("<svg")
