"""What a checkpoint run found: one outcome per release, the run report and its printed summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from er_expectations.core.severity import Status, status_of, worst_status
from er_expectations.gx.outcome import ExpectationOutcome


@dataclass(slots=True)
class ReleaseOutcome:
    """What GX found on one release, all suites of the checkpoint together."""

    label: str
    key: str
    gx_checkpoint: str
    evaluated: int = 0
    successful: int = 0
    failed: int = 0
    expectations: list[ExpectationOutcome] = field(default_factory=list)
    result_files: list[Path] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    #: What was read, by what and when (:mod:`er_expectations.run.provenance`).
    provenance: dict[str, Any] | None = None

    @property
    def errors(self) -> list[ExpectationOutcome]:
        """Expectations that raised (could not be computed), whatever their severity."""
        return [e for e in self.expectations if e.error]

    @property
    def failures(self) -> list[ExpectationOutcome]:
        """Every failed expectation that did not raise, whatever its severity (a skipped check whose
        suite says ``on_skip: fail`` included)."""
        return [e for e in self.expectations if e.status == "failed"]

    @property
    def skipped(self) -> list[ExpectationOutcome]:
        """Expectations that were not evaluated (SPEC 13), each with its reason: never counted as passed."""
        return [e for e in self.expectations if e.status == "skipped"]

    @property
    def passed(self) -> int:
        """How many expectations were evaluated and passed (skipped ones are not)."""
        return sum(e.status == "passed" for e in self.expectations)

    @property
    def critical_failures(self) -> list[ExpectationOutcome]:
        """Failed expectations of severity ``critical``: these fail the release."""
        return [e for e in self.failures if e.severity == "critical"]

    @property
    def warnings(self) -> list[ExpectationOutcome]:
        """Failed expectations of severity ``warning`` or ``info``: reported, not failing."""
        return [e for e in self.failures if e.severity != "critical"]

    @property
    def status(self) -> Status:
        """``failed``, ``error``, ``warnings`` or ``passed`` by the severity rule (:mod:`er_expectations.core.severity`)."""
        return status_of(critical_failed=len(self.critical_failures), errors=len(self.errors),
                         warnings_failed=len(self.warnings))

    @property
    def success(self) -> bool:
        """True when no critical expectation failed and no expectation raised."""
        return self.status in ("passed", "warnings")


@dataclass(slots=True)
class RunReport:
    """The outcome of :func:`run_checkpoint`."""

    checkpoint: str
    checkpoint_path: Path
    project_dir: Path
    run_name: str
    run_time: datetime
    suites: tuple[str, ...]
    releases: list[ReleaseOutcome] = field(default_factory=list)
    data_docs_index: Path | None = None
    elapsed: float = 0.0
    #: What became of each alert action (sent, not needed, or not delivered and why).
    alerts: list[Any] = field(default_factory=list)
    #: What one batch is: a "release", or the "labels file" of a labelling checkpoint.
    unit: str = "release"

    #: One line on the history store (``None`` when disabled); ``history_problem`` when it
    #: could not be written (the results and Data Docs are kept; exit code 6).
    history: str | None = None
    history_problem: str | None = None
    #: Why the Data Docs are not complete (a page or the index could not be written: full disk,
    #: read-only folder); the results and history are kept (exit code 8).
    data_docs_problem: str | None = None
    #: The run's provenance (:mod:`er_expectations.run.provenance`), without the release part.
    provenance: dict[str, Any] | None = None

    @property
    def status(self) -> Status:
        """The worst status of its releases (``passed`` for none)."""
        return worst_status(r.status for r in self.releases)

    @property
    def success(self) -> bool:
        """True when every release passed all its critical expectations and none raised."""
        return all(r.success for r in self.releases)

    @property
    def errors(self) -> list[str]:
        """Expectations that raised, one line each (``release: label (severity): error: ...``)."""
        return [f"{r.label}: {e.describe()}" for r in self.releases for e in r.errors]

    @property
    def failed_releases(self) -> list[ReleaseOutcome]:
        return [r for r in self.releases if not r.success]

    @property
    def warnings(self) -> list[str]:
        """Failed expectations of severity warning or info, one line each (not failures)."""
        return [f"{r.label}: {e.describe()}" for r in self.releases for e in r.warnings]

    @property
    def skipped(self) -> list[str]:
        """Expectations that were not evaluated, one line each with the reason (SPEC 13)."""
        return [f"{r.label}: {e.label} ({e.severity}): {e.skipped}" for r in self.releases for e in r.skipped]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (for scripts and tests)."""
        return {
            "checkpoint": self.checkpoint,
            "project_dir": str(self.project_dir),
            "run_name": self.run_name,
            "run_time": self.run_time.isoformat(),
            "success": self.success,
            "status": self.status,
            "data_docs_index": str(self.data_docs_index) if self.data_docs_index else None,
            "history": self.history,
            "history_problem": self.history_problem,
            "data_docs_problem": self.data_docs_problem,
            "provenance": self.provenance,
            "releases": [
                {
                    "label": r.label,
                    "success": r.success,
                    "status": r.status,
                    "evaluated": r.evaluated,
                    "passed": r.passed,
                    "successful": r.successful,
                    "failed": r.failed,
                    "skipped": [{"label": e.label, "severity": e.severity, "reason": e.skipped}
                                for e in r.skipped],
                    "critical_failures": [e.label for e in r.critical_failures],
                    "release_table": (r.provenance or {}).get("release", {}).get("table"),
                    "errors": [e.describe() for e in r.errors],
                    "warnings": [e.describe() for e in r.warnings],
                }
                for r in self.releases
            ],
            "alerts": [alert.to_dict() for alert in self.alerts],
        }

    def summary_table(self) -> str:
        """One line per release: passed/checks, status, skipped, failed critical and other checks."""
        head = (self.unit, "passed", "status", "skipped", "failed critical", "errors", "failed warning/info")
        shown = {"passed": "ok", "warnings": "ok (warnings)", "failed": "FAILED", "error": "ERROR"}
        rows = [
            (
                r.label,
                f"{r.passed}/{r.evaluated}",
                shown[r.status],
                str(len(r.skipped)) if r.skipped else "-",
                ", ".join(e.label for e in r.critical_failures) or "-",
                ", ".join(e.label for e in r.errors) or "-",
                ", ".join(e.label for e in r.warnings) or "-",
            )
            for r in self.releases
        ]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head[:-1])]
        lines = []
        for row in (head, *rows):
            cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
        return "\n".join(lines)


