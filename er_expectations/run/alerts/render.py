"""The content of an alert: one message per checkpoint run, rendered for Slack, Teams, e-mail, JSON.

:func:`build_message` turns a run (the :class:`~.runner.RunReport` and the validation results
the run stored) into an :class:`AlertMessage`: the checkpoint, the releases that failed, their
failed checks with the observed value and what was expected (the expectation's own sentence,
as Data Docs shows it), and the Data Docs pages (under ``build_data_docs: {base_url: ...}``
when the site is published, else the local files).

The renderers are subclasses of GX's own (``SlackRenderer``, ``MicrosoftTeamsRenderer``,
``EmailRenderer``), so that GX's notification actions send them; the content is ours and is
made safe for each format: Slack's ``&``, ``<``, ``>`` escaped (no ``<!channel>`` or forged
links from a release label), Teams text as plain ``TextRun``s (never read as markdown), e-mail
HTML through an autoescaping Jinja template, JSON through ``json.dumps(allow_nan=False)``; only
http(s) URLs become links.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

from great_expectations.render.renderer import (
    EmailRenderer,
    MicrosoftTeamsRenderer,
    SlackRenderer,
)
from great_expectations.render.renderer.renderer import Renderer

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.run.report import RunReport

__all__ = [
    "AlertMessage",
    "ErEmailRenderer",
    "ErSlackRenderer",
    "ErTeamsRenderer",
    "ErWebhookRenderer",
    "FailedCheck",
    "ReleaseAlert",
    "build_message",
    "message_from_results",
]

#: At most this many releases and checks per release are listed (the rest are counted).
MAX_RELEASES = 20
MAX_CHECKS = 10
_SLACK_SECTION = 2900  # Slack refuses a section text over 3000 characters
_STATUS_WORDS = {"failed": "failed", "error": "could not be fully checked",
                 "warnings": "passed with warnings", "passed": "passed"}


@dataclass(frozen=True)
class FailedCheck:
    """A critical check that failed, or a check that could not be computed, on one release."""

    check: str
    expectation: str
    suite: str
    severity: str
    observed: Any  # JSON-safe: a number, text, a list/mapping, or None
    observed_text: str
    expected: str
    error: str | None = None

    def line(self) -> str:
        """``pairwise_recall (critical): observed 0.897 ± 0.007 (...); expected: ...``"""
        if self.error:
            return f"{self.check} ({self.severity}): could not be computed: {self.error}"
        return f"{self.check} ({self.severity}): observed {self.observed_text}; expected: {self.expected}"


@dataclass(frozen=True)
class ReleaseAlert:
    """A release that failed (or could not be fully checked)."""

    label: str
    status: str
    evaluated: int
    successful: int
    checks: tuple[FailedCheck, ...]
    other_failed: int  # failed warning/info checks, not listed
    pages: tuple[str, ...]
    skipped: int = 0  # checks not evaluated (SPEC 13): not counted in ``successful``

    def heading(self) -> str:
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        return f"{self.label}: {_STATUS_WORDS.get(self.status, self.status)} " \
               f"({self.successful} of {self.evaluated} checks passed{skipped})"


@dataclass(frozen=True)
class AlertMessage:
    """Everything a message about one checkpoint run says (format-neutral)."""

    checkpoint: str
    status: str
    success: bool
    run_name: str
    run_time: str
    total_releases: int
    releases: tuple[ReleaseAlert, ...]
    warning_releases: tuple[str, ...]
    data_docs: str | None
    results_folder: str | None
    #: Checks not evaluated over the whole run (SPEC 13): listed in the report, never counted as passed.
    skipped_checks: int = 0

    def skipped_line(self) -> str | None:
        """``3 checks were skipped (not evaluated) ...`` or None."""
        if not self.skipped_checks:
            return None
        return (f"{self.skipped_checks} check{'s were' if self.skipped_checks != 1 else ' was'} skipped (not "
                "evaluated, not counted as passed): see the run report or Data Docs for the reasons")
    #: The project folder: local paths are shown relative to it in a webhook's JSON (not sent).
    project_dir: str | None = field(default=None, compare=False)

    @property
    def title(self) -> str:
        """One line: ``toy: 1 of 3 releases failed`` or ``toy: all 3 releases passed``."""
        n = self.total_releases
        if self.releases:
            failed = sum(r.status == "failed" for r in self.releases)
            errored = len(self.releases) - failed
            releases = f"of {n} release{'s' if n != 1 else ''}"
            bits = []
            if failed:
                bits.append(f"{failed} {releases} failed")
            if errored:
                bits.append(f"{errored} {'' if failed else releases + ' '}could not be fully checked")
            return f"{self.checkpoint}: " + ", ".join(bits)
        if self.warning_releases:  # GX's "failure" (a check failed); no release failed a critical check
            w = len(self.warning_releases)
            return (f"{self.checkpoint}: warning/info checks failed on {w} of {n} release{'s' if n != 1 else ''}"
                    " (no critical check failed)")
        return f"{self.checkpoint}: all {n} release{'s' if n != 1 else ''} passed"

    def release_lines(self, release: ReleaseAlert) -> list[str]:
        """The failed checks of a release, one line each (at most :data:`MAX_CHECKS`)."""
        lines = [check.line() for check in release.checks[:MAX_CHECKS]]
        if len(release.checks) > MAX_CHECKS:
            lines.append(f"... and {len(release.checks) - MAX_CHECKS} more failed checks")
        if release.other_failed:
            lines.append(f"{release.other_failed} warning/info check(s) failed too (not failing)")
        return lines

    def more_releases(self) -> int:
        return max(0, len(self.releases) - MAX_RELEASES)

    def text(self) -> str:
        """The whole message as plain text."""
        out = [f"er-expectations: {self.title}", f"Checkpoint '{self.checkpoint}', run {self.run_time}"]
        for release in self.releases[:MAX_RELEASES]:
            out.append("")
            out.append(release.heading())
            out.extend(f"  - {line}" for line in self.release_lines(release))
            out.extend(f"  Data Docs: {page}" for page in release.pages)
        if self.more_releases():
            out.append(f"... and {self.more_releases()} more releases failed")
        if self.warning_releases:
            out.append("")
            out.append("Passed with failed warning/info checks: " + ", ".join(self.warning_releases))
        if self.skipped_line():
            out.append("")
            out.append(str(self.skipped_line()))
        out.append("")
        if self.data_docs:
            out.append(f"Data Docs: {self.data_docs}")
        elif self.results_folder:
            out.append(f"Validation results: {self.results_folder}")
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        """The generic webhook's body (docs/run-report.md): JSON-safe (no NaN,
        no infinity), with no local absolute path: a page or folder on this machine is given
        relative to the project folder (a web address under ``base_url`` as it is)."""
        safe = replace(self, data_docs=self._shared(self.data_docs), results_folder=self._shared(self.results_folder),
                       releases=tuple(replace(r, pages=tuple(p for p in map(self._shared, r.pages) if p))
                                      for r in self.releases))
        body = {
            "schema": WEBHOOK_SCHEMA,
            "version": WEBHOOK_VERSION,
            "source": "er-expectations",
            "title": safe.title,
            **{k: v for k, v in asdict(safe).items() if k != "project_dir"},
            "text": safe.text(),
        }
        return _json_safe(body)

    def _shared(self, location: str | None) -> str | None:
        """``location`` as a webhook may carry it: a web address, or a path relative to the project."""
        if location is None or _is_web(location):
            return location
        text = str(location)
        path = Path(url2pathname(urlsplit(text).path)) if text.startswith("file:") else Path(text)
        if not path.is_absolute():
            return path.as_posix()
        if self.project_dir is not None:
            try:
                return path.resolve().relative_to(Path(self.project_dir).resolve()).as_posix()
            except ValueError:
                pass
        return None  # a place on this machine outside the project: not sent


#: The webhook's JSON document (docs/run-report.md): its schema name and version.
WEBHOOK_SCHEMA = "er-expectations/alert"
WEBHOOK_VERSION = 2  # 2: evaluated leaves skipped checks out; the title names warning-only runs (issue 29)


# -- from the run -------------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v) for v in value]
    number = getattr(value, "item", None)  # numpy scalars
    if callable(number):
        try:
            return _json_safe(number())
        except (TypeError, ValueError):
            pass
    return str(value)


def _observed_text(evr: Any) -> str:
    from er_expectations.gx.docs.render import result_details

    text = result_details(evr).get("observed_text")
    if text:
        return str(text)
    observed = (evr.result or {}).get("observed_value") if evr.result else None
    if isinstance(observed, float):
        from er_expectations.core.text import fmt_number

        return fmt_number(observed)
    return "—" if observed is None else str(observed)


def expected_sentence(config: Any) -> str:
    """What the check requires, as the expectation's Data Docs sentence says it (plain text)."""
    from great_expectations.expectations.registry import get_expectation_impl

    from er_expectations.gx.docs.data_docs import plain_text
    from er_expectations.gx.docs.render import without_severity_badge

    try:
        impl = get_expectation_impl(config.type)
        blocks = impl._prescriptive_renderer(configuration=config)  # GX's legacy prescriptive view
        if not isinstance(blocks, list):
            blocks = [blocks]
        blocks = without_severity_badge(blocks)  # the alert line states the severity already
        text = " ".join(t for t in (plain_text(b) for b in blocks) if t)
    except Exception:  # noqa: BLE001 - a renderer that fails must not stop the alert
        text = ""
    if text.strip():
        return " ".join(text.split())
    kwargs = {k: v for k, v in (config.kwargs or {}).items() if k != "batch_id"}
    return f"{config.type}({', '.join(f'{k}={v!r}' for k, v in sorted(kwargs.items()))})"


