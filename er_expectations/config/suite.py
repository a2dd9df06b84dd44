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
classes, unless the caller passes one). The values of an entry (and the defaults it inherits)
are handed as plain data to the expectation's GX model, which checks their types, bounds and
the rules between parameters; each error is reported at the YAML node of the parameter
concerned, a wrong type worded with the value as written (``got the string '0.5'``) and a
hint about how to write it in YAML.
"""

from __future__ import annotations

import math
import re
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator

from er_expectations.config.errors import (
    ConfigError,
    ConfigIssue,
    IssueCollector,
    close_matches,
    did_you_mean,
    quote_list,
)
from er_expectations.config.models import ConfigModel, Text, problem, validate_node
from er_expectations.config.schema import (
    COMMON_PARAMS,
    CommonParams,
    ExpectationSpec,
    Registry,
    default_registry,
    make_registry,
)
from er_expectations.config.yamlnodes import Node, compose_file, describe
from er_expectations.core.names import name_problem
from er_expectations.core.text import format_number

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
    #: The check's own name (``id:``), unique in the suite, or None.
    check_id: str | None = None
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
            files = sorted(p for p in base.iterdir() if p.suffix in _SUFFIXES and not p.is_dir())  # FIFOs reported
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
    defaults: dict[str, _Pair] = {}
    if defaults_node is not None and defaults_node.kind == "mapping":
        defaults = _defaults(defaults_node, registry, issues)
    expectations: list[ExpectationConfig] = []
    used: set[str] = set()
    entries = root.get("expectations")
    for item in entries.elements() if entries is not None else ():
        parsed = _expectation(item, defaults, registry, issues)
        if parsed is not None:
            if parsed.check_id is not None and any(e.check_id == parsed.check_id for e in expectations):
                node = item.get("id") if item.kind == "mapping" else item
                issues.add(node, f"id: '{parsed.check_id}' is already the id of another check of this suite",
                           "give each check its own id")
            expectations.append(parsed)
            used.update(key for key, (_, node) in defaults.items() if parsed.locations.get(key) == _location(node))
    _check_unused_defaults(defaults, used, registry, issues)
    if not isinstance(model, _SuiteFile):
        return None
    return SuiteConfig(
        name=model.suite,
        description=model.description,
        path=path,
        expectations=tuple(expectations),
    )


# -- helpers ---------------------------------------------------------------------------

#: A written pair: the key node and the value node.
_Pair = tuple[Node, Node]


def _known_params(registry: Mapping[str, ExpectationSpec]) -> dict[str, ExpectationSpec | None]:
    """Every parameter name a suite may use, with the first expectation that declares it."""
    known: dict[str, ExpectationSpec | None] = {param.name: None for param in COMMON_PARAMS}
    for spec in registry.values():
        for param in spec.params:
            known.setdefault(param.name, spec)
    return known


def _defaults(
    node: Node,
    registry: Mapping[str, ExpectationSpec],
    issues: IssueCollector,
) -> dict[str, _Pair]:
    """The ``defaults`` mapping as parameter -> (key, value) nodes (nulls dropped), names checked."""
    known = _known_params(registry)
    defaults: dict[str, _Pair] = {}
    for key, key_node, value in node.items():
        if key not in known:
            issues.add(
                key_node,
                f"unknown parameter '{key}' in defaults",
                did_you_mean(key, sorted(known)) or "defaults take parameters of the expectations",
            )
        elif not value.is_null and value.kind != "invalid":
            defaults[key] = (key_node, value)
    return defaults


def _check_unused_defaults(
    defaults: Mapping[str, _Pair],
    used: set[str],
    registry: Mapping[str, ExpectationSpec],
    issues: IssueCollector,
) -> None:
    """A default no expectation of the suite uses is still checked for its type, where it is
    written (bounds and rules belong to an expectation, so only a value of the wrong type)."""
    known = _known_params(registry)
    common = {name: pair for name, pair in defaults.items() if known[name] is None and name not in used}
    if common:
        validate_node(CommonParams, _mapping_of(common, next(iter(common.values()))[1]), issues)
    for name, (_, node) in defaults.items():
        spec = known[name]
        if name in used or spec is None or spec.model is None:
            continue
        from er_expectations.gx.expectations import params  # GX, only when a model checks the value

        try:
            params.check_field_value(spec.model.parameter_fields()[name], _plain(node))  # type: ignore[attr-defined]
        except params.ParameterError as error:
            if error.expected is not None:
                issues.add(node, *_wording(name, error.message, error.hint, error.expected, node))


def _plain(node: Node) -> object:
    """The value of a node as plain Python data (what a GX user would pass)."""
    if node.kind == "mapping":
        return {name: _plain(value) for name, _, value in node.items()}
    if node.kind == "sequence":
        return [_plain(item) for item in node.elements()]
    return _UNUSABLE if node.kind == "invalid" else node.value


def _mapping_of(pairs: Mapping[str, _Pair], at: Node) -> Node:
    """A mapping node of the given pairs (from the entry and the defaults), located at ``at``."""
    return Node("mapping", tuple(pairs.values()), at.line, at.column, _keys={name: i for i, name in enumerate(pairs)})


def _node_at(written: Node, at: str | None) -> Node | None:
    """The node a problem points at: a parameter, or a dotted path inside one."""
    if not at:
        return None
    node: Node | None = written
    for part in at.split("."):
        node = node.get(part) if node is not None and node.kind == "mapping" else None
    return node


def _expectation_spec(item: Node, registry: Mapping[str, ExpectationSpec],
                      issues: IssueCollector) -> tuple[str, ExpectationSpec] | None:
    """The expectation an entry names, or ``None`` (reported) when it names none the registry knows."""
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
    return name, spec


def _parameter_pairs(item: Node, name: str, spec: ExpectationSpec, defaults: Mapping[str, _Pair],
                     registry: Mapping[str, ExpectationSpec], issues: IssueCollector
                     ) -> tuple[dict[str, _Pair], set[str]]:
    """The entry's parameters over the suite's defaults (nulls dropped: the default), and the
    parameters that unknown keys probably meant (reported as misspelt, not as missing)."""
    params = {param.name: param for param in spec.all_params()}
    pairs = {key: pair for key, pair in defaults.items() if key in params}
    misspelt: set[str] = set()
    for key, key_node, value in item.items():
        if key == "expectation":
            continue
        if key in params:
            pairs[key] = (key_node, value)
            continue
        misspelt.update(close_matches(key, sorted(params)))
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
    return {key: pair for key, pair in pairs.items() if not pair[1].is_null}, misspelt


def _missing_required(item: Node, name: str, spec: ExpectationSpec, pairs: Mapping[str, _Pair],
                      misspelt: set[str], issues: IssueCollector) -> set[str]:
    """Required parameters the entry lacks (reported unless a misspelt key meant them)."""
    missing: set[str] = set()
    for param in spec.params:
        if param.required and param.name not in pairs:
            missing.add(param.name)
            if param.name not in misspelt:
                issues.add(
                    item,
                    f"missing required parameter '{param.name}' for {name}",
                    f"add '{param.name}: ...' to this expectation or to the suite's defaults",
                )
    return missing


def _plain_kwargs(pairs: Mapping[str, _Pair], unusable: set[str], issues: IssueCollector,
                  model: type | None) -> dict[str, object]:
    """The expectation's own parameters as plain values; invalid ones are added to ``unusable``."""
    kwargs: dict[str, object] = {}
    for key, (_, node) in pairs.items():
        if key in _COMMON:
            continue
        kwargs[key] = _plain(node)
        if node.kind == "invalid":
            unusable.add(key)
        elif node.kind == "mapping" and "$PARAMETER" in node:
            problem = _suite_parameter_problem(key, node, model)
            if problem is not None:
                unusable.add(key)
                issues.add(node, f"{key}: {problem[0]}", problem[1])
    return kwargs


