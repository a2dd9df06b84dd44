"""Suite parameters: where the suites use them and the values a run gives them.

A suite file may write a numeric threshold or level as GX's suite parameter
``{$PARAMETER: name}`` (the suite loader, :mod:`.suite`, accepts it where the expectation's
field takes one). ``er-expectations run`` gives the values with ``--param NAME=VALUE``
(:func:`parse_param_options`) and ``--params FILE`` (:func:`load_parameters_file`, a YAML or
JSON mapping); GX fills them in when it validates (``expectation_parameters`` of
``Checkpoint.run``). :func:`check_parameters` reports, before anything runs, a value no suite
uses, a parameter used without a value and a value its parameter refuses (the check a written
value gets), each at the place it was written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from er_expectations.config.errors import ConfigIssue, IssueCollector, did_you_mean, quote_list
from er_expectations.config.schema import default_registry
from er_expectations.config.suite import PARAMETER_NAME, SuiteConfig
from er_expectations.config.yamlnodes import Node, compose_file, compose_text

__all__ = [
    "PARAMETER_NAME",
    "ParameterUse",
    "ParameterValue",
    "check_parameters",
    "load_parameters_file",
    "parameter_uses",
    "parse_param_options",
]


@dataclass(frozen=True, slots=True)
class ParameterUse:
    """One ``{$PARAMETER: name}`` in a suite: the expectation's ``parameter`` takes it."""

    name: str
    suite: SuiteConfig
    expectation: int  # index in suite.expectations
    parameter: str
    line: int | None
    column: int | None

    def issue(self, message: str, hint: str | None = None) -> ConfigIssue:
        return ConfigIssue(str(self.suite.path), self.line, self.column, f"{self.parameter}: {message}", hint)


@dataclass(frozen=True, slots=True)
class ParameterValue:
    """A value given to a suite parameter and where (``--param x=1`` or ``file:line:column``)."""

    value: object
    where: str
    line: int | None = None
    column: int | None = None
    file: str | None = None

    def issue(self, message: str, hint: str | None = None) -> ConfigIssue:
        return ConfigIssue(self.file or self.where, self.line, self.column, message, hint)


def _suite_parameter_name(value: object) -> str | None:
    if isinstance(value, Mapping) and "$PARAMETER" in value:
        return str(value["$PARAMETER"])
    return None


def parameter_uses(suites: Iterable[SuiteConfig]) -> list[ParameterUse]:
    """Every suite parameter the suites use, in file order."""
    uses = []
    for suite in suites:
        for index, cfg in enumerate(suite.expectations):
            for parameter, value in cfg.kwargs.items():
                name = _suite_parameter_name(value)
                if name is not None:
                    line, column = cfg.locations.get(parameter, (cfg.line, None))
                    uses.append(ParameterUse(name, suite, index, parameter, line, column))
    return uses


_SCALAR = "the value must be a single number, true/false or text"


def parse_param_options(options: Sequence[str]) -> dict[str, ParameterValue]:
    """The values of ``--param NAME=VALUE`` options; VALUE is read as a YAML scalar
    (``0.05``, ``.inf``, ``true``, text). Raises :class:`ConfigError` naming each bad option."""
    issues = IssueCollector("--param")
    values: dict[str, ParameterValue] = {}
    for option in options:
        where = f"--param {option}"
        name, equals, text = option.partition("=")
        name = name.strip()
        if not equals or not name:
            issues.extend([ConfigIssue(where, None, None, "expected NAME=VALUE",
                                       "e.g. --param max_drift=0.05")])
            continue
        if not PARAMETER_NAME.fullmatch(name):
            issues.extend([ConfigIssue(where, None, None, f"'{name}' is not a suite parameter name",
                                       "names are letters, digits and _, starting with a letter or _")])
            continue
        if not text.strip():
            issues.extend([ConfigIssue(where, None, None, "no value", f"e.g. --param {name}=0.05")])
            continue
        node = compose_text(text, IssueCollector(where))
        if node is None or node.kind != "scalar" or node.value is None:
            issues.extend([ConfigIssue(where, None, None, _SCALAR)])
            continue
        values[name] = ParameterValue(node.value, where)
    issues.raise_if_any()
    return values


