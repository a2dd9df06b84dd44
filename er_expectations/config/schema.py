"""What a suite file may say: the expectation registry and its parameter specs.

The suite loader does not hard-code the expectations it accepts; it reads them from a
*registry*, a mapping ``name -> ExpectationSpec``. :func:`default_registry` describes the
public expectations of er-expectations; the Great Expectations layer builds its
expectation classes from the same registry, so a suite that loads here runs there.

Parameter kinds (``ParamSpec.kind``):

``str``            text (a column name, a note)
``float``          a finite number (integers are accepted and converted)
``int``            an integer
``bool``           ``true`` / ``false``
``probability``    a number strictly between 0 and 1
``nonneg_float``   a finite number >= 0
``choice``         one of ``ParamSpec.choices``
``weights``        ``cluster_size``, ``uniform`` or ``{column: <weight column>}``
``number_or_inf``  a number, or infinity written ``.inf`` / ``inf`` (``-inf`` too)

On top of its kind a parameter may carry bounds (``minimum`` / ``maximum``, with
``exclusive_minimum`` / ``exclusive_maximum``), and an expectation may carry rules that
involve several parameters (:class:`AtLeastOneOf`, :class:`NotGreaterThan`,
:class:`RequiredWhen`). Booleans never count as numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..severity import SEVERITIES  # how a failed expectation is treated (one rule)

__all__ = [
    "BENCHMARK_STATISTICS",
    "BOUNDS",
    "CI_METHODS",
    "COMMON_PARAMS",
    "ESTIMATED_METRICS",
    "PARAM_KINDS",
    "SEVERITIES",
    "SUMMARY_EXPECTATIONS",
    "WEIGHT_DESIGNS",
    "AtLeastOneOf",
    "ExpectationSpec",
    "NotGreaterThan",
    "ParamSpec",
    "Registry",
    "RequiredWhen",
    "Rule",
    "default_registry",
    "make_registry",
]

PARAM_KINDS: tuple[str, ...] = (
    "str",
    "float",
    "int",
    "bool",
    "probability",
    "nonneg_float",
    "choice",
    "weights",
    "number_or_inf",
)

#: Sampling designs a ``weights`` parameter may name (besides ``{column: ...}``).
WEIGHT_DESIGNS: tuple[str, ...] = ("cluster_size", "uniform")
#: What ``bound`` compares with the thresholds: the point estimate or its whole interval.
BOUNDS: tuple[str, ...] = ("estimate", "interval")
#: How the confidence interval of an estimate is computed (SPEC 6). Mirrors
#: ``er_expectations.stats.estimator`` (this package imports no numpy; a test keeps them equal).
CI_METHODS: tuple[str, ...] = ("linearization", "bootstrap")
DEFAULT_N_BOOT = 2000
MIN_N_BOOT = 100


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter of an expectation.

    ``default`` is used when neither the expectation nor the suite ``defaults`` set the
    parameter (``None``: the parameter is left out of the expectation's kwargs).
    ``minimum`` / ``maximum`` bound numeric kinds, inclusive unless the matching
    ``exclusive_*`` flag is set.
    """

    name: str
    kind: str
    required: bool = False
    default: object = None
    choices: tuple[str, ...] = ()
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(
                f"ParamSpec {self.name!r}: unknown kind {self.kind!r}; "
                f"expected one of {', '.join(PARAM_KINDS)}"
            )
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"ParamSpec {self.name!r}: kind 'choice' needs choices")


