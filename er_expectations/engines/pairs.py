"""Two releases of the same records side by side (SPEC 10): the common records and their cells.

A :class:`ReleasePair` holds the :class:`~er_expectations.engines.pandas.PandasRelease` of the
current release and of its baseline, both columns of one record table (one row per
record; a null prediction means the record is outside that release). Everything is
derived from the two factorisations the releases already hold: the mask of the records
present in both, each release restricted to them (no new factorisation) and the
contingency cells of the two clusterings on them (one ``np.unique``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .pandas import PandasRelease, contingency_from_codes

__all__ = ["ReleasePair"]


class ReleasePair:
    """The current release and its baseline on the same rows; aggregates are computed once."""

    def __init__(self, current: PandasRelease, baseline: PandasRelease) -> None:
        if current.df is not baseline.df and len(current.df) != len(baseline.df):
            raise InputError("the two releases of a comparison must be columns of the same table")
        if current.prediction == baseline.prediction:
            raise InputError(f"the release and its baseline are the same column {current.prediction!r}; "
                             "compare two different prediction columns")
        self.current = current
        self.baseline = baseline
        self._common: np.ndarray | None = None
        self._restricted: tuple[PandasRelease, PandasRelease] | None = None
        self._cells: tuple[np.ndarray, ...] | None = None

    @property
    def common(self) -> np.ndarray:
        """Rows present in both releases (non-null prediction in both)."""
        if self._common is None:
            self._common = (self.current.pred_codes >= 0) & (self.baseline.pred_codes >= 0)
        return self._common

    @property
    def n_common(self) -> int:
        return int(self.common.sum())

    def restricted(self) -> tuple[PandasRelease, PandasRelease]:
        """(current, baseline), each restricted to the common records (the fixed subset)."""
        if self._restricted is None:
            keep = self.common
            self._restricted = (self.current.restrict(keep), self.baseline.restrict(keep))
        return self._restricted

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Contingency cells on the common records: (current index, baseline index, count,
        current codes, baseline codes) as :func:`~er_expectations.engines.pandas.contingency_from_codes`."""
        if self._cells is None:
            self._cells = contingency_from_codes(self.current.pred_codes, self.baseline.pred_codes)
        return self._cells  # type: ignore[return-value]

    def current_label(self, code: int) -> object:
        """The current release's cluster id of prediction code ``code``."""
        self.current.pred_codes  # noqa: B018 - codes the column if not done yet
        return self.current._pred_uniques[int(code)]  # noqa: SLF001 - same package

    def baseline_label(self, code: int) -> object:
        """The baseline release's cluster id of prediction code ``code``."""
        self.baseline.pred_codes  # noqa: B018
        return self.baseline._pred_uniques[int(code)]  # noqa: SLF001
