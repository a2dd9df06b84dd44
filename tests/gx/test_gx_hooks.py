"""The GX extension hooks the plugin overrides, checked on the installed GX.

GX's custom expectations, metrics, renderers and actions are extended by overriding methods
whose names start with an underscore (GX's own documentation for custom expectations and
metrics does so: ``_validate``, ``_get_evaluation_dependencies``, the ``_..._renderer``
class methods). They are the one private surface left (gx/owner.py replaces the rest), so each
is listed here and checked on every GX that .ci/compat installs (the lowest and the newest
supported): the GX base class still defines it, and our override accepts every parameter GX
passes. A GX that renamed a hook would otherwise leave our override silently unused.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import er_expectations

#: (our class, the hook, the GX class that defines it)
HOOKS = [
    ("gx.docs.data_docs.SeverityTableRenderer", "_get_content_block_fn", "ValidationResultsTableContentBlockRenderer"),
    ("gx.docs.data_docs.SeverityValidationResultsPageRenderer", "_render_validation_statistics",
     "ValidationResultsPageRenderer"),
    ("gx.docs.data_docs.SeverityValidationResultsPageRenderer", "_render_validation_header",
     "ValidationResultsPageRenderer"),
    ("gx.docs.data_docs.DescribedSuitePageRenderer", "_render_expectation_suite_info", "ExpectationSuitePageRenderer"),
    ("gx.expectations.base.ERExpectation", "_prescriptive_template", "Expectation"),
    ("gx.expectations.base.ERExpectation", "_prescriptive_renderer", "Expectation"),
    ("gx.expectations.base.ERExpectation", "_diagnostic_observed_value_renderer", "Expectation"),
    ("gx.expectations.base.ERExpectation", "_diagnostic_unexpected_table_renderer", "Expectation"),
    ("gx.expectations.summary._ClusteringStatisticExpectation", "_validate", "Expectation"),
    ("gx.metrics.release.DependentMetric", "_get_evaluation_dependencies", "MetricProvider"),
    ("gx.metrics.labels.LabelChecksMetric", "_get_evaluation_dependencies", "MetricProvider"),
    ("gx.docs.site_store.AtomicSiteStoreBackend", "_set", "TupleFilesystemStoreBackend"),
    ("run.alerts.actions.ErSlackAction", "_send_slack_notification", "SlackNotificationAction"),
    ("run.alerts.actions.ErTeamsAction", "_send_microsoft_teams_notifications", "MicrosoftTeamsNotificationAction"),
    ("run.alerts.actions.ErEmailAction", "_send_email", "EmailAction"),
]
#: hooks every expectation class of ours may override (checked for each one that does)
PER_EXPECTATION = {"_validate", "_diagnostic_unexpected_table_renderer"}


def _our_class(path: str) -> type:
    module, _, name = f"er_expectations.{path}".rpartition(".")
    return getattr(importlib.import_module(module), name)


def _gx_base(cls: type, name: str) -> type:
    (base,) = [b for b in cls.__mro__ if b.__name__ == name and b.__module__.startswith("great_expectations")]
    return base


def _accepts(ours, theirs) -> list[str]:
    """GX's parameter names that our override cannot take."""
    mine = inspect.signature(ours).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in mine.values()):
        return []
    return [n for n, p in inspect.signature(theirs).parameters.items()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) and n not in mine]


@pytest.mark.parametrize(("ours", "hook", "gx_class"), HOOKS, ids=[f"{o.rpartition('.')[2]}.{h}" for o, h, _ in HOOKS])
def test_each_overridden_hook_exists_in_gx_with_our_parameters(ours, hook, gx_class):
    cls = _our_class(ours)
    assert hook in vars(cls), f"{ours} no longer overrides {hook}: update HOOKS"
    base = _gx_base(cls, gx_class)
    assert hook in vars(base), f"GX's {gx_class} has no {hook}: the override is never called"
    assert _accepts(getattr(cls, hook), getattr(base, hook)) == []


def _gx_subclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(er_expectations.__path__, "er_expectations."):
        if not info.name.startswith(("er_expectations.gx", "er_expectations.run.alerts")):
            continue
        module = importlib.import_module(info.name)
        found += [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__
                  and any(b.__module__.startswith("great_expectations") for b in c.__mro__[1:])]
    return found


def test_every_private_gx_method_we_override_is_listed():
    listed = {(_our_class(o), h) for o, h, _ in HOOKS}
    unlisted = []
    for cls in _gx_subclasses():
        gx_bases = [b for b in cls.__mro__[1:] if b.__module__.startswith("great_expectations")]
        for name in vars(cls):
            if not name.startswith("_") or name.startswith("__") or name == "_abc_impl":
                continue
            owner = next((b for b in gx_bases if name in vars(b)), None)
            if owner is None:
                continue  # our own helper
            if name in PER_EXPECTATION and owner.__name__ == "Expectation":
                assert _accepts(getattr(cls, name), getattr(owner, name)) == [], (cls, name)
                continue
            if (cls, name) not in listed:
                unlisted.append(f"{cls.__module__}.{cls.__qualname__}.{name}")
    assert unlisted == [], "list these GX hooks in HOOKS: " + ", ".join(unlisted)