def _link(location: str | Path | None, site: Path | None, base_url: str | None) -> str | None:
    """A page as the reader should open it: under ``base_url`` when given, else the local path."""
    if location is None:
        return None
    text = str(location)
    path = Path(url2pathname(urlsplit(text).path)) if text.startswith("file:") else Path(text)
    if base_url and site is not None:
        try:
            relative = path.resolve().relative_to(site.resolve())
        except ValueError:
            return text
        return base_url.rstrip("/") + "/" + quote(relative.as_posix())
    return str(path)


def _release_alert(label: str, status: str, validations: Sequence[Any],
                   pages: tuple[str, ...]) -> ReleaseAlert:
    """A release's part of the message: its failed critical checks and those that could not be
    computed, each with the observed value and the expectation's sentence; the failed
    warning/info checks counted; the checks that passed and those skipped (not evaluated, SPEC 13)
    counted apart."""
    from er_expectations.gx.outcome import outcome as read_outcome

    checks = []
    other = passed = skipped = evaluated = 0
    for validation in validations:
        suite = getattr(validation, "suite_name", None) or "?"
        for evr in validation.results:
            found = read_outcome(suite, evr)
            passed += found.status == "passed"
            skipped += found.status == "skipped"
            evaluated += found.status != "skipped"
            if found.success:
                continue
            if not found.error and found.severity != "critical":
                other += 1
                continue
            checks.append(FailedCheck(
                check=found.label, expectation=found.expectation, suite=suite,
                severity=found.severity, observed=_json_safe(found.observed),
                observed_text=_observed_text(evr), expected=expected_sentence(evr.expectation_config),
                error=found.error))
    return ReleaseAlert(label=label, status=status, evaluated=evaluated, successful=passed,
                        checks=tuple(checks), other_failed=other, pages=pages, skipped=skipped)


