"""YAML configuration of er-expectations: suite and checkpoint files as typed models.

Every loader collects all the problems of a file and raises them together in one
:class:`ConfigError`, each with file, line, column and a hint. The structure of both files
is declared as pydantic v2 models (:mod:`.models`, :mod:`.checkpoint`, :mod:`.suite`); the
expectation parameters come from the GX expectation models (:mod:`.schema`). Importing this package
does not import Great Expectations, pandas or pyarrow; validating a suite imports the GX
expectation classes, which declare the parameters (see :mod:`.schema`).

>>> from er_expectations.config import load_suite, load_checkpoint, load_any
"""

from __future__ import annotations

from er_expectations.config.checkpoint import (
    ActionConfig,
    BenchmarkSource,
    CheckpointConfig,
    DataSources,
    NameSpec,
    PredictionsSource,
    ReleaseFile,
    TableSource,
    check_checkpoint_references,
    load_checkpoint,
)
from er_expectations.config.errors import ConfigError, ConfigIssue
from er_expectations.config.loading import load_any
from er_expectations.config.scaffold import scaffold_checkpoint, scaffold_suite
from er_expectations.config.schema import (
    COMMON_PARAMS,
    CommonParams,
    ExpectationSpec,
    ParamSpec,
    Registry,
    default_registry,
    make_registry,
    spec_from_model,
)
from er_expectations.config.suite import ExpectationConfig, SuiteConfig, load_suite, load_suites

__all__ = [
    "COMMON_PARAMS",
    "CommonParams",
    "ActionConfig",
    "BenchmarkSource",
    "CheckpointConfig",
    "ConfigError",
    "ConfigIssue",
    "DataSources",
    "ExpectationConfig",
    "ExpectationSpec",
    "NameSpec",
    "ParamSpec",
    "PredictionsSource",
    "Registry",
    "ReleaseFile",
    "SuiteConfig",
    "TableSource",
    "check_checkpoint_references",
    "default_registry",
    "load_any",
    "load_checkpoint",
    "load_suite",
    "load_suites",
    "make_registry",
    "scaffold_checkpoint",
    "scaffold_suite",
    "spec_from_model",
]