#: A suite parameter's name: a letter or ``_``, then letters, digits and ``_``.
PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _suite_parameter_problem(key: str, node: Node, model: type | None) -> tuple[str, str | None] | None:
    """Why ``{$PARAMETER: name}`` cannot stand for parameter ``key``, or ``None`` when it can
    (GX fills it in from the run's values: ``run --param`` / ``--params``)."""
    field = model.parameter_fields().get(key) if model is not None else None  # type: ignore[attr-defined]
    if field is not None and not _takes_suite_parameter(field):
        return ("takes no suite parameter (only numeric thresholds and levels do)", "write the value itself")
    extra = [name for name, _, _ in node.items() if name != "$PARAMETER"]
    if extra:
        return (f"a suite parameter is written {{$PARAMETER: <name>}} alone, got the extra key '{extra[0]}'",
                f"remove '{extra[0]}'")
    name = node.get("$PARAMETER")
    if name is None or not name.is_str or not PARAMETER_NAME.fullmatch(str(name.value)):
        shown = name.text if name is not None and name.kind == "scalar" else describe(name) if name else "nothing"
        return (f"'{shown}' is not a suite parameter name",
                "names are letters, digits and _, starting with a letter or _")
    return None


def _takes_suite_parameter(field: Any) -> bool:
    """Whether the expectation's field takes a suite parameter (its type includes GX's
    ``SuiteParameterDict``, a ``dict``)."""

    return dict in typing.get_args(field.annotation) or field.annotation is dict


