"""Load a configuration file of either kind, told apart by its top-level key."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from er_expectations.config.checkpoint import CheckpointConfig, checkpoint_from_node
from er_expectations.config.errors import IssueCollector, did_you_mean
from er_expectations.config.schema import ExpectationSpec, Registry
from er_expectations.config.suite import SuiteConfig, resolve_registry, suite_from_node
from er_expectations.config.yamlnodes import compose_file, describe

__all__ = ["load_any"]


def load_any(
    path: str | Path,
    registry: Registry | Iterable[ExpectationSpec | type] | None = None,
) -> SuiteConfig | CheckpointConfig:
    """Load a suite (top-level ``suite:``) or a checkpoint (top-level ``checkpoint:``).

    Raises :class:`ConfigError` listing every problem, including a file that is neither.
    """
    issues = IssueCollector(str(path))
    root = compose_file(path, issues)
    result: SuiteConfig | CheckpointConfig | None = None
    if root is not None:
        if root.kind != "mapping":
            if root.kind != "invalid":
                issues.add(
                    root,
                    f"a configuration file must be a mapping, got {describe(root)}",
                    "start it with 'suite: <name>' or 'checkpoint: <name>'",
                )
        elif "suite" in root and "checkpoint" in root:
            issues.add(
                root.key("checkpoint"),
                "the file has both 'suite:' and 'checkpoint:'",
                "put the suite and the checkpoint in separate files",
            )
        elif "suite" in root:
            result = suite_from_node(root, Path(path), issues, resolve_registry(registry))
        elif "checkpoint" in root:
            result = checkpoint_from_node(root, Path(path), issues)
        else:
            hint = None
            for key, _, _ in root.items():
                hint = did_you_mean(key, ("suite", "checkpoint"))
                if hint:
                    break
            issues.add(
                root,
                "cannot tell the kind of file: no top-level 'suite:' or 'checkpoint:' key",
                hint
                or "start a suite file with 'suite: <name>' and a checkpoint file with "
                "'checkpoint: <name>'",
            )
    issues.raise_if_any()
    if not (result is not None):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: expected result is not None")
    return result