def _batch_label(validation: Any) -> str:
    """What a native GX result validated: its data asset (and batch identifiers), else its suite."""
    meta = getattr(validation, "meta", None) or {}
    batch = meta.get("active_batch_definition")
    asset = getattr(batch, "data_asset_name", None) or (batch.get("data_asset_name") if isinstance(batch, Mapping)
                                                        else None)
    return str(asset or getattr(validation, "suite_name", None) or "?")


def message_from_results(checkpoint: str, run_id: Any, validations: Sequence[tuple[Any, Sequence[str]]]
                         ) -> AlertMessage:
    """The message of a native GX checkpoint run, from its validation results alone (no
    :class:`RunReport`): ``validations`` holds each result with its Data Docs pages. A release
    is a data asset (results of several suites on one asset are one release); its status follows
    the severity rule (:func:`er_expectations.core.severity.status_of`)."""
    from er_expectations.core.severity import status_of
    from er_expectations.gx.outcome import outcome as read_outcome

    grouped: dict[str, list[tuple[Any, Sequence[str]]]] = {}
    for validation, pages in validations:
        grouped.setdefault(_batch_label(validation), []).append((validation, pages))
    releases, warning_only = [], []
    for label, items in grouped.items():
        found = [read_outcome(getattr(v, "suite_name", None) or "?", evr) for v, _ in items for evr in v.results]
        status = status_of(critical_failed=sum(o.status == "failed" and o.severity == "critical" for o in found),
                           errors=sum(o.status == "error" for o in found),
                           warnings_failed=sum(o.status == "failed" and o.severity != "critical" for o in found))
        if status == "warnings":
            warning_only.append(label)
        if status in ("passed", "warnings"):
            continue
        pages = tuple(dict.fromkeys(str(p) for _, urls in items for p in urls))
        releases.append(_release_alert(label, status, [v for v, _ in items], pages))
    run_time = getattr(run_id, "run_time", None)
    return AlertMessage(
        checkpoint=checkpoint, status="failed" if any(r.status == "failed" for r in releases) else
        ("error" if releases else ("warnings" if warning_only else "passed")),
        success=not releases, run_name=str(getattr(run_id, "run_name", None) or checkpoint),
        run_time=run_time.isoformat(timespec="seconds") if run_time is not None else "",
        total_releases=len(grouped), releases=tuple(releases), warning_releases=tuple(warning_only),
        data_docs=None, results_folder=None,
    )


