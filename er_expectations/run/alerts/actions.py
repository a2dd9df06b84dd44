"""Alert actions: GX's own notification actions, sending ONE message per checkpoint run.

The runner runs one GX checkpoint per release and builds Data Docs once, so GX's actions
attached to those checkpoints would send one message per release, before the pages exist.
Instead, :func:`send_alerts` runs after the Data Docs build (and after everything else the run
saves) on ONE aggregated GX ``CheckpointResult``: every validation result of the run, with GX's
own ``success`` (false when any check failed or raised), and ``notify_on`` is decided as GX
decides it (:func:`er_expectations.core.severity.wants_notification`): one meaning for the CLI
and GX (docs/cli.md, "Outcomes").

The actions are GX's classes, configured from the checkpoint YAML (:mod:`..config.alerts`):

* :class:`ErSlackAction` — ``SlackNotificationAction`` (webhook);
* :class:`ErTeamsAction` — ``MicrosoftTeamsNotificationAction``;
* :class:`ErEmailAction` — ``EmailAction`` (GX's SMTP code, unchanged);
* :class:`ErWebhookAction` — a small ``ValidationAction``: GX 1.24's ``APINotificationAction``
  posts a list of per-result dictionaries with ``data=`` (form encoding, which ``requests``
  refuses for a list of mappings), without a timeout, so it cannot post one JSON document.

Each keeps GX's fields, ``notify_on`` and ``${VAR}`` substitution (``ConfigStr``, resolved
by GX's config provider when sending) and gets our renderer (:mod:`.alert_render`). What the
subclasses change is only the delivery's failure handling: GX posts without a timeout and
logs a failure as a warning; here the HTTP post has a timeout and a failure raises
:class:`AlertDeliveryError`, which :func:`send_alerts` prints as a warning naming the target
(secret masked). Nothing an alert does can lose the results: they, the Data Docs and the
history are written before, and the run's exit code stays that of the validation.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Dict, Literal, TextIO, Union  # noqa: UP035 - GX's pydantic v1 models

import requests
from great_expectations.checkpoint.actions import (
    EmailAction,
    MicrosoftTeamsNotificationAction,
    SlackNotificationAction,
    ValidationAction,
    should_notify,
)
from great_expectations.datasource.fluent.config_str import ConfigStr

from er_expectations.core.severity import wants_notification
from er_expectations.core.text import printable
from er_expectations.gx.owner import ContextBound, bound_context_attr, config_value, make_current
from er_expectations.run.alerts.render import (
    AlertMessage,
    ErEmailRenderer,
    ErSlackRenderer,
    ErTeamsRenderer,
    ErWebhookRenderer,
    build_message,
    dumps,
)
from er_expectations.run.alerts.targets import AlertTarget, Masker

__all__ = [
    "AlertDelivery",
    "AlertDeliveryError",
    "ErEmailAction",
    "ErSlackAction",
    "ErTeamsAction",
    "ErWebhookAction",
    "deliver",
    "send_alerts",
]

log = logging.getLogger(__name__)
_GX_ACTIONS_LOGGER = "great_expectations.checkpoint.actions"


class AlertDeliveryError(RuntimeError):
    """An alert target could not be reached or refused the message (text has no secret)."""


def post_json(url: str, payload: Any, *, timeout: float, headers: Mapping[str, str] | None = None) -> None:
    """POST ``payload`` as JSON; raises :class:`AlertDeliveryError` (without the URL) on failure."""
    try:
        response = requests.post(url, data=dumps(payload), timeout=timeout, allow_redirects=False,
                                 headers={**(headers or {}),
                                          "Content-Type": "application/json; charset=utf-8"})
    except requests.Timeout:
        raise AlertDeliveryError(f"no answer within {timeout:g} s") from None
    except requests.ConnectionError as error:
        reason = "connection refused" if "refused" in str(error).lower() else "cannot connect"
        raise AlertDeliveryError(f"{reason} (is the address right and the service up?)") from None
    except requests.RequestException as error:
        raise AlertDeliveryError(f"the request failed ({type(error).__name__})") from None
    if not 200 <= response.status_code < 300:
        body = printable(response.text[:20_000], limit=2_000) if response.text else ""  # masked and cut by deliver
        raise AlertDeliveryError(f"HTTP {response.status_code} {response.reason or ''}".rstrip()
                                 + (f": {body}" if body else ""))


class ErSlackAction(ContextBound, SlackNotificationAction):
    """GX's ``SlackNotificationAction`` with a timeout and a raised delivery failure."""

    type: Literal["er_slack"] = "er_slack"
    _er_context: Any = bound_context_attr()  # the run's context (deliver binds it)
    timeout: float = 10.0

    def _send_slack_notification(self, payload: dict) -> dict:
        url = config_value(self.slack_webhook, self.context_for())
        post_json(str(url), payload, timeout=self.timeout)
        return {"slack_notification_result": "Slack notification succeeded."}