def load_parameters_file(path: str | Path) -> dict[str, ParameterValue]:
    """The values of a ``--params`` file: a YAML (or JSON) mapping of names to scalars."""
    issues = IssueCollector(str(path))
    root = compose_file(path, issues)
    values: dict[str, ParameterValue] = {}
    if root is not None and root.kind != "mapping":
        issues.add(root, "a parameters file is a mapping of parameter names to values",
                   "write one 'name: value' per line, e.g. max_drift: 0.05")
    elif root is not None:
        for name, key, node in root.items():
            if not PARAMETER_NAME.fullmatch(name):
                issues.add(key, f"'{name}' is not a suite parameter name",
                           "names are letters, digits and _, starting with a letter or _")
            elif not _is_scalar(node):
                issues.add(node, f"{name}: {_SCALAR}")
            else:
                values[name] = ParameterValue(node.value, f"{path}:{key.line}:{key.column}", key.line, key.column,
                                              str(path))
    issues.raise_if_any()
    return values


def _is_scalar(node: Node) -> bool:
    return node.kind == "scalar" and node.value is not None


def check_parameters(suites: Sequence[SuiteConfig], values: Mapping[str, ParameterValue]) -> list[ConfigIssue]:
    """The problems of the given values for the suites' parameters (empty: all is well).

    A value no suite uses, a used parameter without a value, and a value the parameter refuses
    once filled in (its field's type and bounds and the expectation's rules, as for a written
    value), each at its place.
    """
    uses = parameter_uses(suites)
    used = sorted({use.name for use in uses})
    issues = []
    for name, value in values.items():
        if name not in used:
            hint = did_you_mean(name, used) or (f"the suites use {quote_list(used)}" if used
                                                else "the suites use no suite parameter; remove it")
            issues.append(value.issue(f"suite parameter '{name}' is used by no suite of the checkpoint", hint))
    by_expectation: dict[tuple[int, int], list[ParameterUse]] = {}
    for use in uses:
        by_expectation.setdefault((id(use.suite), use.expectation), []).append(use)
    for group in by_expectation.values():
        issues.extend(_check_filled_in(group, values))
    return issues


def _check_filled_in(uses: list[ParameterUse], values: Mapping[str, ParameterValue]) -> list[ConfigIssue]:
    """One expectation's parameters: each has a value, and the expectation takes the values."""
    from er_expectations.gx.expectations.params import validate_parameters  # GX, only here

    missing = [use.issue(f"suite parameter '{use.name}' has no value",
                         f"give it with --param {use.name}=VALUE or in a --params file")
               for use in uses if use.name not in values]
    cfg = uses[0].suite.expectations[uses[0].expectation]
    spec = default_registry().get(cfg.name)
    if spec is None or spec.model is None:
        return missing
    kwargs: dict[str, Any] = dict(cfg.kwargs)
    for use in uses:
        if use.name in values:
            kwargs[use.parameter] = values[use.name].value
    if missing:  # the rules between parameters need them all: each given value by its own field
        kwargs = {use.parameter: kwargs[use.parameter] for use in uses if use.name in values}
        problems = [p for p in validate_parameters(spec.model, kwargs)[1] if p.field in kwargs and not p.missing]
    else:
        problems = validate_parameters(spec.model, kwargs)[1]
    issues = list(missing)
    by_parameter = {use.parameter: use for use in uses}
    for problem in problems:
        use = by_parameter.get(problem.field or "") or by_parameter.get((problem.at or "").split(".")[0])
        if use is None and problem.field is None:
            use = uses[0]  # a rule between parameters: at the first filled-in one
        if use is not None:
            given = values[use.name].where
            issues.append(use.issue(f"the value of suite parameter '{use.name}' ({given}) {problem.message}",
                                    problem.hint))
    return issues