@dataclass(frozen=True, slots=True)
class AtLeastOneOf:
    """At least one of ``names`` must be set (e.g. ``min_value`` or ``max_value``)."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NotGreaterThan:
    """When both are set, parameter ``lower`` must not exceed parameter ``upper``; nor equal
    it when one of the true/false parameters ``strict`` is true (no value could pass)."""

    lower: str
    upper: str
    strict: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RequiredWhen:
    """Parameter ``name`` is required when parameter ``other`` takes one of ``values``."""

    name: str
    other: str
    values: tuple[object, ...]


Rule = AtLeastOneOf | NotGreaterThan | RequiredWhen


@dataclass(frozen=True, slots=True)
class ExpectationSpec:
    """An expectation a suite may use: its name, its parameters and its cross-parameter rules.

    ``params`` lists the expectation's own parameters; :data:`COMMON_PARAMS` (``note``,
    ``severity``) are accepted by every expectation on top of them and never reach the
    expectation's kwargs.
    """

    name: str
    params: tuple[ParamSpec, ...]
    summary: str = ""
    rules: tuple[Rule, ...] = ()

    def param(self, name: str) -> ParamSpec | None:
        """The spec of parameter ``name`` (own or common), or ``None``."""
        for spec in self.params:
            if spec.name == name:
                return spec
        for spec in COMMON_PARAMS:
            if spec.name == name:
                return spec
        return None

    def all_params(self) -> tuple[ParamSpec, ...]:
        """Own parameters followed by the common ones it does not redefine."""
        own = {spec.name for spec in self.params}
        return self.params + tuple(spec for spec in COMMON_PARAMS if spec.name not in own)


#: Accepted by every expectation; kept out of the kwargs handed to Great Expectations.
COMMON_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("note", "str", doc="Free-text note for auditors (why this threshold, who agreed)."),
    ParamSpec(
        "severity",
        "choice",
        default="critical",
        choices=SEVERITIES,
        doc="How to treat a failure: critical, warning or info.",
    ),
)

Registry = Mapping[str, ExpectationSpec]


def make_registry(specs: Iterable[ExpectationSpec]) -> dict[str, ExpectationSpec]:
    """A registry from expectation specs; two specs with one name are an error."""
    registry: dict[str, ExpectationSpec] = {}
    for spec in specs:
        if spec.name in registry:
            raise ValueError(f"expectation {spec.name!r} is registered twice")
        names = [param.name for param in spec.params]
        if len(set(names)) != len(names):
            raise ValueError(f"expectation {spec.name!r} lists a parameter twice")
        registry[spec.name] = spec
    return registry


# -- the public expectations of er-expectations ------------------------------------------

#: Summary statistics of the predicted clustering: statistic id -> (needs names, summary).
SUMMARY_EXPECTATIONS: dict[str, tuple[bool, str]] = {
    "average_cluster_size": (False, "Average size of the predicted clusters (records / clusters)."),
    "matching_rate": (False, "Share of records in predicted clusters of size 2 or more."),
    "hill_number": (False, "Hill number of order q of the predicted cluster-size distribution."),
    "homonymy_rate": (True, "Share of predicted clusters sharing a name with another cluster."),
    "name_variation_rate": (True, "Share of predicted clusters with two or more distinct names."),
}

#: Metrics with a benchmark-based estimate: metric id -> (has beta, summary).
ESTIMATED_METRICS: dict[str, tuple[bool, str]] = {
    "pairwise_precision": (False, "pairwise precision"),
    "pairwise_recall": (False, "pairwise recall"),
    "pairwise_f": (True, "pairwise F-beta score"),
    "cluster_precision": (False, "cluster precision (share of predicted clusters exactly right)"),
    "cluster_recall": (False, "cluster recall (share of true clusters exactly found)"),
    "cluster_f": (True, "cluster F-beta score"),
    "b_cubed_precision": (False, "b-cubed precision"),
    "b_cubed_recall": (False, "b-cubed recall"),
    "b_cubed_f": (True, "b-cubed F-beta score"),
    "homogeneity": (False, "homogeneity"),
}

#: Statistics of the true clustering that have a benchmark estimate (SPEC section 7).
BENCHMARK_STATISTICS: tuple[str, ...] = (
    "average_cluster_size",
    "matching_rate",
    "homonymy_rate",
    "name_variation_rate",
)
_NAME_STATISTICS: tuple[str, ...] = ("homonymy_rate", "name_variation_rate")
_RATES = {"matching_rate", "homonymy_rate", "name_variation_rate"}


def _prediction_column() -> ParamSpec:
    return ParamSpec(
        "prediction_column",
        "str",
        required=True,
        doc="Column with the predicted cluster id of each record.",
    )


def _record_id_column() -> ParamSpec:
    return ParamSpec(
        "record_id_column",
        "str",
        doc="Column with the record id: a batch with a duplicated record is then an error "
        "instead of a silently wrong statistic (checkpoints also check every input file).",
    )


def _reference_column() -> ParamSpec:
    return ParamSpec(
        "reference_column",
        "str",
        required=True,
        doc="Column with the benchmark (true) cluster id; null outside the benchmark.",
    )


def _name_column(*, required: bool) -> ParamSpec:
    return ParamSpec(
        "name_column",
        "str",
        required=required,
        doc="Column with the name used for homonymy and name variation.",
    )


def _thresholds(
    *, minimum: float | None, maximum: float | None, what: str
) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec(
            "min_value",
            "number_or_inf",
            minimum=minimum,
            maximum=maximum,
            doc=f"Smallest acceptable {what}.",
        ),
        ParamSpec(
            "max_value",
            "number_or_inf",
            minimum=minimum,
            maximum=maximum,
            doc=f"Largest acceptable {what} (.inf for no limit).",
        ),
        ParamSpec("strict_min", "bool", doc=f"true: the {what} must be greater than min_value, not equal."),
        ParamSpec("strict_max", "bool", doc=f"true: the {what} must be less than max_value, not equal."),
    )


def _sampling_params() -> tuple[ParamSpec, ...]:
    return (
        ParamSpec(
            "weights",
            "weights",
            default="cluster_size",
            doc="Benchmark sampling design: cluster_size (clusters drawn with probability "
            "proportional to their size), uniform, or {column: <weight column>}.",
        ),
        ParamSpec(
            "draws_column",
            "str",
            doc="Column with how many times each benchmark cluster was drawn (default 1).",
        ),
    )


def _ci_level() -> ParamSpec:
    return ParamSpec(
        "ci_level",
        "probability",
        default=0.95,
        doc="Confidence level of the interval, strictly between 0 and 1.",
    )


def _interval_method_params() -> tuple[ParamSpec, ...]:
    # defaults live in the expectation (None: left out of the kwargs)
    return (
        ParamSpec(
            "ci_method",
            "choice",
            choices=CI_METHODS,
            doc="How the confidence interval is computed: linearization (estimate ± z·SE, "
            "the default) or bootstrap (percentile bootstrap over the sampled draws).",
        ),
        ParamSpec(
            "n_boot",
            "int",
            minimum=MIN_N_BOOT,
            doc=f"Number of bootstrap resamples for ci_method: bootstrap (default {DEFAULT_N_BOOT}, "
            f"at least {MIN_N_BOOT}).",
        ),
        ParamSpec(
            "seed",
            "int",
            minimum=0,
            doc="Seed of the bootstrap resamples (default: a fresh one, recorded in the result).",
        ),
    )


_RANGE_RULES: tuple[Rule, ...] = (
    AtLeastOneOf(("min_value", "max_value")),
    NotGreaterThan("min_value", "max_value", strict=("strict_min", "strict_max")),
)


def _summary_spec(statistic: str, needs_names: bool, summary: str) -> ExpectationSpec:
    params: list[ParamSpec] = [_prediction_column(), _record_id_column()]
    if needs_names:
        params.append(_name_column(required=True))
    if statistic == "hill_number":
        params.append(
            ParamSpec(
                "q",
                "number_or_inf",
                required=True,
                minimum=0.0,
                doc="Order of the Hill number, q >= 0 (.inf allowed).",
            )
        )
    upper = 1.0 if statistic in _RATES else None
    params.extend(_thresholds(minimum=0.0, maximum=upper, what=statistic.replace("_", " ")))
    return ExpectationSpec(
        f"expect_{statistic}_to_be_between", tuple(params), summary, _RANGE_RULES
    )


def _metric_spec(metric: str, has_beta: bool, label: str) -> ExpectationSpec:
    params: list[ParamSpec] = [_prediction_column(), _record_id_column(), _reference_column(), *_sampling_params()]
    params.extend(_thresholds(minimum=0.0, maximum=1.0, what=f"estimated {label}"))
    if has_beta:
        params.append(
            ParamSpec(
                "beta",
                "float",
                default=1.0,
                minimum=0.0,
                exclusive_minimum=True,
                doc="Weight of recall against precision, > 0 (1 = F1).",
            )
        )
    params.append(_ci_level())
    params.append(
        ParamSpec(
            "bound",
            "choice",
            default="estimate",
            choices=BOUNDS,
            doc="Compare the point estimate with the thresholds (estimate) or "
            "require the whole confidence interval inside them (interval).",
        )
    )
    params.extend(_interval_method_params())
    summary = (
        f"The {label} of the release, estimated from the benchmark, lies between the thresholds."
    )
    return ExpectationSpec(
        f"expect_estimated_{metric}_to_be_between", tuple(params), summary, _RANGE_RULES
    )


def _benchmark_statistic_spec() -> ExpectationSpec:
    params = (
        ParamSpec(
            "statistic",
            "choice",
            required=True,
            choices=BENCHMARK_STATISTICS,
            doc="Which summary statistic to compare.",
        ),
        _prediction_column(),
        _record_id_column(),
        _reference_column(),
        *_sampling_params(),
        _name_column(required=False),
        _ci_level(),
    )
    return ExpectationSpec(
        "expect_statistic_to_match_benchmark_estimate",
        params,
        "The statistic of the predicted clustering lies in the confidence interval of the same "
        "statistic of the true clustering, estimated from the benchmark.",
        (RequiredWhen("name_column", "statistic", _NAME_STATISTICS),),
    )


def default_registry() -> dict[str, ExpectationSpec]:
    """The public expectations of er-expectations, by name."""
    specs: list[ExpectationSpec] = [
        _summary_spec(statistic, needs_names, summary)
        for statistic, (needs_names, summary) in SUMMARY_EXPECTATIONS.items()
    ]
    specs.extend(
        _metric_spec(metric, has_beta, label)
        for metric, (has_beta, label) in ESTIMATED_METRICS.items()
    )
    specs.append(_benchmark_statistic_spec())
    return make_registry(specs)
