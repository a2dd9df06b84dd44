"""Shared base of every er-expectations expectation: dependencies, results, renderers.

Subclasses say *what* is checked (a sentence template and the numbers); this base turns
that into GX metric dependencies, JSON-safe results and Data Docs renderers. The base
classes are abstract so GX registers only the concrete expectations.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.expectations.registry import get_metric_kwargs
from great_expectations.render import LegacyDiagnosticRendererType, LegacyRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.render.renderer_configuration import (
    RendererConfiguration,
    RendererValueType,
)
from great_expectations.validator.metric_configuration import MetricConfiguration

from ..render import config_of, result_details, string_block, table_block

__all__ = ["ERExpectation", "check_min_max", "check_range", "json_number"]

#: Number of sampled clusters listed under a failed estimate.
TOP_CLUSTERS = 10


def json_number(x: Any) -> float | int | None:
    """A JSON-safe number: numpy scalars to Python, NaN to None, ±inf kept as float."""
    if x is None:
        return None
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def check_range(lo: float, hi: float, min_value: float | None, max_value: float | None) -> bool:
    """True when [lo, hi] lies within [min_value, max_value] (None = unbounded)."""
    if math.isnan(lo) or math.isnan(hi):
        return False
    if min_value is not None and lo < min_value:
        return False
    return not (max_value is not None and hi > max_value)


def check_min_max(values: dict[str, Any]) -> dict[str, Any]:
    """Shared root validation: at least one bound, and min_value ≤ max_value."""
    lo, hi = values.get("min_value"), values.get("max_value")
    if lo is None and hi is None:
        raise ValueError("give min_value, max_value or both")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min_value ({lo}) is greater than max_value ({hi})")
    return values


class ERExpectation(BatchExpectation):
    """Abstract base: renders a plain-English sentence and a human observed value."""

    domain_keys: ClassVar[tuple[str, ...]] = ("batch_id", "row_condition", "condition_parser")
    metric_dependencies: ClassVar[tuple[str, ...]] = ()
    library_metadata: ClassVar[dict[str, Any]] = {
        "maturity": "beta",
        "tags": ["entity resolution", "record linkage", "deduplication"],
        "contributors": ["er-expectations developers"],
    }

    # -- what subclasses provide ---------------------------------------------------------
    @classmethod
    @abstractmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A template with $params and the params (all user/data values go in params)."""

    @abstractmethod
    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        """The metrics this expectation reads, by the key used in ``metrics``."""

    # -- GX plumbing ---------------------------------------------------------------------
    def get_validation_dependencies(self, execution_engine=None, runtime_configuration=None):
        deps = super().get_validation_dependencies(execution_engine=execution_engine,
                                                   runtime_configuration=runtime_configuration)
        from ..metrics import ESTIMATE

        domain = get_metric_kwargs(metric_name=ESTIMATE, configuration=self.configuration,
                                   runtime_configuration=runtime_configuration)["metric_domain_kwargs"]
        for name, cfg in self._metric_configs(domain).items():
            deps.set_metric_configuration(metric_name=name, metric_configuration=cfg)
        return deps

    # -- renderers -----------------------------------------------------------------------
    @classmethod
    def _prescriptive_template(cls, renderer_configuration: RendererConfiguration) -> RendererConfiguration:
        template, params = cls._sentence(dict(renderer_configuration.kwargs))
        for name, value in params.items():
            kind = RendererValueType.NUMBER if isinstance(value, (int, float)) else RendererValueType.STRING
            renderer_configuration.add_param(name=name, param_type=kind, value=value)
        renderer_configuration.template_str = template
        return renderer_configuration

    @classmethod
    @renderer(renderer_type=LegacyRendererType.PRESCRIPTIVE)
    def _prescriptive_renderer(cls, configuration=None, result=None, runtime_configuration=None, **kwargs):
        cfg = config_of(configuration, result)
        if cfg is None:
            return []
        template, params = cls._sentence(dict(cfg.kwargs))
        styling = (runtime_configuration or {}).get("styling") or {}
        return [string_block(template, params, styling=styling)]

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.OBSERVED_VALUE)
    def _diagnostic_observed_value_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                            **kwargs):
        details = result_details(result)
        text = details.get("observed_text")
        if not text:
            observed = (result.result or {}).get("observed_value") if result is not None and result.result else None
            if observed is None:
                return "--"
            text = str(observed)
        return string_block("$observed", {"observed": text})

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        details = result_details(result)
        blocks = []
        cfg = config_of(configuration, result)
        for author_note in _notes(cfg):
            # the suite author's note for auditors (GX shows notes on suite pages only)
            blocks.append(string_block("Note: $author_note", {"author_note": author_note}, tag="div",
                                       styling={"classes": ["er-note", "text-muted"]}))
        note = details.get("note")
        if note and result is not None and not result.success:
            blocks.append(string_block("Why: $note", {"note": note}))
        top = details.get("top_clusters") or []
        if top and result is not None and not result.success:
            rows = [[r["cluster"], r["size"], r["predicted_clusters"], _fmt_err(r["OCE"]), _fmt_err(r["UCE"]),
                     f"{100 * r['error_share']:.1f} %"] for r in top]
            blocks.append(table_block(
                f"Sampled clusters that contribute most to the error of the {details.get('label', 'estimate')}",
                ["Benchmark cluster", "Records", "Predicted clusters", "Over-clustering (OCE)",
                 "Under-clustering (UCE)", "Share of error"],
                rows,
            ))
        return blocks or None


def _notes(cfg: Any) -> list[str]:
    """The expectation's notes as plain text (they are stored HTML-escaped, see gx.suites)."""
    import html

    notes = getattr(cfg, "notes", None) if cfg is not None else None
    if not notes:
        return []
    if isinstance(notes, str):
        notes = [notes]
    return [html.unescape(str(n)) for n in notes]


def _fmt_err(x: float) -> str:
    return f"{x:.2f}" if not float(x).is_integer() else f"{int(x)}"
