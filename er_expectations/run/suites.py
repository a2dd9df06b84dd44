"""Turn YAML suite models (``er_expectations.config``) into GX expectation suites."""

from __future__ import annotations

import html
import math
from typing import Any

import great_expectations as gx
from great_expectations.expectations.registry import get_expectation_impl

from er_expectations.config.suite import ExpectationConfig, SuiteConfig
from er_expectations.core.errors import InputError
from er_expectations.gx.outcome import CHECK_ID_META

__all__ = ["expectation_from_config", "suite_from_config"]


def _gx_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The kwargs without an infinite bound on its open side (no bound; JSON has no infinity).

    An infinite ``q`` needs nothing: the model stores it as ``"inf"``.
    """
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key == "max_value" and isinstance(value, float) and math.isinf(value) and value > 0:
            continue  # no upper bound
        if key == "min_value" and isinstance(value, float) and math.isinf(value) and value < 0:
            continue
        out[key] = value
    return out


def expectation_from_config(cfg: ExpectationConfig) -> Any:
    """One GX expectation from a YAML expectation; the auditor note becomes an (escaped) GX note."""
    try:
        cls = get_expectation_impl(cfg.name)
    except Exception as exc:  # registry raises its own error type
        raise InputError(f"expectation {cfg.name!r} is not registered; is er_expectations imported?") from exc
    extra: dict[str, Any] = {"severity": cfg.severity}
    if cfg.note:
        # GX renders notes as Markdown with raw HTML allowed: escape what the user wrote
        extra["notes"] = [html.escape(cfg.note)]
    if cfg.check_id:  # the check's own name: its label and its identity in the history
        extra["meta"] = {CHECK_ID_META: cfg.check_id}
    return cls(**_gx_kwargs(dict(cfg.kwargs)), **extra)


def suite_from_config(suite: SuiteConfig) -> gx.ExpectationSuite:
    """A GX suite with every expectation of the YAML suite, in file order."""
    meta: dict[str, Any] = {"er_expectations": {"source": str(suite.path)}}
    if suite.description:
        meta["er_expectations"]["description"] = suite.description
    # expectations go in through the constructor: add_expectation() needs an active context
    return gx.ExpectationSuite(name=suite.name, meta=meta,
                               expectations=[expectation_from_config(cfg) for cfg in suite.expectations])
