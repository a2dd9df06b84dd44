"""Suite files (``suites/*.yml``): a named list of expectations with shared defaults.

.. code-block:: yaml

    suite: patentsview_inventor_disambiguation
    description: "free text"
    defaults:                       # inherited by every expectation that has the parameter
      prediction_column: inventor_id
      reference_column: benchmark_id
      weights: cluster_size
    expectations:
      - expectation: expect_estimated_pairwise_precision_to_be_between
        min_value: 0.85
        bound: interval
        note: "Agreed with the release owner in 2022."
        severity: critical
      - expectation: expect_hill_number_to_be_between
        q: 2
        min_value: 1.5

Which expectations exist and what parameters they take comes from a registry
(:func:`~er_expectations.config.schema.default_registry`, derived from the GX expectation
classes, unless the caller passes one). Each value is read with messages about the YAML
node; then the expectation model is built, so its bounds and the rules between parameters
apply, reported at the line of the parameter concerned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator

from ..names import name_problem
from .errors import (
    ConfigError,
    ConfigIssue,
    IssueCollector,
    close_matches,
    did_you_mean,
    quote_list,
)
from .models import ConfigModel, Text, problem, validate_node
from .schema import (
    COMMON_PARAMS,
    ExpectationSpec,
    ParamSpec,
    Registry,
    default_registry,
    make_registry,
)
from .values import ValueProblem, convert_param
from .yamlnodes import Node, compose_file, describe

__all__ = [
    "SUITE_KEYS",
    "ExpectationConfig",
    "SuiteConfig",
    "load_suite",
    "load_suites",
    "resolve_registry",
]

_SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True, slots=True)
class ExpectationConfig:
    """One expectation of a suite, ready for Great Expectations.

    ``kwargs`` holds every parameter written for the expectation or in the suite defaults
    (numbers as ``float``, infinity as ``math.inf``); parameters nobody wrote are left to
    the expectation's defaults. ``note`` and ``severity`` are kept apart. ``line`` is where
    the entry starts.
    """

    name: str
    kwargs: dict[str, object] = field(hash=False)
    note: str | None = None
    severity: str = "critical"
    line: int | None = None
    #: ``(line, column)`` where each parameter's value is written (the entry or the suite's
    #: defaults; for ``weights: {column: ...}`` the column name), for later checks' messages.
    locations: dict[str, tuple[int, int]] = field(default_factory=dict, hash=False, compare=False)


def _location(node: Node) -> tuple[int, int]:
    if node.kind == "mapping" and node.get("column") is not None:  # weights: {column: w}
        node = node.get("column")  # type: ignore[assignment]
    return node.line, node.column


@dataclass(frozen=True, slots=True)
class SuiteConfig:
    """A loaded suite file; ``path`` is the file as given to the loader."""

    name: str
    description: str | None
    path: Path
    expectations: tuple[ExpectationConfig, ...]


def resolve_registry(
    registry: Registry | Iterable[ExpectationSpec | type] | None,
) -> Mapping[str, ExpectationSpec]:
    """The registry to validate against: the default one, a mapping, or a list of specs or
    GX expectation classes."""
    if registry is None:
        return default_registry()
    if isinstance(registry, Mapping):
        return registry
    return make_registry(registry)


def load_suite(
    path: str | Path,
    registry: Registry | Iterable[ExpectationSpec | type] | None = None,
) -> SuiteConfig:
    """Load and validate a suite file; raises :class:`ConfigError` listing every problem."""
    issues = IssueCollector(str(path))
    root = compose_file(path, issues)
    suite = None
    if root is not None:
        suite = suite_from_node(root, Path(path), issues, resolve_registry(registry))
    issues.raise_if_any()
    if not (suite is not None):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: expected suite is not None")
    return suite


def load_suites(
    paths: Iterable[str | Path],
    *,
    registry: Registry | Iterable[ExpectationSpec | type] | None = None,
) -> dict[str, SuiteConfig]:
    """Load every suite under ``paths`` (folders are searched for ``*.yml`` / ``*.yaml``).

    Returns the suites by name. Files whose top-level key is ``checkpoint:`` are skipped.
    The problems of all files, a missing path and two files defining one suite name are
    raised together in one :class:`ConfigError`.
    """
    specs = resolve_registry(registry)
    problems: list[ConfigIssue] = []
    suites: dict[str, SuiteConfig] = {}
    for base in paths:
        base = Path(base)
        if base.is_dir():
            files = sorted(p for p in base.iterdir() if p.suffix in _SUFFIXES and p.is_file())
        elif base.is_file():
            files = [base]
        else:
            problems.append(
                ConfigIssue(str(base), None, None, f"suite path not found: {base.absolute()}")
            )
            continue
        for file in files:
            issues = IssueCollector(str(file))
            root = compose_file(file, issues)
            if (
                root is not None
                and root.kind == "mapping"
                and "checkpoint" in root
                and "suite" not in root
            ):
                continue
            suite = suite_from_node(root, file, issues, specs) if root is not None else None
            problems.extend(issues.issues)
            if suite is None or issues:
                continue
            if suite.name in suites:
                key = root.key("suite") if root is not None else None
                problems.append(
                    ConfigIssue(
                        str(file),
                        key.line if key else None,
                        key.column if key else None,
                        f"suite '{suite.name}' is also defined in {suites[suite.name].path}",
                        "give every suite its own name",
                    )
                )
                continue
            suites[suite.name] = suite
    if problems:
        raise ConfigError(problems)
    return suites


def _suite_name(name: str) -> str:
    found = name_problem(name, what="suite")
    if found is not None:
        raise problem(*found)
    return name


def _some_expectations(entries: list[Any]) -> list[Any]:
    if not entries:
        raise problem("the suite has no expectations", "add at least one '- expectation: <name>' entry")
    return entries


class _SuiteFile(ConfigModel):
    """The top level of a suite file (the entries are checked against the registry after)."""

    section: ClassVar[str] = "a suite file"
    unknown_key: ClassVar[str] = "unknown top-level key '{key}' in {where}"
    missing_key: ClassVar[str] = "missing required key '{key}'"
    missing_hints: ClassVar[dict[str, str]] = {
        "suite": "add 'suite: <name of the expectation suite>'",
        "expectations": "add 'expectations:' with a list of '- expectation: <name>' entries",
    }
    suite: Annotated[Text, AfterValidator(_suite_name)]
    description: Text | None = None
    defaults: dict[str, Any] | None = None
    expectations: Annotated[list[Any], AfterValidator(_some_expectations)]


#: Top-level keys of a suite file.
SUITE_KEYS: tuple[str, ...] = tuple(_SuiteFile.model_fields)


def suite_from_node(
    root: Node,
    path: Path,
    issues: IssueCollector,
    registry: Mapping[str, ExpectationSpec],
) -> SuiteConfig | None:
    """Validate a composed suite document; problems go to ``issues``.

    The top level is one model validation; the defaults and every entry are then checked
    against the registry, so a file's problems are all reported together.
    """
    model = validate_node(_SuiteFile, root, issues)
    if root.kind != "mapping":
        return None
    defaults_node = root.get("defaults")
    defaults = {}
    if defaults_node is not None and defaults_node.kind == "mapping":
        defaults = _defaults(defaults_node, registry, issues)
    expectations: list[ExpectationConfig] = []
    entries = root.get("expectations")
    for item in entries.elements() if entries is not None else ():
        parsed = _expectation(item, defaults, registry, issues)
        if parsed is not None:
            expectations.append(parsed)
    if not isinstance(model, _SuiteFile):
        return None
    return SuiteConfig(
        name=model.suite,
        description=model.description,
        path=path,
        expectations=tuple(expectations),
    )


# -- helpers ---------------------------------------------------------------------------


def _known_params(registry: Mapping[str, ExpectationSpec]) -> dict[str, ParamSpec]:
    known: dict[str, ParamSpec] = {}
    for spec in registry.values():
        for param in spec.all_params():
            known.setdefault(param.name, param)
    for param in COMMON_PARAMS:
        known.setdefault(param.name, param)
    return known


def _defaults(
    node: Node | None,
    registry: Mapping[str, ExpectationSpec],
    issues: IssueCollector,
) -> dict[str, Node]:
    """The ``defaults`` mapping as parameter -> value node (nulls dropped), checked."""
    known = _known_params(registry)
    defaults: dict[str, Node] = {}
    for key, key_node, value in node.items():
        if key not in known:
            issues.add(
                key_node,
                f"unknown parameter '{key}' in defaults",
                did_you_mean(key, sorted(known)) or "defaults take parameters of the expectations",
            )
            continue
        if value.is_null or value.kind == "invalid":
            continue
        _convert(known[key], value, issues)  # report a bad value once, where it is written
        defaults[key] = value
    return defaults


_INVALID = object()


def _convert(param: ParamSpec, node: Node, issues: IssueCollector) -> object:
    if node.kind == "invalid":
        return _INVALID
    try:
        return convert_param(param, node)
    except ValueProblem as problem:
        issues.add(node, problem.message, problem.hint)
        return _INVALID


def _expectation(
    item: Node,
    defaults: Mapping[str, Node],
    registry: Mapping[str, ExpectationSpec],
    issues: IssueCollector,
) -> ExpectationConfig | None:
    if item.kind != "mapping":
        if item.kind != "invalid":
            issues.add(
                item,
                f"an expectation must be a mapping, got {describe(item)}",
                "start the entry with '- expectation: <name>' and list its parameters below",
            )
        return None
    name_node = item.get("expectation")
    if name_node is None:
        named = [key for key, _, _ in item.items() if key in registry]
        if named:
            hint = (
                f"write '- expectation: {named[0]}' and put its parameters on the next "
                "lines, at the same indentation as 'expectation'"
            )
        else:
            hint = "start each entry with '- expectation: <name>'"
        issues.add(item, "expectation entry without an 'expectation' key", hint)
        return None
    if not name_node.is_str:
        if name_node.kind != "invalid":
            issues.add(
                name_node,
                f"expectation: expected the name of an expectation, got {describe(name_node)}",
                "write for example 'expectation: expect_matching_rate_to_be_between'",
            )
        return None
    name = name_node.value
    if not (isinstance(name, str)):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: expected isinstance(name, str)")
    spec = registry.get(name)
    if spec is None:
        issues.add(
            name_node,
            f"unknown expectation '{name}'",
            did_you_mean(name, sorted(registry), list_all_below=len(registry) + 1),
        )
        return None

    params = {param.name: param for param in spec.all_params()}
    given: dict[str, Node] = {}
    misspelt: set[str] = set()  # parameters an unknown key probably meant: not "missing"
    for key, key_node, value in item.items():
        if key == "expectation":
            continue
        if key in params:
            given[key] = value
            continue
        matches = close_matches(key, sorted(params))
        misspelt.update(matches)
        hint = did_you_mean(key, sorted(params))
        if hint is None:
            elsewhere = sorted(other.name for other in registry.values() if other.param(key))
            if elsewhere:
                hint = f"'{key}' is a parameter of {quote_list(elsewhere[:3])}" + (
                    " and others" if len(elsewhere) > 3 else ""
                )
            else:
                hint = f"{name} takes {quote_list(sorted(params))}"
        issues.add(key_node, f"unknown parameter '{key}' for {name}", hint)

    values: dict[str, object] = {}
    sources: dict[str, Node] = {}
    unusable: set[str] = set(misspelt)  # rules involving these would report a consequence
    for param in params.values():
        node = given.get(param.name)
        if node is None:
            node = defaults.get(param.name)
        if node is not None and not node.is_null:
            sources[param.name] = node
            value = _convert(param, node, issues)
            if value is _INVALID:
                unusable.add(param.name)
            else:
                values[param.name] = value
        elif param.required:
            unusable.add(param.name)
            if param.name not in misspelt:
                issues.add(
                    item,
                    f"missing required parameter '{param.name}' for {name}",
                    f"add '{param.name}: ...' to this expectation or to the suite's defaults",
                )
    kwargs = {key: value for key, value in values.items() if key not in _COMMON}
    if spec.model is not None:
        _check_model(spec.model, kwargs, unusable & (set(params) - _COMMON), sources, item, issues)
    severity = values.get("severity")
    note = values.get("note")
    return ExpectationConfig(
        name=name,
        kwargs=kwargs,
        note=note if isinstance(note, str) else None,
        severity=severity if isinstance(severity, str) else _default_severity(spec),
        line=item.line,
        locations={param: _location(node) for param, node in sources.items()},
    )


_COMMON = frozenset(param.name for param in COMMON_PARAMS)


def _default_severity(spec: ExpectationSpec) -> str:
    """The severity of an expectation whose entry does not say: its class's ``default_severity``
    (``warning`` for the soft labelling rule 5), else ``critical``."""
    return str(getattr(spec.model, "default_severity", None) or "critical")


class _Unusable:
    """Stands for a value already reported: its field fails in the model, so the model's
    rules that need it are not checked (they would report a consequence)."""

    def __repr__(self) -> str:
        return "<already reported>"


def _check_model(
    model: type,
    kwargs: Mapping[str, object],
    unusable: set[str],
    sources: Mapping[str, Node],
    item: Node,
    issues: IssueCollector,
) -> None:
    """Build the expectation model: its bounds and rules report at the parameter's node."""
    from ..gx.expectations._base import model_problems  # Great Expectations, only here

    trial = dict(kwargs)
    trial.update({key: _Unusable() for key in unusable})
    reported: set[str] = set()
    for param, at, message, hint in model_problems(model, trial):
        if param is not None:
            if param in unusable or param in reported:
                continue  # already reported, or a second complaint about one value
            reported.add(param)
        issues.add(sources.get(at, item) if at is not None else item, message, hint)
