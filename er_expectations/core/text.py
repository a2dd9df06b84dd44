"""Plain-English sentences and numbers for reports (Data Docs, CLI, alerts).

Pure string formatting, no GX: the renderers call these so that every place that shows
an expectation or a result says it the same way. Nothing here escapes HTML; the caller
escapes (Data Docs) or prints (terminal).
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = [
    "design_kind",
    "fmt_interval",
    "fmt_number",
    "fmt_p",
    "fmt_threshold",
    "format_number",
    "observed_estimate",
    "printable",
    "range_phrase",
    "redact_credentials",
    "runs_as_formula",
    "short_name",
    "spreadsheet_safe",
    "without_local_paths",
]

#: What a spreadsheet reads as the start of a formula (OWASP "CSV injection"): =, +, -, @, tab, CR.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def runs_as_formula(text: str) -> bool:
    """Whether a spreadsheet would run a CSV cell holding ``text`` (a number such as -5 it reads as a number)."""
    if not text.startswith(_FORMULA_START):
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def spreadsheet_safe(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: ``'=1+1`` for ``=1+1`` (the apostrophe marks text);
    anything else unchanged. The one rule of every CSV file people open (diffs, worksheets)."""
    return "'" + text if runs_as_formula(text) else text


#: An absolute local path in a message: a "/" not inside a word or a web address, then at least
#: one more path part (``/tmp/x/y.json``, ``/home/me/project``), or a Windows drive path.
_LOCAL_PATH = re.compile(r"(?<![\w.:/~>-])/(?:[^\s'\"/:<>|]+/)+[^\s'\",;:<>|)]*|\b[A-Za-z]:\\[^\s'\",;<>|]*")


#: Terminal escape sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL | ESC \\``), DCS/PM/APC
#: strings, and any other two-character ``ESC x``; their 8-bit C1 forms too.
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
                      r"|(?:\x1b[\]PX^_]|[\x90\x9d\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                      r"|\x1b[\s\S]?")


def printable(text: object, *, limit: int | None = 300) -> str:
    """``text`` safe to print on a terminal and to store: terminal escape sequences removed, every
    other control or invisible formatting character (bidi overrides, zero-width, line separators) a
    space, runs of white space one space, and at most ``limit`` characters (cut with "…").

    For text that comes from elsewhere, such as a server's reply to an alert (hostile round 3,
    item 6); mask secrets before cutting (``limit=None``), so no piece of one survives the cut."""
    shown = _ESCAPES.sub("", str(text))
    shown = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") else c
                    for c in shown)
    shown = " ".join(shown.split())
    if limit is not None and len(shown) > limit:
        shown = shown[:max(limit - 1, 0)].rstrip() + "…"
    return shown


#: What reads as a credential in a reply: ``Bearer <x>``, or a key such as token, password or api_key
#: followed by ``=`` or ``:`` and its value.
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"'<>,;&]+")
_KEYED = re.compile(r"(?i)\b((?:access_|refresh_|auth_|id_)?token|api[_-]?key|apikey|secret|client_secret|password|"
                    r"passwd|pwd|signature|sig|authorization|x-api-key|webhook_url)"
                    r"(\"?\s*[:=]\s*\"?)([^\s\"'<>,;&]+)")


def redact_credentials(text: str) -> str:
    """``text`` with what reads as a credential replaced by ``***`` (``Bearer ***``, ``token=***``,
    ``"password": "***"``), whatever its value: for text that may echo one nobody named as secret."""
    text = _BEARER.sub(lambda m: f"{m.group(1)} ***", text)
    return _KEYED.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def without_local_paths(text: str, *, project_dir: str | None = None) -> str:
    """``text`` with no absolute path of this machine: a path inside ``project_dir`` becomes
    ``<project>/...`` (relative to the project), any other becomes ``<local path>``. Web
    addresses (``https://host/path``) are kept. For what leaves the machine or is stored for
    others: alert errors in the history store (issue 18, item 12)."""
    if project_dir:
        root = str(project_dir).rstrip("/")
        real = os.path.realpath(root)
        for prefix in dict.fromkeys((root, real)):
            if prefix and prefix != "/":
                text = re.sub(re.escape(prefix) + r"(?=/|\b|$)", "<project>", text)
    return _LOCAL_PATH.sub("<local path>", text)


def fmt_q(q: float | None) -> str:
    if q is None:
        return "?"
    if math.isinf(q):
        return "∞"
    return f"{q:g}"


def _q_text(value: object) -> str:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    return "inf" if math.isinf(number) else f"{number:g}"