def _pages_of(data_docs_pages: Any, identifier: Any) -> list[str]:
    """The Data Docs URLs GX's ``UpdateDataDocsAction`` reported for one result, if any."""
    if not isinstance(data_docs_pages, Mapping):
        return []
    pages = data_docs_pages.get(identifier) or {}
    return [str(url) for name, url in pages.items() if name != "class" and url] if isinstance(pages, Mapping) else []


def build_message(report: RunReport, results: Mapping[str, Sequence[Any]], *,
                  base_url: str | None = None) -> AlertMessage:
    """The message of a run: ``results`` maps each release label to its stored GX validation
    results (one per suite)."""
    site = report.data_docs_index.parent if report.data_docs_index else None
    releases = []
    warning_only = []
    for outcome in report.releases:
        if outcome.status == "warnings":
            warning_only.append(outcome.label)
        if outcome.success:
            continue
        pages = tuple(p for p in (_link(page, site, base_url) for page in outcome.pages) if p)
        releases.append(_release_alert(outcome.label, outcome.status, results.get(outcome.label, ()), pages))
    results_folder = report.project_dir / "gx" / "uncommitted" / "validations"
    return AlertMessage(
        checkpoint=report.checkpoint, status=report.status, success=report.success,
        run_name=report.run_name, run_time=report.run_time.isoformat(timespec="seconds"),
        total_releases=len(report.releases), releases=tuple(releases),
        warning_releases=tuple(warning_only),
        skipped_checks=sum(len(r.skipped) for r in report.releases),
        data_docs=_link(report.data_docs_index, site, base_url),
        results_folder=str(results_folder.resolve()), project_dir=str(report.project_dir),
    )


# -- formats ------------------------------------------------------------------------------------


def _is_web(url: str | None) -> bool:
    return bool(url) and urlsplit(str(url)).scheme in ("http", "https")