def print_summary(report: RunReport, out: TextIO) -> None:
    print("", file=out)
    print(report.summary_table(), file=out)
    print("", file=out)
    total = len(report.releases)
    failed = report.failed_releases
    errored = [r for r in failed if r.status == "error"]
    failed = [r for r in failed if r.status == "failed"]
    if failed or errored:
        bits = []
        if failed:
            bits.append(f"{len(failed)} failed a critical expectation: {', '.join(r.label for r in failed)}")
        if errored:
            bits.append(f"{len(errored)} had expectations that could not be computed: "
                        f"{', '.join(r.label for r in errored)}")
        passed = total - len(failed) - len(errored)
        print(f"{passed} of {total} {report.unit}(s) passed; " + "; ".join(bits) + ".", file=out)
    else:
        print(f"All {total} {report.unit}(s) passed every critical expectation.", file=out)
    for line in report.errors:
        print(f"error: {line}", file=out)
    skipped = report.skipped
    if skipped:
        print(f"{len(skipped)} expectation(s) skipped (not evaluated, not counted as passed):", file=out)
        for line in skipped:
            print(f"  skipped: {line}", file=out)
    warnings = report.warnings
    if warnings:
        print(
            f"{len(warnings)} warning/info expectation(s) failed (reported, not failing the run).",
            file=out,
        )
    if report.history is not None:
        print(report.history, file=out)
    if report.data_docs_problem is not None:
        print(f"Data Docs NOT complete: {report.data_docs_problem}", file=out)
    elif report.data_docs_index is not None:
        print(f"Data Docs: {report.data_docs_index}", file=out)
    else:
        results = report.project_dir / "gx" / "uncommitted" / "validations"
        print(f"Validation results: {results.resolve()}", file=out, flush=True)


def print_done(report: RunReport, out: TextIO) -> None:
    """The run's last line, after the alerts."""
    print(f"Done in {report.elapsed:.1f} s.", file=out, flush=True)