def short_name(kind: str, kwargs: Mapping[str, Any], *, what: str | None = None) -> str:
    """A check's short name for tables, from its type: ``pairwise_precision``, ``hill_number(q=2)``.

    ``what`` (a statistic or metric a check compares) replaces the name taken from the type.
    """
    label = what if what is not None else (
        kind.removeprefix("expect_").removeprefix("estimated_").removesuffix("_to_be_between"))
    if label == "hill_number" and "q" in kwargs:
        label = f"hill_number(q={_q_text(kwargs['q'])})"
    return label


def fmt_number(x: float | None, digits: int = 3) -> str:
    """A number for people: 3 decimals for rates, thousands separators for counts, '—' for none."""
    if x is None:
        return "—"
    x = float(x)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x.is_integer() and abs(x) >= 100:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.1f}"
    return f"{x:.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p-value for people: '< 0.001' below 0.001 (never '0.000'), else 3 decimals; '—' for none."""
    if p is None or math.isnan(float(p)):
        return "—"
    return "< 0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def format_number(value: float) -> str:
    """A number as a person would write it in a file: ``0.95``, ``2``, ``inf``."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:g}" if abs(value) >= 1e-4 else repr(value)


def fmt_level(ci_level: float) -> str:
    return f"{ci_level * 100:g} %"


def fmt_interval(lo: float, hi: float, digits: int = 3) -> str:
    return f"{fmt_number(lo, digits)}–{fmt_number(hi, digits)}"


def fmt_threshold(value: float, digits: int = 3) -> str:
    """A threshold as the user wrote it (0.75, not 0.750; 12,000)."""
    v = float(value)
    return f"{int(v):,}" if v.is_integer() and abs(v) >= 1000 else f"{v:.{digits + 3}g}"


def range_phrase(min_value: float | None, max_value: float | None, digits: int = 3) -> str:
    """'is between 0.85 and 0.95', 'is at least 0.9', 'is at most 12'."""
    has_min = min_value is not None and not (isinstance(min_value, float) and math.isinf(min_value))
    has_max = max_value is not None and not (isinstance(max_value, float) and math.isinf(max_value))
    if has_min and has_max:
        return f"is between {fmt_threshold(min_value, digits)} and {fmt_threshold(max_value, digits)}"
    if has_min:
        return f"is at least {fmt_threshold(min_value, digits)}"
    if has_max:
        return f"is at most {fmt_threshold(max_value, digits)}"
    return "is reported (no bounds set)"


def design_kind(weights: object) -> str:
    """Adjective for the benchmark design: 'size-proportional', 'uniformly sampled', 'weighted'."""
    if isinstance(weights, Mapping) or weights not in (None, "cluster_size", "uniform"):
        return "weighted"
    return "uniformly sampled" if weights == "uniform" else "size-proportional"


#: How an interval of each method (SPEC 6) is named next to its limits.
CI_KINDS = {"linearization": "CI", "logit": "logit CI", "bootstrap": "bootstrap CI", "bca": "BCa bootstrap CI",
            "studentized": "studentised bootstrap CI", "bca_mover": "BCa MOVER CI",
            "hull": "hull CI"}


def observed_estimate(estimate: float, std_error: float, ci_lower: float, ci_upper: float, *,
                      ci_level: float, clusters: int, draws: int | None = None, digits: int = 3,
                      interval: str = "linearization") -> str:
    """'0.913 ± 0.019 (95 % CI 0.876–0.950, 401 clusters)'; explicit when no error is available.

    ``interval`` names where the interval comes from (SPEC 6): a bootstrap interval reads
    '95 % bootstrap CI'; a sample without errors (``zero_event``) shows its binomial
    interval instead of a zero standard error.
    """
    if estimate is None or math.isnan(estimate):
        return f"undefined ({clusters} clusters)"
    count = f"{clusters:,} clusters" if draws is None or draws == clusters else f"{clusters:,} clusters, {draws:,} draws"
    ci = fmt_interval(ci_lower, ci_upper, digits)
    if interval == "zero_event":
        return (f"{fmt_number(estimate, digits)} (no variation in the sample; {fmt_level(ci_level)} CI {ci} "
                f"from the number of draws, {count})")
    if std_error is None or math.isnan(std_error):
        return f"{fmt_number(estimate, digits)} (no standard error, {count})"
    kind = CI_KINDS.get(interval, "CI")
    return (f"{fmt_number(estimate, digits)} ± {fmt_number(std_error, digits)} "
            f"({fmt_level(ci_level)} {kind} {ci}, {count})")