class ErTeamsAction(ContextBound, MicrosoftTeamsNotificationAction):
    """GX's ``MicrosoftTeamsNotificationAction`` with a timeout and a raised delivery failure."""

    type: Literal["er_microsoft_teams"] = "er_microsoft_teams"
    _er_context: Any = bound_context_attr()  # the run's context (deliver binds it)
    timeout: float = 10.0

    def _send_microsoft_teams_notifications(self, payload: dict) -> str | None:
        url = config_value(self.teams_webhook, self.context_for())
        post_json(str(url), payload, timeout=self.timeout)
        return "Microsoft Teams notification succeeded."


class _Captured(logging.Handler):
    """The records logged by one thread (alerts are delivered in parallel)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)


#: Shared state of the process that parallel deliveries change: GX's logger and the default
#: socket timeout (GX's SMTP code sets none). Changed on the first entry, restored on the last.
_SHARED = threading.Lock()
_users = {"log": 0, "timeout": 0}
_saved: dict[str, Any] = {}


@contextlib.contextmanager
def _gx_log() -> Iterator[_Captured]:
    """Capture (and keep off the terminal) what GX's actions module logs: its e-mail code
    reports failures only there."""
    logger = logging.getLogger(_GX_ACTIONS_LOGGER)
    handler = _Captured()
    with _SHARED:
        if _users["log"] == 0:
            _saved["propagate"] = logger.propagate
            logger.propagate = False
        _users["log"] += 1
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        with _SHARED:
            logger.removeHandler(handler)
            _users["log"] -= 1
            if _users["log"] == 0:
                logger.propagate = _saved.pop("propagate")


@contextlib.contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    """The default socket timeout at least ``seconds`` while GX's SMTP code runs (restored after
    the last delivery that needs it). The wall-clock limit of each delivery is :func:`deliver`'s."""
    with _SHARED:
        if _users["timeout"] == 0:
            _saved["timeout"] = socket.getdefaulttimeout()
        _users["timeout"] += 1
        current = socket.getdefaulttimeout()
        socket.setdefaulttimeout(seconds if current is None else max(current, seconds))
    try:
        yield
    finally:
        with _SHARED:
            _users["timeout"] -= 1
            if _users["timeout"] == 0:
                socket.setdefaulttimeout(_saved.pop("timeout"))


#: GX reads ``config_variables.yml`` with one module-level ruamel.yaml parser
#: (``great_expectations.core.config_provider``), which is not thread-safe: two deliveries
#: resolving their ``${VAR}`` at once could break it ("'DocumentEndEvent' object has no attribute
#: 'anchor'", "string index out of range") and lose an alert. Reading the variables is serialised.
_CONFIG_READ = threading.Lock()


@contextlib.contextmanager
def _serial_config_reads(context: Any) -> Iterator[None]:
    """While deliveries run in parallel, the context's config provider reads its variables one
    thread at a time (its ``get_values``, which every ``${VAR}`` substitution calls)."""
    provider = context.config_provider
    own = vars(provider).get("get_values")
    unlocked = provider.get_values

    def get_values() -> dict[str, str]:
        with _CONFIG_READ:
            return unlocked()

    provider.get_values = get_values
    try:
        yield
    finally:
        if own is None:
            del provider.get_values  # back to the class's method
        else:
            provider.get_values = own


class ErEmailAction(ContextBound, EmailAction):
    """GX's ``EmailAction`` (its SMTP code) with a timeout and a raised delivery failure.

    GX opens ``smtplib.SMTP`` without a timeout and logs a failure as an error; the socket's
    default timeout is set while GX sends, and a logged error or a missing "success" raises.
    """

    type: Literal["er_email"] = "er_email"
    _er_context: Any = bound_context_attr()  # the run's context (deliver binds it)
    timeout: float = 10.0

    def _send_email(self, title: str, html: str, receiver_emails_list: list[str]) -> str:
        with _socket_timeout(self.timeout), _gx_log() as captured:
            result = super()._send_email(title=title, html=html,
                                         receiver_emails_list=receiver_emails_list)
        errors = [r.getMessage() for r in captured.records if r.levelno >= logging.ERROR]
        if result != "success" or errors:
            reason = "; ".join(errors) or "the SMTP server did not accept the message"
            if "timed out" in reason.lower():
                reason = f"no answer within {self.timeout:g} s ({reason})"
            raise AlertDeliveryError(reason)
        return result


