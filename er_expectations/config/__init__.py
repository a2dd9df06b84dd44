"""YAML configuration of er-expectations: suite and checkpoint files as typed models.

Every loader collects all the problems of a file and raises them together in one
:class:`ConfigError`, each with file, line, column and a hint. This package does not
import Great Expectations, pandas or pyarrow.

>>> from er_expectations.config import load_suite, load_checkpoint, load_any
"""

from __future__ import annotations

from .checkpoint import (
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
from .errors import ConfigError, ConfigIssue
from .loading import load_any
from .scaffold import scaffold_checkpoint, scaffold_suite
from .schema import (
    COMMON_PARAMS,
    AtLeastOneOf,
    ExpectationSpec,
    NotGreaterThan,
    ParamSpec,
    Registry,
    RequiredWhen,
    default_registry,
    make_registry,
)
from .suite import ExpectationConfig, SuiteConfig, load_suite, load_suites

__all__ = [
    "COMMON_PARAMS",
    "ActionConfig",
    "AtLeastOneOf",
    "BenchmarkSource",
    "CheckpointConfig",
    "ConfigError",
    "ConfigIssue",
    "DataSources",
    "ExpectationConfig",
    "ExpectationSpec",
    "NameSpec",
    "NotGreaterThan",
    "ParamSpec",
    "PredictionsSource",
    "Registry",
    "ReleaseFile",
    "RequiredWhen",
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
]
