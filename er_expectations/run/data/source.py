"""What a checkpoint's data in a database or Spark must answer (``data.engine: sql | spark``):
the checks before a run and the release batches, whatever the engine."""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.run.data.base import BatchLayout, ReleaseSource, release_label

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config import CheckpointConfig
    from er_expectations.config.checkpoint import EngineData, EngineTable


#: Column names of the intermediate tables a source builds.
ID_COLUMN, PRED_COLUMN, NAME_COLUMN, REF_COLUMN = "__er_id", "__er_pred", "__er_name", "__er_ref"


ROLES = ("records", "predictions", "benchmark")


def within(seconds: float, call: Callable[[], object]) -> bool:
    """Run ``call`` in a daemon thread; ``False`` if it has not returned within ``seconds``.

    Drivers differ in how (and whether) they bound a connection attempt, so the first
    contact with a database is bounded here, the same way for every driver; an exception of
    ``call`` is raised again. A thread left waiting on a silent server is a daemon: it does
    not keep the process alive once the run has reported the error.
    """
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            outcome.append(error)
        else:
            outcome.append(None)

    worker = threading.Thread(target=target, name="er-expectations-connect", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        return False
    if outcome[0] is not None:
        raise outcome[0]
    return True


def one_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    return text[0].strip() if text else type(error).__name__


def kind_of_value(value: object) -> str | None:
    """'integer', 'number', 'text' (as :func:`~.io.id_kind` names them) for a sampled value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "text"
    import decimal

    if isinstance(value, float | decimal.Decimal):
        return "number"
    return type(value).__name__


class Source(abc.ABC):
    """The tables of a checkpoint in one engine: opened (columns known) and checked.

    ``connected`` is False for ``validate`` (no environment): then nothing is opened and
    :meth:`columns` is ``None``.
    """

    engine: str

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        from er_expectations.config.errors import IssueCollector

        self.checkpoint = checkpoint
        self.data: EngineData = checkpoint.data  # type: ignore[assignment]
        self.issues = IssueCollector(str(checkpoint.path))
        self.handles: dict[str, Any] = {}
        self.table_columns: dict[str, list[str]] = {}
        self.connected = False

    # -- opening --------------------------------------------------------------------------
    def open(self) -> None:
        """Connect and open every table; raises :class:`ConfigError` listing every problem."""
        self.connect()
        for role in ROLES:
            config = getattr(self.data, role)
            if config is None:
                continue
            opened = self.open_table(role, config)
            if opened is not None:
                self.handles[role], self.table_columns[role] = opened
        if not self.issues.issues:
            self.check_columns()
        self.issues.raise_if_any()
        self.connected = True

    @abc.abstractmethod
    def connect(self) -> None:
        """Reach the database or start Spark; raises :class:`SourceUnreachableError`."""

    @abc.abstractmethod
    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        """The handle and the columns of a table, or ``None`` after adding an issue."""

    def add(self, key: str, message: str, hint: str | None = None) -> None:
        """An issue at the key of the checkpoint file (or its closest written parent)."""
        where = key
        while where and where not in self.checkpoint.locations:
            where = where.rpartition(".")[0]
        self.issues.add(self.checkpoint.location(where or "data"), message, hint)

    def columns(self, role: str) -> list[str] | None:
        """The columns of ``records``, ``predictions`` or ``benchmark`` (``None`` when not opened)."""
        return self.table_columns.get(role)

    def shown(self, role: str) -> str:
        """``data.records (table 'mentions')``: how messages name a table."""
        return f"data.{role} ({getattr(self.data, role).shown})"

    # -- columns --------------------------------------------------------------------------
    def _require(self, role: str, column: str, key: str) -> bool:
        available = self.table_columns[role]
        if column in available:
            return True
        hint = did_you_mean(column, available)
        if hint is None:
            hint = f"{getattr(self.data, role).shown} has the columns {quote_list(available[:10], conjunction='and')}" \
                + (" ..." if len(available) > 10 else "")
        self.add(key, f"{key}: column '{column}' not found in {getattr(self.data, role).shown}", hint)
        return False

    def check_columns(self) -> None:
        data = self.data
        self._require("records", data.records.id_column, "data.records.id_column")
        if data.name is not None:
            for index, column in enumerate(data.name.columns):
                if self._require("records", column, f"data.name.columns[{index}]"):
                    kind = self.value_kind("records", column)
                    if kind not in (None, "text"):
                        self.add(f"data.name.columns[{index}]",
                                 f"data.name.columns[{index}]: column '{column}' of {data.records.shown} holds "
                                 f"{kind} values; a name is built from text columns",
                                 "cast it to text in a query (records: {query: \"select ...\"})")
        pred = data.predictions
        self._require("predictions", pred.id_column, "data.predictions.id_column")
        if pred.layout == "long":
            self._require("predictions", str(pred.release_column), "data.predictions.release_column")
            self._require("predictions", str(pred.prediction_column), "data.predictions.prediction_column")
        else:
            self._check_wide()
        if data.benchmark is not None:
            self._require("benchmark", data.benchmark.id_column, "data.benchmark.id_column")
            self._require("benchmark", data.benchmark.reference_column, "data.benchmark.reference_column")
        if data.labels is not None and data.labels.block_column is not None:
            self._require("records", data.labels.block_column, "data.labels.block_column")

    def _check_wide(self) -> None:
        pred = self.data.predictions
        available = self.table_columns["predictions"]
        if isinstance(pred.columns, tuple):
            for index, column in enumerate(pred.columns):
                self._require("predictions", column, f"data.predictions.columns[{index}]")
        selected = pred.match_columns(available)
        if not selected:
            what = f"the pattern '{pred.columns}'" if isinstance(pred.columns, str) else "data.predictions"
            self.add("data.predictions.columns",
                     f"data.predictions.columns: {what} selects no release column of {pred.shown}",
                     did_you_mean(str(pred.columns or ""), available)
                     or f"{pred.shown} has the columns {quote_list(available[:10], conjunction='and')}")
            return
        releases = self.checkpoint.releases
        if isinstance(releases, tuple):
            labels = [release_label(c, pred.columns) for c in selected]
            for index, label in enumerate(releases):
                if label not in selected and label not in labels:
                    self.add(f"releases[{index}]", f"releases: '{label}' is not a release column of {pred.shown}",
                             did_you_mean(label, labels + selected) or
                             f"releases: {quote_list(labels[:8], conjunction='and')}")

    # -- the data ---------------------------------------------------------------------------
    def check_data(self) -> None:
        """Ids null or duplicated, of types that cannot be joined, benchmark ids that are not
        records; counted in the engine. Raises :class:`InputError`."""
        data = self.data
        pred = data.predictions
        ids = {"records": data.records.id_column, "predictions": pred.id_column}
        if data.benchmark is not None:
            ids["benchmark"] = data.benchmark.id_column
        for role, column in ids.items():
            group = (str(pred.release_column),) if role == "predictions" and pred.layout == "long" else ()
            n_null, n_dup, examples = self.id_counts(role, column, group)
            if n_null:
                raise InputError(f"{self.shown(role)}: column '{column}' has {n_null} null record ids; every "
                                 "record needs an id")
            if n_dup:
                per = " within a release" if group else ""
                raise InputError(
                    f"{self.shown(role)}: column '{column}' has {n_dup} duplicated record ids{per} (e.g. "
                    f"{', '.join(repr(v) for v in examples)}); each record must appear once: drop the "
                    "duplicate rows or fix the id")
        kinds = {role: self.value_kind(role, column) for role, column in ids.items()}
        base = kinds["records"]
        for role, kind in kinds.items():
            if base is not None and kind is not None and kind != base:
                raise InputError(
                    f"record ids have different types in data.records ({data.records.shown}, column "
                    f"'{ids['records']}': {base}) and data.{role} ({getattr(data, role).shown}, column "
                    f"'{ids[role]}': {kind}), so no record would match; write the ids with one type in every "
                    "table (e.g. cast them in a query)")
        if data.benchmark is not None:
            missing, examples = self.orphans()
            if missing:
                raise InputError(
                    f"{self.shown('benchmark')}: {missing} benchmark record ids are not in the records "
                    f"({self.shown('records')}) (e.g. {', '.join(repr(v) for v in examples)}); the benchmark "
                    "must label records of the table")

    @abc.abstractmethod
    def id_counts(self, role: str, column: str, group: tuple[str, ...]) -> tuple[int, int, list[Any]]:
        """(null ids, duplicated ids, up to 3 duplicated examples), counted in the engine."""

    @abc.abstractmethod
    def value_kind(self, role: str, column: str) -> str | None:
        """The kind of a column's values ('integer', 'number', 'text', ...), ``None`` if all null."""

    @abc.abstractmethod
    def orphans(self) -> tuple[int, list[Any]]:
        """(benchmark ids not in the records, up to 3 of them)."""

    @abc.abstractmethod
    def release_values(self) -> list[Any]:
        """The distinct values of the long layout's release column, sorted."""

    @abc.abstractmethod
    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch: SQL text (engine sql) or a Spark DataFrame."""

    @abc.abstractmethod
    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch, whose records a labelling checkpoint fetches by id (SPEC 9):
        an :class:`~er_expectations.engines.sql.labelling.SqlLabelling` or a
        :class:`~er_expectations.engines.spark.labelling.SparkLabelling`."""

    # -- the GX side ------------------------------------------------------------------------
    #: GX's datasource type (``add_<gx_kind>``): ``sqlite``, ``postgres``, ``sql``, ``spark``.
    gx_kind: str

    @abc.abstractmethod
    def gx_options(self) -> dict[str, Any]:
        """The options of GX's datasource (compared with a stored one's to keep it)."""

    @abc.abstractmethod
    def gx_asset(self, datasource: Any, name: str, batch: Any) -> Any:
        """The asset ``name`` of a release's ``batch`` in GX's ``datasource``, added or kept."""

    @abc.abstractmethod
    def gx_batch_definition(self, asset: Any) -> Any:
        """The asset's whole-batch definition, added or kept."""

    def batch_parameters(self, batch: Any) -> dict[str, Any] | None:
        """The ``batch_parameters`` of ``Checkpoint.run``: ``None``, GX reads the asset."""
        return None
