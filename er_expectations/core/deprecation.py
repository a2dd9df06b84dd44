"""The deprecation path of the Python API's old call forms (issue 30 item 9).

Up to er-expectations 0.1 the ``erx`` functions took their options positionally and some
column names had the demo's defaults (``"inventor_id"``, ``"benchmark_id"``, ``"true_id"``).
From 0.2 every option after the data is keyword-only and no column name has a default.
:func:`old_call_forms` keeps the old forms working for one release: a positional option is
bound to its old position's name, a column left out gets its old default, and each prints a
:class:`DeprecationWarning` naming the new form.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["REMOVED_IN", "old_call_forms"]

#: The release that drops the old call forms.
REMOVED_IN = "0.3"

F = TypeVar("F", bound=Callable[..., Any])


def old_call_forms(*, data: int = 1, positional: Sequence[str] = (),
                   defaults: Mapping[str, Any] | None = None, name: str | None = None) -> Callable[[F], F]:
    """Accept ``func``'s call forms of 0.1 for one release, with a :class:`DeprecationWarning`.

    Parameters
    ----------
    data : int
        How many leading positional parameters are data (tables), which stay positional.
    positional : sequence of str
        The names the positional arguments after the data had in 0.1, in order.
    defaults : mapping
        The 0.1 defaults of parameters that are now required keywords (the demo's column names).
    name : str, optional
        How the warning names the callable (default ``erx.<function name>``; for a method, e.g.
        ``erx.Release`` or ``Release.estimate``). A method counts ``self`` among its ``data``.
    """
    defaults = dict(defaults or {})

    def decorate(func: F) -> F:
        shown_name = name or f"erx.{func.__name__}"

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            extra = args[data:]
            if extra:
                if len(extra) > len(positional):
                    raise TypeError(f"{shown_name}() takes {data} positional argument{'s' if data != 1 else ''} "
                                    f"(the data); give the options by name")
                given = dict(zip(positional, extra, strict=False))
                twice = sorted(set(given) & set(kwargs))
                if twice:
                    raise TypeError(f"{shown_name}() got multiple values for {', '.join(twice)}")
                kwargs.update(given)
                args = args[:data]
                shown = ", ".join(f"{key}={value!r}" for key, value in given.items())
                warnings.warn(f"{shown_name}: options after the data are keyword-only from er-expectations 0.2 "
                              f"(positional ones stop working in {REMOVED_IN}); write {shown_name}(..., {shown})",
                              DeprecationWarning, stacklevel=2)
            missing = {key: value for key, value in defaults.items() if key not in kwargs}
            if missing:
                kwargs.update(missing)
                shown = ", ".join(f"{key}={value!r}" for key, value in missing.items())
                warnings.warn(f"{shown_name}: {', '.join(missing)} has no default from er-expectations 0.2 (the "
                              f"demo's column name is used until {REMOVED_IN}); write {shown_name}(..., {shown})",
                              DeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # functools.wraps: help() shows the new form

    return decorate