class ErWebhookAction(ContextBound, ValidationAction):
    """POST the run's outcome as one JSON document (see the module docstring for why not
    GX's ``APINotificationAction``)."""

    type: Literal["er_webhook"] = "er_webhook"
    _er_context: Any = bound_context_attr()  # the run's context (deliver binds it)
    url: Union[ConfigStr, str]  # noqa: UP007 - GX's pydantic v1 models
    notify_on: Literal["all", "success", "failure"] = "failure"
    timeout: float = 10.0
    headers: Dict[str, Union[ConfigStr, str]] = {}  # noqa: UP006, UP007 - GX's pydantic v1 models
    renderer: ErWebhookRenderer

    def run(self, checkpoint_result: Any, action_context: Any = None) -> dict:
        if not should_notify(success=bool(checkpoint_result.success), notify_on=self.notify_on):
            return {"webhook_result": None}
        context = self.context_for(checkpoint_result)
        url = config_value(self.url, context)
        headers = {name: str(config_value(value, context))
                   for name, value in self.headers.items()}
        post_json(str(url), self.renderer.render(checkpoint_result=checkpoint_result),
                  timeout=self.timeout, headers=headers)
        return {"webhook_result": "posted"}


# -- one message per run ------------------------------------------------------------------------


@dataclass(frozen=True)
class AlertDelivery:
    """What became of one alert action: ``sent``, ``not needed`` (notify_on) or ``failed``."""

    action: str
    target: str
    outcome: Literal["sent", "not needed", "failed"]
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "target": self.target, "outcome": self.outcome,
                "error": self.error}


def _gx_action(target: AlertTarget, message: AlertMessage) -> ValidationAction:
    """The GX action of one alert, with our renderer; secrets stay ``${NAME}`` (GX's ConfigStr)."""
    o = target.options
    name = f"alert_{target.index}_{target.kind}"
    # send_alerts decided already (notify_on may be a level GX words differently): always send
    common = {"name": name, "notify_on": "all", "timeout": o["timeout"]}
    if target.kind == "slack":
        return ErSlackAction(slack_webhook=o["webhook"],
                             renderer=ErSlackRenderer(message), **common)
    if target.kind == "microsoft_teams":
        return ErTeamsAction(teams_webhook=o["webhook"],
                             renderer=ErTeamsRenderer(message), **common)
    if target.kind == "webhook":
        return ErWebhookAction(url=o["url"], headers=dict(o.get("headers") or {}),
                               renderer=ErWebhookRenderer(message), **common)
    if target.kind == "email":
        login = o.get("login")
        with _gx_log():  # GX warns about a missing login (a relay) when the action is made
            return ErEmailAction(
                smtp_address=o["smtp_host"], smtp_port=str(o["smtp_port"]),
                receiver_emails=",".join(o["receivers"]), sender_login=login,
                sender_password=o.get("password"),
                sender_alias=o["sender"], use_tls=o["security"] == "starttls",
                use_ssl=o["security"] == "ssl", renderer=ErEmailRenderer(message), **common)
    raise ValueError(f"unknown alert action {target.kind!r}")


def _stored_results(context: Any, labels_by_result: Mapping[Any, str]) -> dict[Any, Any]:
    store = context.validation_results_store
    return {identifier: store.get(identifier) for identifier in labels_by_result}


def _run_words(report: Any) -> str:
    """What a run's checks did, in the words of ``notify_on`` (GX's): 'no check failed', 'the worst
    failed check is a warning', ..."""
    checks = [e for release in report.releases for e in release.expectations]
    failed = {e.severity for e in checks if e.status in ("failed", "error")}
    worst = next((s for s in ("critical", "warning", "info") if s in failed), None)
    return "no check failed" if worst is None else f"the worst failed check is {worst}"


