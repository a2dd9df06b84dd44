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
``${NAME}``. Before a run does any work, :func:`er_expectations.run.alerts.targets.resolve_alerts` checks that every referenced
variable is set and well formed (an ``http(s)`` URL, e-mail addresses); the error names the
variable, never its value. :class:`er_expectations.run.alerts.targets.Masker` hides the secret values in anything printed.

``notify_on`` is GX's, decided as GX decides it: ``failure`` (the default: a check failed or
raised, whatever its severity), ``all`` or ``success``, or a severity level (the worst failed
check is of that level: ``critical`` when a release failed); see
:func:`er_expectations.core.severity.wants_notification`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from er_expectations.config.models import ConfigModel, Text, name_list, problem

__all__ = [
    "EmailAlert",
    "SlackAlert",
    "TeamsAlert",
    "WebhookAlert",
    "env_reference",
]

#: ``${NAME}``: the whole value is one environment variable (GX's config-variable syntax).
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


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


class AlertConfig(ConfigModel):
    """Options every alert action has."""

    #: GX's ``notify_on``: send when a check failed (any severity), always, or when none failed; or a severity
    #: level: send when the worst failed check is of that level (GX's ``should_notify``).
    notify_on: Literal["failure", "all", "success", "critical", "warning", "info"] = "failure"
    #: Seconds to wait for the target (connect and answer) before giving up with a warning.
    timeout: Annotated[float, Field(gt=0, le=300)] = 10.0
    #: Option -> environment variable suggested in the hint of a refused secret.
    secret_options: ClassVar[tuple[str, ...]] = ()
    #: Options whose value (after substitution) must be an http(s) URL.
    url_options: ClassVar[tuple[str, ...]] = ()


class SlackAlert(AlertConfig):
    """``slack``: a Slack incoming webhook (GX's ``SlackNotificationAction``)."""

    example: ClassVar[str] = "slack: {webhook: ${SLACK_WEBHOOK}}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action slack"
    secret_options: ClassVar[tuple[str, ...]] = ("webhook",)
    url_options: ClassVar[tuple[str, ...]] = ("webhook",)
    webhook: _secret("webhook", "SLACK_WEBHOOK") = Field(description="the Slack incoming-webhook URL, as ${VARIABLE}")


class TeamsAlert(AlertConfig):
    """``microsoft_teams``: a Teams incoming webhook (GX's ``MicrosoftTeamsNotificationAction``)."""

    example: ClassVar[str] = "microsoft_teams: {webhook: ${TEAMS_WEBHOOK}}"
    unknown_key: ClassVar[str] = "unknown option '{key}' for action microsoft_teams"
    secret_options: ClassVar[tuple[str, ...]] = ("webhook",)
    url_options: ClassVar[tuple[str, ...]] = ("webhook",)
    webhook: _secret("webhook", "TEAMS_WEBHOOK") = Field(description="the Teams incoming-webhook URL, as ${VARIABLE}")


class WebhookAlert(AlertConfig):
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


class EmailAlert(AlertConfig):
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
