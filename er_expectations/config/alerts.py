"""Alert actions of a checkpoint file: Slack, Microsoft Teams, e-mail and a generic webhook.

.. code-block:: yaml

    actions:
      - build_data_docs: {base_url: "https://qa.example.org/er-docs/"}   # links in alerts
      - slack: {webhook: "${SLACK_WEBHOOK}", notify_on: failure}
      - microsoft_teams:
          webhook: ${TEAMS_WEBHOOK}
      - webhook: {url: "${ALERT_WEBHOOK_URL}", headers: {Authorization: "${ALERT_TOKEN}"}}
      - email:
          smtp_host: smtp.example.org
          smtp_port: 587
          security: starttls            # starttls | ssl | none
          sender: er-alerts@example.org
          login: er-alerts@example.org
          password: ${SMTP_PASSWORD}
          receivers: [release-owner@example.org]

**Secrets come from the environment.** A webhook URL, the generic webhook's ``url`` and an
SMTP ``password`` must be written as one reference ``${NAME}`` (Great Expectations' own
config-variable syntax, resolved by GX when the message is sent); a value written in the file
is refused at its ``file:line:column``, without repeating it. Other text options may also be
``${NAME}``. Before a run does any work, :func:`resolve_alerts` checks that every referenced
variable is set and well formed (an ``http(s)`` URL, e-mail addresses); the error names the
variable, never its value. :class:`Masker` hides the secret values in anything printed.

``notify_on`` is GX's: ``failure`` (the default here: the run failed, i.e. a critical check
failed or a check could not be computed), ``all`` or ``success``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from er_expectations.config.errors import ConfigIssue
from er_expectations.config.models import ConfigModel, Text, name_list, problem

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config.checkpoint import CheckpointConfig

__all__ = [
    "AlertTarget",
    "EmailAlert",
    "Masker",
    "SlackAlert",
    "TeamsAlert",
    "WebhookAlert",
    "env_reference",
    "resolve_alerts",
]

#: ``${NAME}``: the whole value is one environment variable (GX's config-variable syntax).
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_ADDRESS = re.compile(r"[^@\s<>,;:\"()\[\]\\]+@[^@\s<>,;:\"()\[\]\\]+\.[^@\s<>,;:\"()\[\]\\]+|"
                      r"[^@\s<>,;:\"()\[\]\\]+@localhost")


def env_reference(value: object) -> str | None:
    """The variable name of a value written ``${NAME}``, else ``None``."""
    if not isinstance(value, str):
        return None
    found = _REFERENCE.fullmatch(value.strip())
    return found.group(1) if found else None


def _secret(key: str, example: str, *, written: str | None = None) -> Any:
    """The type of the option ``key`` that holds a secret: only ``${NAME}`` is accepted.

    The error never shows the value written (it may be the secret itself).
    """

    def check(value: Any) -> str:
        if env_reference(value) is not None:
            return str(value).strip()
        bare = _BARE.fullmatch(value.strip()) if isinstance(value, str) else None
        if bare is not None:
            hint = f"write it as ${{{bare.group(1)}}} (with braces)"
        else:
            form = written or f"{key}: ${{{example}}}"
            hint = (f"write '{form}' and set the environment variable {example} "
                    "where the checkpoint runs (any variable name will do)")
        raise problem(
            "{where}: a secret may not be written in the checkpoint file; give the name of the "
            "environment variable that holds it (the value written is not repeated here)",
            hint,
        )

    return Annotated[str, BeforeValidator(check)]


def _text_or_reference(value: str) -> str:
    """Text, or one ``${NAME}``; a reference inside other text is refused."""
    if "${" in value and env_reference(value) is None:
        raise problem("{where}: a variable reference must be the whole value, written ${NAME}",
                      "put the whole value in the environment variable")
    return value


#: Text that may also be written ``${NAME}`` (resolved from the environment before the run).
EnvText = Annotated[Text, AfterValidator(_text_or_reference)]


def _header_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", name) or name.lower() == "content-type":
        raise problem(f"{{where}}: '{name}' is not a header this action can set",
                      "use a header name of letters, digits and '-' (not Content-Type)")
    return name


class _Alert(ConfigModel):
    """Options every alert action has."""

    #: GX's ``notify_on``: send when the run failed, always, or when it passed.
    notify_on: Literal["failure", "all", "success"] = "failure"
    #: Seconds to wait for the target (connect and answer) before giving up with a warning.
    timeout: Annotated[float, Field(gt=0, le=300)] = 10.0
    #: Option -> environment variable suggested in the hint of a refused secret.
    secret_options: ClassVar[tuple[str, ...]] = ()
    #: Options whose value (after substitution) must be an http(s) URL.
    url_options: ClassVar[tuple[str, ...]] = ()


class SlackAlert(_Alert):
    """``slack``: a Slack incoming webhook (GX's ``SlackNotificationAction``)."""

    example: ClassVar[str] = "slack: {webhook: ${SLACK_WEBHOOK}}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action slack"
    secret_options: ClassVar[tuple[str, ...]] = ("webhook",)
    url_options: ClassVar[tuple[str, ...]] = ("webhook",)
    webhook: _secret("webhook", "SLACK_WEBHOOK") = Field(description="the Slack incoming-webhook URL, as ${VARIABLE}")


class TeamsAlert(_Alert):
    """``microsoft_teams``: a Teams incoming webhook (GX's ``MicrosoftTeamsNotificationAction``)."""

    example: ClassVar[str] = "microsoft_teams: {webhook: ${TEAMS_WEBHOOK}}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action microsoft_teams"
    secret_options: ClassVar[tuple[str, ...]] = ("webhook",)
    url_options: ClassVar[tuple[str, ...]] = ("webhook",)
    webhook: _secret("webhook", "TEAMS_WEBHOOK") = Field(description="the Teams incoming-webhook URL, as ${VARIABLE}")


class WebhookAlert(_Alert):
    """``webhook``: a JSON POST of the run's outcome to any HTTP endpoint."""

    example: ClassVar[str] = "webhook: {url: ${ALERT_WEBHOOK_URL}}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action webhook"
    secret_options: ClassVar[tuple[str, ...]] = ("url", "headers")
    url_options: ClassVar[tuple[str, ...]] = ("url",)
    url: _secret("url", "ALERT_WEBHOOK_URL") = Field(description="the endpoint URL, as ${VARIABLE}")
    #: Extra request headers (e.g. ``Authorization``), each value a ``${VARIABLE}``.
    headers: dict[Annotated[str, AfterValidator(_header_name)],
                  _secret("headers", "ALERT_WEBHOOK_TOKEN",
                          written="headers: {<name>: \"${ALERT_WEBHOOK_TOKEN}\"}")] | None = None


class EmailAlert(_Alert):
    """``email``: an HTML e-mail through an SMTP server (GX's ``EmailAction``)."""

    example: ClassVar[str] = "email: {smtp_host: <host>, sender: <address>, receivers: [<address>]}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action email"
    secret_options: ClassVar[tuple[str, ...]] = ("password",)
    smtp_host: EnvText
    smtp_port: Annotated[int, Field(ge=1, le=65535)] = 587
    #: ``starttls`` (GX's use_tls), ``ssl`` (use_ssl) or ``none`` (a local relay).
    security: Literal["starttls", "ssl", "none"] = "starttls"
    sender: EnvText
    receivers: name_list("e-mail address")
    login: EnvText | None = None
    password: _secret("password", "SMTP_PASSWORD") | None = None

    @model_validator(mode="after")
    def _login_and_password(self) -> EmailAlert:
        if (self.login is None) != (self.password is None):
            given, missing = ("login", "password") if self.password is None else ("password", "login")
            raise problem(f"{{where}}: '{given}' is given without '{missing}'",
                          "give both (password as ${SMTP_PASSWORD}) or neither (a relay without login)")
        return self


# -- run time: the environment ----------------------------------------------------------------


class Masker:
    """Replaces secret values (and the path and query of secret URLs) by ``***`` in text.

    Pieces shorter than :attr:`MIN_LENGTH` characters are left alone: hiding every ``t`` of a
    message would make it unreadable and protect nothing.
    """

    MIN_LENGTH = 4

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        parts: set[str] = set()
        for secret in secrets:
            if len(secret) < self.MIN_LENGTH:
                continue
            parts.add(secret)
            split = urlsplit(secret) if "://" in secret else None
            if split is not None and split.netloc:
                for piece in (split.path + (f"?{split.query}" if split.query else ""), split.path,
                              split.query, split.username or "", split.password or ""):
                    if len(piece) >= self.MIN_LENGTH:
                        parts.add(piece)
        self._parts = sorted(parts, key=len, reverse=True)

    def __call__(self, text: object) -> str:
        shown = str(text)
        for part in self._parts:
            shown = shown.replace(part, "***")
        return shown


def shown_url(url: str) -> str:
    """``scheme://host[:port]/***``: what may be printed of a secret URL."""
    split = urlsplit(url)
    host = split.hostname or "?"
    port = f":{split.port}" if split.port else ""
    return f"{split.scheme}://{host}{port}/***"


@dataclass(frozen=True)
class AlertTarget:
    """One alert action with its environment variables resolved (done before the run).

    ``options`` are the action's options with every ``${NAME}`` of a non-secret option replaced
    by its value; secret options keep the reference (GX substitutes it when sending).
    ``secrets`` are the secret values, for the :class:`Masker`; ``shown`` is the target as it
    may be printed (the variable name and scheme and host of a URL, never a secret).
    """

    kind: str
    index: int
    line: int | None
    config: Any
    options: Mapping[str, Any]
    secrets: tuple[str, ...]
    shown: str
    #: ``build_data_docs: {base_url: ...}``: where the Data Docs pages linked in messages live.
    docs_base_url: str | None = None


def _url_problem(value: str) -> str | None:
    if any(ch.isspace() or ord(ch) < 32 for ch in value):
        return "contains spaces or control characters"
    split = urlsplit(value)
    if split.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    try:
        split.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return "has an invalid port"
    if not split.hostname:
        return "has no host name"
    return None


def resolve_alerts(checkpoint: CheckpointConfig, environ: Mapping[str, str] | None = None,
                   ) -> tuple[tuple[AlertTarget, ...], list[ConfigIssue]]:
    """The alert actions of ``checkpoint`` with their variables read from ``environ``.

    Returns the targets and the issues (an unset or empty variable, a value that is not an
    http(s) URL or an e-mail address), each at the line and column of the reference; a
    message names the variable and never shows its value.
    """
    env = os.environ if environ is None else environ
    docs = next((a for a in checkpoint.actions if a.name == "build_data_docs"), None)
    base_url = docs.options.get("base_url") if docs is not None else None
    targets: list[AlertTarget] = []
    issues: list[ConfigIssue] = []
    for index, action in enumerate(checkpoint.actions):
        config = getattr(action, action.name)
        if not isinstance(config, _Alert):  # the alert actions are the ActionConfig fields of these models
            continue
        model = type(config)
        options: dict[str, Any] = {key: getattr(config, key) for key in type(config).model_fields
                                   if getattr(config, key) is not None}
        secrets: list[str] = []
        shown_parts: list[str] = []
        ok = True
        for key, written in list(options.items()):
            if isinstance(written, Mapping):
                values, suffixes = list(written.values()), [f".{name}" for name in written]
            elif isinstance(written, tuple | list):
                values, suffixes = list(written), [f"[{i}]" for i in range(len(written))]
            else:
                values, suffixes = [written], [""]
            resolved_values = []
            for item, suffix in zip(values, suffixes, strict=True):
                spot = f"actions[{index}].{action.name}.{key}{suffix}"
                name = env_reference(item)
                if name is None:
                    resolved_values.append(item)
                    continue
                where = checkpoint.location(spot)
                value = env.get(name)
                if value is None or not value.strip():
                    state = "is not set" if value is None else "is empty"
                    issues.append(ConfigIssue(
                        str(checkpoint.path), *where,
                        f"{spot}: the environment variable {name} {state}",
                        f"set {name} where the checkpoint runs (export {name}=...), or remove the "
                        f"{action.name} action"))
                    ok = False
                    continue
                value = value.strip()
                if key in model.url_options:
                    bad = _url_problem(value)
                    if bad:
                        issues.append(ConfigIssue(
                            str(checkpoint.path), *where,
                            f"{spot}: the value of {name} {bad} (the value is not shown: it is a secret)",
                            f"set {name} to the full URL, e.g. https://hooks.example.org/services/..."))
                        ok = False
                        continue
                    shown_parts.append(f"${{{name}}} = {shown_url(value)}")
                if key in model.secret_options:
                    secrets.append(value)
                    resolved_values.append(item)  # GX substitutes the reference when sending
                else:
                    resolved_values.append(value)
            if isinstance(written, Mapping):
                options[key] = dict(zip(written, resolved_values, strict=False))
            elif isinstance(written, tuple | list):
                options[key] = resolved_values
            else:
                options[key] = resolved_values[0] if resolved_values else written
        if action.name == "email" and ok:
            ok = _check_addresses(checkpoint, index, options, issues)
            shown_parts.append(f"{options['smtp_host']}:{options['smtp_port']} to "
                               f"{', '.join(options['receivers'])}")
        if ok:
            targets.append(AlertTarget(kind=action.name, index=index, line=action.line, config=config,
                                       options=options, secrets=tuple(secrets),
                                       shown=f"{action.name} ({'; '.join(shown_parts)})",
                                       docs_base_url=str(base_url) if base_url else None))
    return tuple(targets), issues


def _check_addresses(checkpoint: CheckpointConfig, index: int, options: dict[str, Any],
                     issues: list[ConfigIssue]) -> bool:
    ok = True
    checks = [("sender", options["sender"])] + [
        (f"receivers[{i}]", address) for i, address in enumerate(options["receivers"])]
    for key, address in checks:
        if not _ADDRESS.fullmatch(str(address)):
            spot = f"actions[{index}].email.{key}"
            issues.append(ConfigIssue(
                str(checkpoint.path), *checkpoint.location(spot),
                f"{spot}: not an e-mail address (name@domain)",
                "write one plain address per item, without a display name or commas"))
            ok = False
    if any(ch.isspace() or ord(ch) < 32 for ch in str(options["smtp_host"])):
        spot = f"actions[{index}].email.smtp_host"
        issues.append(ConfigIssue(str(checkpoint.path), *checkpoint.location(spot),
                                  f"{spot}: a host name has no spaces or control characters", None))
        ok = False
    return ok