def send_alerts(targets: Sequence[AlertTarget], report: Any, context: Any,
                labels_by_result: Mapping[Any, str], checkpoint: Any, *,
                out: TextIO, err: TextIO | None = None) -> list[AlertDelivery]:
    """Send every alert of a finished run, once, and print what happened to ``out``.

    ``labels_by_result`` maps the run's validation result identifiers to release labels;
    ``checkpoint`` is the stored GX checkpoint over all the run's releases (named in the
    aggregated ``CheckpointResult``). Never raises for a target that fails: it prints a
    warning naming the target (secrets masked) to ``err`` (default ``sys.stderr``) and records
    it in the returned list. The targets are sent to at once (:func:`deliver`).
    """
    err = sys.stderr if err is None else err
    from great_expectations.checkpoint.checkpoint import CheckpointResult
    from great_expectations.core.run_identifier import RunIdentifier

    masker = Masker([secret for target in targets for secret in target.secrets])
    deliveries: list[AlertDelivery] = []
    try:
        stored = _stored_results(context, labels_by_result)
        by_label: dict[str, list[Any]] = {}
        for identifier, label in labels_by_result.items():
            by_label.setdefault(label, []).append(stored[identifier])
        base_url = next((t.docs_base_url for t in targets if t.docs_base_url), None)
        message = build_message(report, by_label, base_url=base_url)
        result = CheckpointResult(
            run_id=RunIdentifier(run_name=report.run_name, run_time=report.run_time),
            run_results=stored, checkpoint_config=checkpoint,
            success=all(bool(getattr(v, "success", False)) for v in stored.values()))  # GX's success
    except Exception as error:  # noqa: BLE001 - an alert never costs the run its results
        text = masker.reply(f"{type(error).__name__}: {error}")
        print(f"warning: no alert was sent: the message could not be built ({text})", file=err, flush=True)
        return [AlertDelivery(t.kind, t.shown, "failed", text) for t in targets]

    checks = [e for release in report.releases for e in release.expectations]
    failed = {e.severity for e in checks if e.status in ("failed", "error")}  # GX's unsuccessful checks
    due = [t for t in targets if wants_notification(t.options["notify_on"], failed_severities=failed)]
    delivered = dict(zip(map(id, due), deliver(due, message, context, result, masker), strict=True))
    for target in targets:  # reported in the order of the checkpoint file
        delivery = delivered.get(id(target))
        if delivery is None:
            deliveries.append(AlertDelivery(target.kind, target.shown, "not needed"))
            print(f"Alert not needed (notify_on: {target.options['notify_on']}; {_run_words(report)}): "
                  f"{target.shown}", file=out, flush=True)
            continue
        deliveries.append(delivery)
        if delivery.outcome == "sent":
            print(f"Alert sent: {target.shown}", file=out, flush=True)
        else:
            print(f"warning: alert {target.shown} was not delivered: {delivery.error}. The validation "
                  "results and Data Docs are saved; the exit code is that of the validation.",
                  file=err, flush=True)
    return deliveries


#: Seconds a delivery gets past its ``timeout`` so that a read that timed out reports itself.
_GRACE = 0.5


def deliver(targets: Sequence[AlertTarget], message: AlertMessage, context: Any, result: Any,
            masker: Masker) -> list[AlertDelivery]:
    """Send ``result`` to every target at once, each within its ``timeout`` in wall-clock time.

    A target's ``timeout`` bounds its whole delivery, not each read: a server that answers one
    byte a second is given up when the time is over (half a second later, so that a plain read
    timeout reports itself; its thread is left to end on its own; it
    holds nothing of the run). All targets run in parallel, so the alerts take at most the
    longest ``timeout``. Returns one :class:`AlertDelivery` per target, in order.
    """
    boxes: list[dict[str, Any]] = [{} for _ in targets]
    # GX's own e-mail code reads its ${VAR} settings from the current project: the run's context
    # (already current when the run opened it with gx.get_context)
    make_current(context)

    def send(target: AlertTarget, box: dict[str, Any]) -> None:
        try:
            action = _gx_action(target, message).bind(context)
            action.run(checkpoint_result=result)
            box["outcome"] = "sent"
        except Exception as error:  # noqa: BLE001 - any failure of a target is a warning
            box["error"] = str(error) if isinstance(error, AlertDeliveryError) else f"{type(error).__name__}: {error}"

    with _serial_config_reads(context):
        started = time.monotonic()
        threads = []
        for index, (target, box) in enumerate(zip(targets, boxes, strict=True)):
            thread = threading.Thread(target=send, args=(target, box), name=f"er-alert-{index}", daemon=True)
            thread.start()
            threads.append(thread)
        for target, thread in zip(targets, threads, strict=True):
            limit = float(target.options["timeout"])
            thread.join(max(0.0, started + limit + _GRACE - time.monotonic()))
    deliveries = []
    for target, box, thread in zip(targets, boxes, threads, strict=True):
        limit = float(target.options["timeout"])
        if thread.is_alive():
            deliveries.append(AlertDelivery(target.kind, target.shown, "failed",
                                            f"not delivered within {limit:g} s (the server answers too slowly)"))
        elif box.get("outcome") == "sent":
            deliveries.append(AlertDelivery(target.kind, target.shown, "sent"))
        else:
            deliveries.append(AlertDelivery(target.kind, target.shown, "failed",
                                            masker.reply(box.get("error") or "unknown error")))
    return deliveries