def _expectation(
    item: Node,
    defaults: Mapping[str, _Pair],
    registry: Mapping[str, ExpectationSpec],
    issues: IssueCollector,
) -> ExpectationConfig | None:
    """One entry of a suite's ``expectations:`` list, every problem reported at its place."""
    found = _expectation_spec(item, registry, issues)
    if found is None:
        return None
    name, spec = found
    pairs, misspelt = _parameter_pairs(item, name, spec, defaults, registry, issues)
    written = _mapping_of(pairs, item)
    common = validate_node(CommonParams, _mapping_of({k: v for k, v in pairs.items() if k in _COMMON}, item),
                           issues)
    unusable: set[str] = {key for key in misspelt if key not in pairs}  # rules would report a consequence
    unusable |= _missing_required(item, name, spec, pairs, misspelt, issues)
    kwargs = _plain_kwargs(pairs, unusable, issues, spec.model)
    if spec.model is not None:
        kwargs = _check_model(spec.model, kwargs, unusable, written, item, issues)
    severity = common.severity if isinstance(common, CommonParams) and "severity" in pairs else None
    return ExpectationConfig(
        name=name,
        kwargs=kwargs,
        note=common.note if isinstance(common, CommonParams) else None,
        check_id=common.id if isinstance(common, CommonParams) else None,
        severity=severity or _default_severity(spec),
        line=item.line,
        locations={param: _location(node) for param, (_, node) in pairs.items()},
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


_UNUSABLE = _Unusable()


def _check_model(
    model: type,
    kwargs: dict[str, object],
    unusable: set[str],
    written: Node,
    item: Node,
    issues: IssueCollector,
) -> dict[str, object]:
    """Build the expectation model from the values: its types, bounds and rules report at the
    parameter's node. Returns the values as the fields read them (``1`` -> ``1.0``, ``inf`` -> ``math.inf``)."""
    from er_expectations.gx.expectations.params import (  # Great Expectations, only here
        check_field_value,
        validate_parameters,
    )

    trial = dict(kwargs)
    trial.update({key: _UNUSABLE for key in unusable})
    built, problems = validate_parameters(model, trial)
    reported: set[str] = set()
    for found in problems:
        if found.field is not None:
            if found.field in unusable or found.missing or found.field in reported:
                continue  # already reported, or a second complaint about one value
            reported.add(found.field)
        node = _node_at(written, found.at)
        if found.field is None:
            issues.add(node or item, found.message, found.hint)
        else:
            node = node or written.get(found.field) or item
            issues.add(node, *_wording(found.at or found.field, found.message, found.hint,
                                       found.expected, node))
    if built is None:
        return kwargs
    fields = model.parameter_fields()  # type: ignore[attr-defined]
    return {key: check_field_value(fields[key], value) for key, value in kwargs.items()}  # the declared reading


def _wording(where: str, message: str, hint: str | None, expected: str | None, node: Node) -> tuple[str, str | None]:
    """Message and hint of a parameter's problem: a wrong type is told with the value as written
    in the file, and a hint about how to write it in YAML when there is one (else the model's)."""
    if expected is None:
        return f"{where}: {message}", hint
    return f"{where}: expected {expected}, got {describe(node)}", _yaml_hint(where.rsplit(".", 1)[-1], expected,
                                                                              node) or hint


def _yaml_hint(key: str, expected: str, node: Node) -> str | None:
    """How to write the value in YAML: quoted text, a number without quotes or decimal point, a fraction."""
    if expected == "text":
        return f'put it in quotes: "{node.text}"' if node.kind == "scalar" else "write a single text value"
    text = node.text.strip() if node.kind == "scalar" else ""
    if node.quoted and isinstance(node.value, str):
        fits = {"a number": _finite_number(text) is not None, "an integer": text.lstrip("+-").isdigit(),
                "true or false": text.lower() in ("true", "false")}
        if fits.get(expected):
            return f"remove the quotes: {key}: {text.lower() if expected == 'true or false' else text}"
    if expected == "an integer" and isinstance(node.value, float) and node.value.is_integer():
        return f"write it without the decimal point: {key}: {int(node.value)}"
    if expected == "a number" and text.endswith("%") and (percent := _finite_number(text[:-1])) is not None:
        return f"write a fraction: {format_number(percent / 100)} for {text}"
    return None


def _finite_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
