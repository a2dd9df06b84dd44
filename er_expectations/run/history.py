"""Recording checkpoint runs in the history store: from GX results to :class:`ReleaseRun` rows.

:class:`HistoryRecorder` is what the runner uses: it opens the store once per run, makes the
release under validation known to drift checks (:mod:`.context`), writes each release's
results in one transaction right after its validation, and never lets a history problem
lose the validation results or the Data Docs: a store that cannot be opened or written is
reported (:attr:`HistoryRecorder.problem`, exit code 6 of ``er-expectations run``) and the
run goes on. :func:`release_run` turns one release's GX validation results into rows; the
GX action :class:`~.action.HistoryAction` uses it too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from er_expectations.config import CheckpointConfig, ConfigIssue
from er_expectations.gx.history_action import HistoryAction, release_run
from er_expectations.history.context import ActiveRelease, validating
from er_expectations.history.store import (
    HistoryError,
    HistoryStore,
    default_url,
    mask_url,
    sqlite_uri_mode,
)
from er_expectations.run.history_location import PROJECT_ID_FILE, history_url, project_key

__all__ = ["PROJECT_ID_FILE", "HistoryRecorder", "check_history", "record_alerts", "history_action", "history_url", "project_key",
           "release_run"]


def history_action(checkpoint: CheckpointConfig, releases: Mapping[str, str],
                   order: Sequence[str]) -> Any:
    """The GX action recording ``releases`` (batch file name -> label) of a checkpoint, with
    the URL as written in the file (no secret), or ``None`` when the history is disabled."""
    config = checkpoint.history
    if not config.enabled:
        return None
    position = {label: index for index, label in enumerate(order)}
    return HistoryAction(
        name="er_history", checkpoint=checkpoint.name,
        url=config.url if config.url is not None else default_url(checkpoint.project_dir),
        base_dir=str(Path(checkpoint.path).absolute().parent),
        project=project_key(checkpoint),
        releases={name: (label, position.get(label, len(position))) for name, label in releases.items()},
    )


def check_history(checkpoint: CheckpointConfig) -> list[ConfigIssue]:
    """Issues of the ``history:`` section that only show when the file is run (unset variables)."""
    try:
        url = history_url(checkpoint)
        if url is not None and sqlite_uri_mode(url) == "ro":
            raise HistoryError("history.url opens the SQLite store read-only (mode=ro), but a run records every "
                               "release into it; remove mode=ro from the URL (the history command may keep it)")
    except HistoryError as error:
        line, column = checkpoint.location("history.url")
        message = str(error)
        hint = None
        if "; " in message:
            message, hint = message.split("; ", 1)
        return [ConfigIssue(str(checkpoint.path), line, column, message, hint)]
    return []










@dataclass
class HistoryRecorder:
    """The history side of one ``er-expectations run`` (see the module docstring).

    ``url`` is ``None`` when the history is disabled. :attr:`problem` is the first
    problem met (the store is then not used again in this run); :attr:`recorded` maps each
    release written to its version.
    """

    checkpoint: str
    url: str | None
    positions: Mapping[str, int]
    out: TextIO | None = None
    store: HistoryStore | None = None
    problem: str | None = None
    recorded: dict[str, int] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, checkpoint: CheckpointConfig, releases: Sequence[str], *,
              out: TextIO | None = None) -> HistoryRecorder:
        """Open the checkpoint's store (a problem is kept, not raised); ``releases`` gives the order."""
        positions = {label: index for index, label in enumerate(releases)}
        try:
            url = history_url(checkpoint)
        except HistoryError as error:  # checked before the run; the environment may change
            recorder = cls(checkpoint.name, None, positions, out)
            recorder._fail(str(error))
            return recorder
        recorder = cls(checkpoint.name, url, positions, out)
        if url is not None:
            try:
                recorder.store = HistoryStore.open(url, project=project_key(checkpoint, create=True))
            except HistoryError as error:
                recorder._fail(str(error))
        return recorder

    @property
    def display_url(self) -> str | None:
        return mask_url(self.url) if self.url else None

    def _fail(self, message: str) -> None:
        if self.problem is None:
            self.problem = message
            if self.out is not None:
                print(f"History not recorded: {message}. The validation goes on; its results and Data Docs "
                      "are kept.", file=self.out, flush=True)
        if self.store is not None:
            self.store.close()
            self.store = None

    @contextmanager
    def validating(self, release: str, run_name: str) -> Iterator[ActiveRelease]:
        """The block validates ``release``: drift checks find it with ``active_release()``."""
        active = ActiveRelease(checkpoint=self.checkpoint, release=release,
                               position=self.positions.get(release, len(self.positions)),
                               run_name=run_name, store=self.store,
                               problem=self.problem or (None if self.url is not None else
                                                        "the history is disabled (history: {enabled: false})"))
        with validating(active):
            yield active

    def record(self, release: str, result: Any, *, status: str) -> int | None:
        """Write one release's GX ``CheckpointResult`` (one transaction); its version or ``None``."""
        if self.url is None and self.problem is None:
            return None
        if self.store is None:
            self.missed.append(release)
            return None
        try:
            try:
                run = release_run(checkpoint=self.checkpoint, release=release,
                                  position=self.positions.get(release), run_id=result.run_id,
                                  validations=result.run_results, status=status)
            except Exception as error:  # noqa: BLE001 - a bug here must not cost the Data Docs
                raise HistoryError(f"the results of release '{release}' could not be turned into history "
                                   f"rows ({type(error).__name__}: {error}); this is a bug, please "
                                   "report it") from error
            version = self.store.record(run)
        except HistoryError as error:
            self.missed.append(release)
            self._fail(str(error))
            return None
        self.recorded[release] = version
        return version

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def summary(self) -> str | None:
        """One line for the run's summary (``None`` when the history is disabled)."""
        if self.url is None and self.problem is None:
            return None
        if self.problem is not None:
            missed = ", ".join(self.missed) if self.missed else "none"
            return f"History NOT recorded (releases not recorded: {missed}): {self.problem}"
        where = self.display_url
        shown = where.removeprefix("sqlite:///") if where and where.startswith("sqlite:///") else where
        versions = sorted(set(self.recorded.values()))
        rerun = ""
        if versions and versions != [1]:  # a release run before gets the next version; the earlier ones stay
            shown_versions = " or ".join(map(str, versions))
            rerun = (f"; these releases were validated before, so this run is their version {shown_versions} "
                     "(earlier versions are kept: `er-expectations history --all-versions` lists every run)")
        return f"History: {len(self.recorded)} release(s) recorded in {shown}{rerun}."


