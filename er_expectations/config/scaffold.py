"""Starting points for ``er-expectations init``: suite and checkpoint files as YAML text.

The text is written line by line, with comments that explain each part; every value
is quoted when YAML would otherwise read it as something else. What these functions
return loads without errors (given files that exist, for a checkpoint).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ruamel.yaml.error import YAMLError

from er_expectations.config.yamlnodes import read_yaml

__all__ = ["double_quoted", "scaffold_checkpoint", "scaffold_suite", "yaml_scalar"]

_QUOTE_CHARACTERS = set("?#:{}[],&*!|>'\"%@`\\\t\n")


def yaml_scalar(value: object) -> str:
    """``value`` as a YAML scalar that reads back as the same value (quoted when needed)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        return text if "." in text or "e" in text else f"{text}.0"
    text = str(value)
    if _plain_is_safe(text):
        return text
    return double_quoted(text)


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar, escaping what YAML cannot hold verbatim."""
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            parts.append("\\" + char)
        elif (
            0x20 <= code <= 0x7E
            or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
            or 0xE000 <= code <= 0xFFFD
            or code >= 0x10000
        ):
            parts.append(char)
        elif code <= 0xFF:
            parts.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            parts.append(f"\\u{code:04x}")
        else:  # pragma: no cover - astral code points are printable and kept above
            parts.append(f"\\U{code:08x}")
    parts.append('"')
    return "".join(parts)


def _plain_is_safe(text: str) -> bool:
    if not text or text != text.strip() or _QUOTE_CHARACTERS & set(text) or text[0] in "-?":
        return False
    try:
        return read_yaml(text) == text
    except YAMLError:
        return False


def _comment_lines(text: str | None, *, indent: str = "  ", width: int = 92) -> list[str]:
    """``text`` as YAML comment lines (wrapped at ``width``; line breaks become spaces)."""
    if not text:
        return []
    words = " ".join(text.split()).split(" ")
    lines: list[str] = []
    current = ""
    for word in words:
        if current and len(indent) + 2 + len(current) + 1 + len(word) > width:
            lines.append(f"{indent}# {current}")
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(f"{indent}# {current}")
    return lines


def _flow_list(values: Sequence[object]) -> str:
    return "[" + ", ".join(yaml_scalar(value) for value in values) + "]"


def scaffold_suite(
    *,
    name: str,
    prediction_column: str,
    reference_column: str | None = None,
    name_column: str | None = None,
    description: str | None = None,
    record_id_column: str | None = None,
    draws_column: str | None = None,
    weights_column: str | None = None,
    benchmark_notes: Mapping[str, str] | None = None,
    releases: int = 1,
) -> str:
    """A suite file for a clustering in ``prediction_column``.

    Summary statistics are always included; homonymy and name variation when
    ``name_column`` is given; benchmark-based estimates when ``reference_column`` is.
    The thresholds are placeholders marked for review. ``draws_column`` names the
    benchmark's column of draws per true cluster (SPEC 2.2) and ``weights_column`` its
    column of weights w_c (a design that is not recomputed on each release, SPEC 2.1, 12.3;
    without it the size design ``cluster_size``); ``benchmark_notes`` holds, for the keys
    ``"draws_column"`` and ``"weights"``, the comment written above each (why it was chosen).
    With ``releases`` of 2 or more, the drift checks against the previous release (SPEC 10)
    are included: a team that publishes releases over time is alerted when one moves.
    """
    lines = [
        "# Expectation suite written by `er-expectations init`.",
        "# Review every threshold: they are placeholders, not recommendations. Each entry",
        "# may carry a `note:` for auditors and a `severity:` (critical, warning or info).",
        f"suite: {yaml_scalar(name)}",
        f"description: {yaml_scalar(description or f'Entity-resolution checks of {prediction_column}')}",
        "defaults:  # inherited by every expectation that takes the parameter",
        f"  prediction_column: {yaml_scalar(prediction_column)}",
    ]
    if record_id_column is not None:
        lines.append(f"  record_id_column: {yaml_scalar(record_id_column)}  # duplicated records are an error")
    if reference_column is not None:
        notes = benchmark_notes or {}
        lines.append(f"  reference_column: {yaml_scalar(reference_column)}")
        lines += _comment_lines(notes.get("weights"))
        if weights_column is None:
            lines.append("  weights: cluster_size  # benchmark drawn record by record; or uniform, or {column: <weights>}")
        else:
            lines.append(f"  weights: {{column: {yaml_scalar(weights_column)}}}")
        if draws_column is not None:
            lines += _comment_lines(notes.get("draws_column"))
            lines.append(f"  draws_column: {yaml_scalar(draws_column)}")
        lines.append("  ci_level: 0.95")
    if name_column is not None:
        lines.append(f"  name_column: {yaml_scalar(name_column)}")
    lines += [
        "expectations:",
        "  # Summary statistics of the predicted clustering",
        "  - expectation: expect_average_cluster_size_to_be_between",
        "    min_value: 1.0",
        "    max_value: .inf",
        "    severity: warning",
        "  - expectation: expect_matching_rate_to_be_between",
        "    min_value: 0.0",
        "    max_value: 1.0",
        "    severity: warning",
        "  - expectation: expect_hill_number_to_be_between",
        "    q: 2",
        "    min_value: 1.0",
        "    severity: info",
    ]
    if name_column is not None:
        lines += [
            "  - expectation: expect_homonymy_rate_to_be_between",
            "    max_value: 1.0",
            "    severity: info",
            "  - expectation: expect_name_variation_rate_to_be_between",
            "    max_value: 1.0",
            "    severity: info",
        ]
    if reference_column is not None:
        lines += [
            "  # Performance estimated from the benchmark",
            "  - expectation: expect_estimated_pairwise_precision_to_be_between",
            "    min_value: 0.8",
            "    bound: estimate  # or interval: the whole confidence interval must pass",
            '    note: "Placeholder threshold: agree on it with the release owner."',
            "  - expectation: expect_estimated_pairwise_recall_to_be_between",
            "    min_value: 0.8",
            '    note: "Placeholder threshold: agree on it with the release owner."',
            "  - expectation: expect_estimated_b_cubed_f_to_be_between",
            "    min_value: 0.8",
            "    beta: 1.0",
            "  # The prediction's statistics against the benchmark estimate of the true ones",
        ]
        statistics = ["average_cluster_size", "matching_rate"]
        if name_column is not None:
            statistics += ["homonymy_rate", "name_variation_rate"]
        for statistic in statistics:
            lines += [
                "  - expectation: expect_statistic_to_match_benchmark_estimate",
                f"    statistic: {statistic}",
                "    severity: warning",
            ]
    if releases >= 2:
        lines += [
            "  # Drift against the previous release (SPEC 10), on the records both hold; the first",
            "  # release has no previous one and is skipped",
            "  - expectation: expect_statistic_change_to_be_below",
            "    statistic: average_cluster_size",
            "    max_relative_change: 0.15",
            "    severity: warning",
            '    note: "Placeholder limit: set it between the changes of stable releases and those of '
            'algorithm changes."',
        ]
        if reference_column is not None:
            lines += [
                "  - expectation: expect_estimate_change_to_be_below",
                "    metric: pairwise_recall",
                "    max_change: 0.03",
                "    severity: warning",
                '    note: "Placeholder limit: the change of estimated recall, both releases on the same '
                'draws (paired)."',
            ]
    return "\n".join(lines) + "\n"


def scaffold_checkpoint(
    *,
    name: str,
    records_path: str,
    id_column: str,
    suites: Sequence[str],
    predictions_path: str | None = None,
    prediction_columns: str | Sequence[str] | None = None,
    prediction_files: Mapping[str, str] | None = None,
    prediction_column: str | None = None,
    benchmark_path: str | None = None,
    reference_column: str | None = None,
    benchmark_id_column: str | None = None,
    name_columns: Sequence[str] = (),
    name_separator: str = " ",
    name_output_column: str = "full_name",
    project_dir: str = "../gx_project",
    suite_paths: Sequence[str] | None = None,
    build_data_docs: bool = True,
    benchmark_note: str | None = None,
) -> str:
    """A checkpoint file; paths are written as given (relative to the checkpoint's folder).

    Give either ``predictions_path`` (one wide file, with ``prediction_columns`` a glob
    or a list of its release columns) or ``prediction_files`` (release label -> file,
    each holding ``prediction_column``). The id column is the same in every file unless
    ``benchmark_id_column`` says otherwise. ``benchmark_note`` is a comment written under
    ``benchmark:`` (which of its columns the suite uses, and how they reach the batches).
    """
    if (predictions_path is None) == (prediction_files is None):
        raise ValueError("give exactly one of predictions_path and prediction_files")
    if prediction_files is not None and prediction_column is None:
        raise ValueError("prediction_files needs prediction_column")
    if (benchmark_path is None) != (reference_column is None):
        raise ValueError("benchmark_path and reference_column go together")
    if not suites:
        raise ValueError("name at least one suite")
    lines = [
        "# Checkpoint written by `er-expectations init`.",
        "# Relative paths are resolved against the folder of this file.",
        f"checkpoint: {yaml_scalar(name)}",
        f"project_dir: {yaml_scalar(project_dir)}  # the Great Expectations project",
        "data:",
        f"  records: {{path: {yaml_scalar(records_path)}, id_column: {yaml_scalar(id_column)}}}",
        "  predictions:",
    ]
    if predictions_path is not None:
        lines += [
            f"    path: {yaml_scalar(predictions_path)}",
            f"    id_column: {yaml_scalar(id_column)}",
        ]
        if isinstance(prediction_columns, str):
            lines.append(
                f"    columns: {double_quoted(prediction_columns)}"
                "  # one column per release (glob or list)"
            )
        elif prediction_columns is not None:
            lines.append(f"    columns: {_flow_list(list(prediction_columns))}")
    else:
        if not (prediction_files is not None):  # invariant, kept under python -O
            raise RuntimeError("er-expectations internal error: expected prediction_files is not None")
        lines.append("    files:  # release label: file")
        lines += [
            f"      {double_quoted(str(label))}: {yaml_scalar(path)}"
            for label, path in prediction_files.items()
        ]
        lines += [
            f"    id_column: {yaml_scalar(id_column)}",
            f"    prediction_column: {yaml_scalar(prediction_column)}",
        ]
    if benchmark_path is not None:
        lines += [
            "  benchmark:",
            f"    path: {yaml_scalar(benchmark_path)}",
            f"    id_column: {yaml_scalar(benchmark_id_column or id_column)}",
            f"    reference_column: {yaml_scalar(reference_column)}",
        ]
        lines += _comment_lines(benchmark_note, indent="    ")
    if name_columns:
        lines += [
            "  name:  # the name column is built from these record columns",
            f"    columns: {_flow_list(list(name_columns))}",
            f"    separator: {double_quoted(name_separator)}",
        ]
        if name_output_column != "full_name":
            lines.append(f"    output_column: {yaml_scalar(name_output_column)}")
    lines += [
        "releases: all  # or a list of release labels / prediction columns",
        f"suites: {_flow_list(list(suites))}",
    ]
    if suite_paths is not None:
        lines.append(f"suite_paths: {_flow_list(list(suite_paths))}")
    if build_data_docs:
        lines += ["actions:", "  - build_data_docs"]
    return "\n".join(lines) + "\n"