def _slack_escape(text: str) -> str:
    """Slack's three control characters (https://api.slack.com/reference/surfaces/formatting)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link(url: str, label: str) -> str:
    if _is_web(url):
        return f"<{url.replace('|', '%7C').replace('>', '%3E')}|{_slack_escape(label)}>"
    return f"{_slack_escape(label)}: `{_slack_escape(url)}`"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slack_payload(message: AlertMessage) -> dict[str, Any]:
    """Slack Block Kit message with a plain-text fallback (``text``)."""
    icon = (":rotating_light:" if not message.success else
            ":warning:" if message.warning_releases else ":white_check_mark:")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(message.title, 150)}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": _slack_escape(
            f"{icon} er-expectations, checkpoint '{message.checkpoint}', run {message.run_time}")}]},
    ]
    for release in message.releases[:MAX_RELEASES]:
        lines = [f"*{_slack_escape(release.heading())}*"]
        lines += [f"• {_slack_escape(line)}" for line in message.release_lines(release)]
        lines += [_slack_link(page, "Data Docs page") for page in release.pages]
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": _cut("\n".join(lines), _SLACK_SECTION)}})
    tail = []
    if message.more_releases():
        tail.append(f"… and {message.more_releases()} more releases failed")
    if message.warning_releases:
        tail.append(_slack_escape("Passed with failed warning/info checks: "
                                  + ", ".join(message.warning_releases)))
    if message.skipped_line():
        tail.append(_slack_escape(str(message.skipped_line())))
    if message.data_docs:
        tail.append(_slack_link(message.data_docs, "Data Docs"))
    if tail:
        blocks.append({"type": "divider"})
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": _cut("\n".join(tail), _SLACK_SECTION)}})
    # the notification text is mrkdwn too: a label such as '<!channel>' must stay text there
    return {"text": _cut(_slack_escape(message.text()), 3000), "blocks": blocks}


class ErSlackRenderer(SlackRenderer):
    """GX's Slack renderer with our message: one per checkpoint run, not a block per result.

    Given a message (``er-expectations run``), it sends that; without one (a native GX
    checkpoint: ``SlackNotificationAction(renderer={"module_name":
    "er_expectations.run.alerts.render", "class_name": "ErSlackRenderer"})``), GX hands it each
    validation result and it builds the message from them (:func:`message_from_results`).
    """

    def __init__(self, message: AlertMessage | None = None) -> None:
        super().__init__()
        self.message = message

    def render(self, validation_result: Any = None, validation_result_urls: Sequence[str] | None = None,
               **kwargs: Any) -> list[Any]:  # type: ignore[override]
        if self.message is not None or validation_result is None:
            return []  # nothing per validation result: the run's message is built once
        return [(validation_result, list(validation_result_urls or ()))]  # read back below

    def concatenate_text_blocks(self, text_blocks: Sequence[Any] = (), checkpoint_name: str = "",
                                run_id: Any = None, **kwargs: Any) -> dict:  # type: ignore[override]
        message = self.message or message_from_results(
            str(checkpoint_name), run_id, [block for block in text_blocks if isinstance(block, tuple)])
        return slack_payload(message)


def _teams_text(text: str, *, url: str | None = None, **style: Any) -> dict[str, Any]:
    """A RichTextBlock of one TextRun: plain text (a TextBlock would read a release label as
    markdown, e.g. a forged ``[link](...)``); ``url`` makes the run a link (Action.OpenUrl)."""
    run: dict[str, Any] = {"type": "TextRun", "text": text, **style}
    if url is not None:
        run["selectAction"] = {"type": "Action.OpenUrl", "url": url}
    return {"type": "RichTextBlock", "inlines": [run]}


class ErTeamsRenderer(MicrosoftTeamsRenderer):
    """GX's Microsoft Teams renderer (its Adaptive Card envelope) with our message; without one
    (a native GX checkpoint's ``MicrosoftTeamsNotificationAction``), the message of the
    ``CheckpointResult`` GX hands it (:func:`message_from_results`)."""

    def __init__(self, message: AlertMessage | None = None) -> None:
        super().__init__()
        self.message = message

    def render(self, checkpoint_result: Any = None, data_docs_pages: Any = None,  # type: ignore[override]
               **kwargs: Any) -> dict:
        message = self.message
        if message is None:
            results = [(v, _pages_of(data_docs_pages, key)) for key, v in checkpoint_result.run_results.items()]
            message = message_from_results(str(checkpoint_result.checkpoint_config.name), checkpoint_result.run_id,
                                           results)
        body: list[dict[str, Any]] = [
            _teams_text(message.title, weight="bolder", size="medium",
                        color="good" if message.success else "attention"),
            _teams_text(f"er-expectations, checkpoint '{message.checkpoint}', run {message.run_time}",
                        isSubtle=True),
        ]
        for release in message.releases[:MAX_RELEASES]:
            body.append({**_teams_text(release.heading(), weight="bolder"), "separator": True})
            body.extend(_teams_text(f"- {line}") for line in message.release_lines(release))
            for page in release.pages:
                body.append(_teams_text("Data Docs page", url=page) if _is_web(page)
                            else _teams_text(f"Data Docs page: {page}"))
        if message.more_releases():
            body.append(_teams_text(f"... and {message.more_releases()} more releases failed"))
        if message.warning_releases:
            body.append(_teams_text("Passed with failed warning/info checks: "
                                    + ", ".join(message.warning_releases)))
        if message.skipped_line():
            body.append(_teams_text(str(message.skipped_line())))
        payload = self._build_payload(blocks=body, data_docs_pages=None)
        content = payload["attachments"][0]["content"]
        if _is_web(message.data_docs):
            content["actions"] = [{"type": "Action.OpenUrl", "title": "Open Data Docs",
                                   "url": message.data_docs}]
        elif message.data_docs:
            body.append(_teams_text(f"Data Docs: {message.data_docs}"))
        return payload


class ErEmailRenderer(EmailRenderer):
    """GX's e-mail renderer with our message: ``(subject, html)``, every value HTML-escaped."""

    def __init__(self, message: AlertMessage) -> None:
        super().__init__()
        self.message = message

    def render(self, *args: Any, **kwargs: Any) -> tuple[str, str]:  # type: ignore[override]
        from jinja2 import Environment, PackageLoader

        env = Environment(loader=PackageLoader("er_expectations", "templates"), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True)
        message = self.message
        html = env.get_template("alert_email.html.j2").render(
            message=message, releases=message.releases[:MAX_RELEASES], is_web=_is_web)
        subject = "".join(ch if ch.isprintable() else " " for ch in f"[er-expectations] {message.title}")
        return _cut(subject, 200), html


class ErWebhookRenderer(Renderer):
    """The generic webhook's JSON body (:meth:`AlertMessage.to_json`)."""

    def __init__(self, message: AlertMessage) -> None:
        super().__init__()
        self.message = message

    def render(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return self.message.to_json()


def dumps(payload: Any) -> bytes:
    """A payload as strict JSON (UTF-8; NaN or infinity is a bug, not a token)."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