def record_alerts(checkpoint: CheckpointConfig, *, run_time: Any, deliveries: Sequence[Any],
                  err: TextIO | None = None) -> bool:
    """Record what became of each alert of a finished run in the history store (issue 18, item
    12): target, outcome and a failure's error, secrets masked (the deliveries are) and no local
    absolute path (a path in the project is written relative to it). A store that cannot be
    written costs nothing of the run: a warning goes to ``err`` and ``False`` is returned."""
    from er_expectations.core.text import without_local_paths
    from er_expectations.history.records import AlertRecord

    try:
        url = history_url(checkpoint)
        if url is None or not deliveries:
            return False
        project_dir = str(checkpoint.project_dir)
        rows = [AlertRecord(action=d.action, target=without_local_paths(d.target, project_dir=project_dir),
                            outcome=d.outcome,
                            error=None if d.error is None else without_local_paths(d.error, project_dir=project_dir))
                for d in deliveries]
        with HistoryStore.open(url, project=project_key(checkpoint)) as store:
            store.record_alerts(checkpoint=checkpoint.name, run_name=checkpoint.name, run_time=run_time,
                                alerts=rows)
    except HistoryError as error:
        if err is not None:
            print(f"warning: the alert outcomes were not recorded in the history: {error}", file=err, flush=True)
        return False
    return True
