"""The engine rule of an expectation on GX's SQL engine (ERExpectation.engines).

That every expectation family runs on GX's pandas, SQL (SQLite, PostgreSQL) and Spark
engines with the same results (1e-9) is ``tests/engines/test_common.py``
(``test_statistic_on_engine[expectation:…]``).
"""

from __future__ import annotations

import great_expectations as gx
import pytest
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.releases import release_frame

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.gx.expectations import ExpectMatchingRateToBeBetween

sa = pytest.importorskip("sqlalchemy")


def _context():
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


def test_an_expectation_for_fewer_engines_says_so_on_sql(tmp_path, monkeypatch):
    """The engine rule (ERExpectation.engines) stays for checks that cannot run everywhere: on
    another engine one clear error naming the engines and why, the other expectations still run.
    Every family runs on every engine today, so the rule is tried on a patched expectation."""
    from er_expectations.gx.expectations import ExpectHillNumberToBeBetween as Patched
    from er_expectations.gx.expectations.base import PANDAS_ONLY

    monkeypatch.setattr(Patched, "engines", PANDAS_ONLY)
    monkeypatch.setattr(Patched, "engines_note", "a reason given by the expectation")
    url = f"sqlite:///{tmp_path / 'release.db'}"
    engine_ = sa.create_engine(url)
    release_frame().to_sql("release", engine_, index=False)
    engine_.dispose()
    ctx = _context()
    batch = (ctx.data_sources.add_sqlite("sql", connection_string=url).add_table_asset("release", table_name="release")
             .add_batch_definition_whole_table("all").get_batch())
    suite = ctx.suites.add(gx.ExpectationSuite(name="pandas_only", expectations=[
        Patched(prediction_column="pred", q=2, min_value=1.0),
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.0),
    ]))
    results = {r.expectation_config.type: r for r in batch.validate(suite).results}
    assert results["expect_matching_rate_to_be_between"].success is True  # runs on SQL
    r = results["expect_hill_number_to_be_between"]
    (info,) = [v for v in r.exception_info.values() if isinstance(v, dict)] or [r.exception_info]
    message = info["exception_message"]
    assert r.success is False and "No provider found" not in message
    assert "expect_hill_number_to_be_between runs on pandas datasources (a reason given by the expectation)" \
        in message and "SqliteExecutionEngine" in message
