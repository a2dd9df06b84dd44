"""Great Expectations integration: metric providers, expectations, checkpoint actions.

Importing this package (``import er_expectations.gx``; the runner does it) registers every
expectation, metric and action with GX, so suites that name them load. Import it before
GX loads a suite that names them: GX drops unknown expectation types when loading a suite
(see :func:`require_registered`). The expectation classes are importable from
``er_expectations.gx.expectations``.
"""

from typing import Any

from er_expectations.gx import (
    actions,  # noqa: F401  (registers the offline Data Docs checkpoint action)
    history_action,  # noqa: F401  (registers the history checkpoint action)
)
from er_expectations.gx.expectations import *  # noqa: F401,F403  (registers the expectations)
from er_expectations.gx.expectations import __all__ as EXPECTATION_CLASSES
from er_expectations.gx.guard import (
    RequireRegisteredAction,
    UnregisteredExpectationError,
    require_registered,
)
from er_expectations.gx.metrics import (
    drift,  # noqa: F401  (registers the drift metric providers)
    error_audit,  # noqa: F401  (registers the error-audit metric)
    labels,  # noqa: F401  (registers the labelling QC metric)
    release,  # noqa: F401  (registers the release metric providers)
)

__all__ = [
    "EXPECTATION_CLASSES",
    "RequireRegisteredAction",
    "UnregisteredExpectationError",
    "expectation_names",
    "get_context",
    "require_registered",
]


def get_context(*args: Any, **kwargs: Any) -> Any:
    """``great_expectations.get_context`` with er-expectations registered and every stored suite
    checked: the one-line safe way to open a project that uses these expectations.

    Takes GX's arguments (``project_root_dir=``, ``mode=``, ...). Calling it imports this
    package first, so every expectation, metric and checkpoint action is registered before GX
    loads a suite; then each suite stored in the context must pass :func:`require_registered`
    (a type of another plugin that is not imported, or parameters that do not validate, would
    otherwise be dropped when GX loads the suite). Raises
    :class:`UnregisteredExpectationError` naming the suite and the expectations::

        import er_expectations.gx
        context = er_expectations.gx.get_context(project_root_dir=".")
    """
    import great_expectations as gx

    context = gx.get_context(*args, **kwargs)
    store = context.expectations_store
    for key in store.list_keys():
        require_registered(store.get(key), context=context)
    return context


def expectation_names() -> list[str]:
    """Registry names of every er-expectations expectation (snake case of the class name)."""
    from great_expectations.expectations.registry import get_expectation_impl  # noqa: F401
    from great_expectations.util import camel_to_snake

    return [camel_to_snake(name) for name in EXPECTATION_CLASSES]
