"""Where a checkpoint's alerts go: the alert actions of its file, their environment variables resolved and checked.

The models of the ``actions:`` entries are in :mod:`er_expectations.config.alerts`; this module resolves
them against the environment before a run does any work (SPEC 13 of alerts: secrets never printed)."""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from er_expectations.config.alerts import AlertConfig, env_reference
from er_expectations.config.checkpoint import CheckpointConfig
from er_expectations.config.errors import ConfigIssue
from er_expectations.core.text import printable, redact_credentials

_ADDRESS = re.compile(r"[^@\s<>,;:\"()\[\]\\]+@[^@\s<>,;:\"()\[\]\\]+\.[^@\s<>,;:\"()\[\]\\]+|"
                      r"[^@\s<>,;:\"()\[\]\\]+@localhost")


class Masker:
    """Replaces secret values (and the path and query of secret URLs) by ``***`` in text.

    Pieces shorter than :attr:`MIN_LENGTH` characters are left alone: hiding every ``t`` of a
    message would make it unreadable and protect nothing. :meth:`reply` cleans what a server
    answered: it also hides the secrets' percent-encoded, JSON and HTML forms and any run of
    :attr:`WINDOW` characters copied from a secret piece (a server echoing half a token).
    """

    MIN_LENGTH = 4
    #: A reply's run of this many characters found in a secret piece is hidden.
    WINDOW = 8
    #: Characters of a server's reply kept in a message (after masking).
    REPLY_LIMIT = 300

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        parts: set[str] = set()
        pieces: set[str] = set()  # the secret values, a URL's by its path, query and credentials
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
                        pieces.add(piece)
            else:
                pieces.add(secret)
        forms = {form for piece in pieces for form in (quote(piece, safe=""), quote(piece), quote_plus(piece),
                                                      json.dumps(piece)[1:-1], html.escape(piece))}
        self._parts = sorted(parts, key=len, reverse=True)
        self._forms = sorted({f for f in forms | pieces if len(f) >= self.MIN_LENGTH}, key=len, reverse=True)
        self._windows = {f[i:i + self.WINDOW] for f in self._forms for i in range(len(f) - self.WINDOW + 1)}

    def __call__(self, text: object) -> str:
        shown = str(text)
        for part in self._parts:
            shown = shown.replace(part, "***")
        return shown

    def reply(self, text: object) -> str:
        """A server's reply (or an error quoting it) fit to print and store (hostile round 3, item 6):
        terminal escapes and control characters removed, every secret and what reads as a credential
        hidden (:func:`~er_expectations.core.text.redact_credentials`), at most :attr:`REPLY_LIMIT`
        characters."""
        shown = printable(text, limit=None)
        hidden = [False] * len(shown)
        for window in self._windows:
            start = shown.find(window)
            while start >= 0:
                hidden[start:start + len(window)] = [True] * len(window)
                start = shown.find(window, start + 1)
        if any(hidden):
            shown = "".join("***" if h and (i == 0 or not hidden[i - 1]) else "" if h else c
                            for i, (c, h) in enumerate(zip(shown, hidden, strict=True)))
        for form in self._forms:
            shown = shown.replace(form, "***")
        return printable(redact_credentials(self(shown)), limit=self.REPLY_LIMIT)


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
        if not isinstance(config, AlertConfig):  # the alert actions are the ActionConfig fields of these models
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
