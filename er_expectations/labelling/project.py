"""A labelling project: a folder with ``workbench.yml`` and the store (docs/dev/workbench.md).

``workbench.yml`` says what is labelled: the records file (relative to the folder), its
record id and predicted cluster columns (SPEC 2.1: null = outside the release), the name and
block columns used by the search and QC rule 5 (SPEC 9), the attributes shown, and how the
draws were made (SPEC 1: records drawn uniformly with replacement, or a ``sample``
worksheet). The file is read with located errors (file, line, column, fix) like every
configuration file of the package (:mod:`er_expectations.config`).

Record ids keep their exact type: integer ids stay 64-bit integers (Parquet) and the store
keeps them as text, so that ids beyond 2^53 are never rounded.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import BeforeValidator, Field, model_validator

from er_expectations.analysis.error_audit import UNTAGGED
from er_expectations.analysis.sample_design import SampleDesign, read_design
from er_expectations.config.errors import ConfigError, IssueCollector
from er_expectations.config.models import ConfigModel, Text, name_list, problem, validate_node
from er_expectations.config.yamlnodes import compose_file
from er_expectations.core.errors import InputError
from er_expectations.labelling.store import MAX_NAME, LabelStore, id_text

__all__ = ["CONFIG_FILE", "DEFAULT_TAGS", "STORE_FILE", "Project", "ProjectConfig", "init_project",
           "load_config", "open_project", "project_inputs"]

CONFIG_FILE = "workbench.yml"
STORE_FILE = "workbench.sqlite"
#: The error tags of review mode when the project names none.
DEFAULT_TAGS = ("name variant", "common name", "co-author missing", "typo", "other")
#: The column of :meth:`Project.records` holding the name built from several ``name`` columns.
NAME_COLUMN = "__workbench_name__"


def _column(value: Any) -> Any:
    """A column name as written: a date such as ``2021-12-30`` as its ISO text, a number as written."""
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return getattr(value, "text", str(value))
    return value


Column = Annotated[Text, BeforeValidator(_column)]


def _review_tag(tag: str, info: Any) -> str:
    """A tag review mode can save and the error audit can read (issue 29, hostile round 3): at
    most :data:`MAX_NAME` characters, no surrounding spaces, not the audit's reserved row name."""
    if len(tag) > MAX_NAME:
        raise problem(f"{{where}}: the tag '{tag[:40]}…' has {len(tag)} characters; review mode saves tags of at "
                      f"most {MAX_NAME}", "give a short cause, such as 'name variant'")
    if tag != tag.strip():
        raise problem(f"{{where}}: the tag '{tag}' starts or ends with a space; review mode saves it without",
                      f"write '{tag.strip()}'")
    if tag.strip().lower() == UNTAGGED:
        raise problem(f"{{where}}: '{tag}' is the error audit's name for the errors nobody tagged",
                      "name the cause, such as 'other'")
    return tag


class ProjectConfig(ConfigModel):
    """The ``workbench.yml`` of a labelling project (docs/dev/workbench.md)."""

    section: ClassVar[str] = "workbench.yml"
    example: ClassVar[str] = "records: records.parquet, record_id: mention_id, prediction: inventor_id"
    records: Text
    predictions: Text | None = None
    record_id: Column
    prediction: Column
    name: name_list("column") | None = None  # type: ignore[valid-type]
    block: Column | None = None
    attributes: name_list("column") | None = None  # type: ignore[valid-type]
    sample: Text | None = None
    draws: Annotated[int, Field(ge=1, le=100_000)] | None = None
    seed: Annotated[int, Field(ge=0)] | None = None
    double_label_share: Annotated[float, Field(ge=0.0, le=1.0)] = 0.1
    tags: name_list("tag", check=_review_tag) = DEFAULT_TAGS  # type: ignore[valid-type]
    similarity: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8
    #: a top-up project (SPEC 14.3): the worksheet, the benchmark it extends and its reference column
    topup: Text | None = None
    benchmark: Text | None = None
    reference: Column = "reference"
    #: how the draws were made (the sample's design file, SPEC 12.3; issue 28): written by init
    design: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _design(self) -> ProjectConfig:
        wrong = None if self.design is None else SampleDesign.problem(self.design)
        if wrong is not None:
            raise problem("{where}: " + wrong, "restore the design 'label init' copied from the sample's design file")
        return self

    def sample_design(self) -> SampleDesign | None:
        """The design the draws were made with, or None (a sample of an older version)."""
        return None if self.design is None else SampleDesign.from_dict(self.design, where=CONFIG_FILE)

    @model_validator(mode="after")
    def _how_drawn(self) -> ProjectConfig:
        if self.topup is not None:
            if self.benchmark is None:
                raise problem("{where}: a top-up project names its benchmark",
                              "give 'benchmark: <the benchmark file the worksheet extends>'")
            return self
        if self.sample is None and (self.draws is None or self.seed is None):
            raise problem("{where}: say how the draws were made",
                          "give 'sample: <worksheet file>', or 'draws: <n>' and 'seed: <integer>'")
        return self


def load_config(path: str | os.PathLike) -> ProjectConfig:
    """Read a ``workbench.yml``; raises :class:`~er_expectations.config.ConfigError` listing every
    problem with its line, column and fix."""
    issues = IssueCollector(str(path))
    root = compose_file(path, issues)
    model = validate_node(ProjectConfig, root, issues) if root is not None else None
    issues.raise_if_any()
    if not isinstance(model, ProjectConfig):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: workbench.yml validated to nothing")
    return model


@dataclass
class Project:
    """An opened labelling project: its folder, its ``workbench.yml`` and its store."""

    folder: Path
    config: ProjectConfig
    store: LabelStore
    _records: pd.DataFrame | None = field(default=None, repr=False)
    _search: object | None = field(default=None, repr=False)
    _members: np.ndarray | None = field(default=None, repr=False)
    _id_index: pd.Index | None = field(default=None, repr=False)
    _member_rows: pd.DataFrame | None = field(default=None, repr=False)
    _cluster_index: tuple | None = field(default=None, repr=False)
    _outside_ids: frozenset[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # the store refuses an added record outside the release (SPEC 9 rule 4), through any caller
        self.store.outside_release = self.outside_release

    def outside_release(self, ids: Sequence[str]) -> list[str]:
        """The ids of ``ids`` (exact texts) that are records without a predicted cluster: outside
        the release, never in a true cluster of it (SPEC 9 rule 4). Unknown ids are not listed."""
        if not ids:
            return []
        if self._outside_ids is None:  # once per project: a save then costs a set look-up per id
            frame = self.records()
            outside = frame.loc[frame[self.config.prediction].isna(), self.config.record_id]
            self._outside_ids = frozenset(id_text(v) for v in outside.tolist())
        return [i for i in ids if i in self._outside_ids]

    @property
    def name_column(self) -> str | None:
        """The column of :meth:`records` holding the name (built when ``name`` lists several)."""
        names = self.config.name
        if not names:
            return None
        return names[0] if len(names) == 1 else NAME_COLUMN

    def path(self, relative: str) -> Path:
        """A path of ``workbench.yml``, relative to the project folder."""
        p = Path(relative).expanduser()
        return p if p.is_absolute() else self.folder / p

    def records(self) -> pd.DataFrame:
        """The records table (read once): the record id, the prediction, the name, block and
        attribute columns. Raises when a drawn record is no longer in it."""
        if self._records is None:
            frame = read_records(self.path(self.config.records), record_id=self.config.record_id,
                                 prediction=self.config.prediction, name=self.config.name, block=self.config.block,
                                 attributes=self.config.attributes or (),
                                 predictions=None if self.config.predictions is None
                                 else self.path(self.config.predictions))
            texts = list(dict.fromkeys(d.record for d in self.store.draws()))
            drawn = pd.Index([int(t) for t in texts] if self.store.id_kind == "integer" else texts, dtype=object)
            gone = drawn[~drawn.isin(frame[self.config.record_id])]
            if len(gone):
                raise InputError(f"{self.path(self.config.records)}: the drawn record(s) {', '.join(map(repr, gone[:5]))} "
                                 f"({len(gone)} in all) are no longer in the records; give the records file the "
                                 f"draws were made from (records: in {self.folder / CONFIG_FILE})")
            self._records = frame
        return self._records

    def qc_records(self, ids: Sequence[object]) -> pd.DataFrame:
        """The rows of :meth:`records` the labelling rules read (SPEC 9): the members of the drawn
        records' predicted clusters (found once) and the records ``ids`` name (ids in the records'
        type; one not in the records is absent). The rules give the same findings on it as on
        the whole table, without a pass over the table per check."""
        frame = self.records()
        if self._members is None or self._id_index is None:
            clusters = [d.predicted_cluster for d in self.store.draws()]
            wanted = [int(c) for c in clusters] if self.store.cluster_kind == "integer" else clusters
            pred = frame[self.config.prediction]
            self._members = np.flatnonzero(pred.isin(pd.Index(list(dict.fromkeys(wanted)))).to_numpy(
                dtype=bool, na_value=False))
            self._id_index = pd.Index(frame[self.config.record_id])
            self._member_rows = frame.iloc[self._members]
        named = list(dict.fromkeys(ids))
        if not named:
            return self._member_rows
        pos = self._id_index.get_indexer(pd.Index(named, dtype=self._id_index.dtype))
        extra = np.setdiff1d(pos[pos >= 0], self._members)
        return pd.concat([self._member_rows, frame.iloc[extra]]) if extra.size else self._member_rows

    def members(self, draw: int) -> pd.DataFrame:
        """The records of the draw's predicted cluster ĉ(r) (SPEC 2.2), drawn record first, then by
        id: the columns of :meth:`records` (name, block, attributes), ids in their exact type."""
        info = self.store.draw(draw)
        subset = self.qc_records([])
        cluster = int(info.predicted_cluster) if self.store.cluster_kind == "integer" else info.predicted_cluster
        rows = subset[(subset[self.config.prediction] == cluster).to_numpy(dtype=bool, na_value=False)]
        record = int(info.record) if self.store.id_kind == "integer" else info.record
        first = (rows[self.config.record_id] != record).to_numpy()
        return rows.assign(_first=first).sort_values(["_first", self.config.record_id],
                                                     kind="stable").drop(columns="_first")

    def cluster_rows(self, clusters: Sequence[object]) -> pd.DataFrame:
        """The records of the predicted clusters ``clusters`` (ids in the prediction's type):
        through an index of the prediction column, built once (no pass over the records per call)."""
        frame = self.records()
        if self._cluster_index is None:
            codes, uniques = pd.factorize(frame[self.config.prediction], use_na_sentinel=True)
            keep = np.flatnonzero(codes >= 0)
            order = keep[np.argsort(codes[keep], kind="stable")]
            start = np.zeros(len(uniques) + 1, dtype=np.int64)
            np.cumsum(np.bincount(codes[keep], minlength=len(uniques)), out=start[1:])
            self._cluster_index = (pd.Index(uniques), order, start)
        index, order, start = self._cluster_index
        found = index.get_indexer(pd.Index(list(dict.fromkeys(clusters)), dtype=index.dtype)) if clusters else []
        rows = [order[start[c]:start[c + 1]] for c in found if c >= 0]
        return frame.iloc[np.sort(np.concatenate(rows))] if rows else frame.iloc[:0]

    def search(self):  # -> RecordSearch (imported when used: the index is built once)
        """The record search over the project's names (:class:`~.search.RecordSearch`), built once."""
        if self._search is None:
            from er_expectations.labelling.search import RecordSearch

            if self.name_column is None:
                raise InputError(f"{self.folder / CONFIG_FILE}: no 'name:' column; name the records' name column "
                                 "(or columns) to search them")
            self._search = RecordSearch.build(self.records(), record_id=self.config.record_id, name=self.name_column,
                                              block=self.config.block, prediction=self.config.prediction)
        return self._search

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def read_records(path: Path, *, record_id: str, prediction: str, name: Sequence[str] | None = None,
                 block: str | None = None, attributes: Sequence[str] = (),
                 predictions: Path | None = None) -> pd.DataFrame:
    """The columns the workbench needs from the records file (and the ``predictions`` file
    joined on ``record_id``), ids in their exact type; a name of several columns is joined into
    :data:`NAME_COLUMN`."""
    from er_expectations.core.io import combine_name, read_table, same_id_kind, table_columns

    wanted = list(dict.fromkeys([record_id, prediction, *(name or ()), *([block] if block else []), *attributes]))
    main = table_columns(path)
    if predictions is not None:
        other_cols = table_columns(predictions)
        for column in (record_id, prediction):
            if column not in other_cols:
                raise InputError(f"{predictions}: no column {column!r}; the predictions file holds the record id "
                                 f"and the prediction column")
        frame = read_table(path, [c for c in wanted if c != prediction and c in main] + [c for c in [record_id]
                                                                                          if c not in main])
        pred = read_table(predictions, [record_id, prediction])
        same_id_kind(frame, path, pred, predictions, record_id)
        if pred[record_id].duplicated().any():
            raise InputError(f"{predictions}: column {record_id!r} has duplicated ids; one row per record")
        from er_expectations.core.io import nullable_integers

        pred = nullable_integers(pred, [prediction])
        frame = frame.merge(pred, on=record_id, how="left", validate="one_to_one")
    else:
        frame = read_table(path, [c for c in wanted if c in main] + [c for c in wanted if c not in main][:1])
    from er_expectations.analysis.labels import check_records, records_id_kind

    check_records(frame, record_id, prediction, [("block", block), *(("name", c) for c in name or ()),
                                                 *(("attributes", c) for c in attributes)])
    records_id_kind(frame[record_id])
    if frame[record_id].isna().any():
        raise InputError(f"{path}: column {record_id!r} has empty record ids; every record needs an id")
    if frame[record_id].duplicated().any():
        dup = frame.loc[frame[record_id].duplicated(), record_id].iloc[0]
        raise InputError(f"{path}: column {record_id!r} holds the id {dup!r} twice; each record appears once")
    if name and len(name) > 1:
        frame[NAME_COLUMN] = combine_name(frame, list(name))
    return frame


def project_inputs(folder: str | os.PathLike) -> list[Path]:
    """Every file the project in ``folder`` reads: ``workbench.yml``, its store and the files
    ``workbench.yml`` names (records, predictions, sample, top-up worksheet, benchmark), so that a
    command writing a file can refuse to overwrite one of them. A folder without a readable
    ``workbench.yml`` gives the two files only (opening the project then says what is wrong)."""
    root = Path(folder)
    files = [root / CONFIG_FILE, root / STORE_FILE]
    try:
        config = load_config(root / CONFIG_FILE)
    except Exception:  # noqa: BLE001 - reported by open_project, with every problem located
        return files
    for name in ("records", "predictions", "sample", "topup", "benchmark"):
        value = getattr(config, name)
        if value is not None:
            p = Path(value).expanduser()
            files.append(p if p.is_absolute() else root / p)
    return files


def open_project(folder: str | os.PathLike, *, read_only: bool = False) -> Project:
    """Open the project in ``folder`` (its ``workbench.yml`` and store); refuses a folder with
    neither, a bad ``workbench.yml`` (every problem located) and a store it cannot read.
    ``read_only=True`` never writes the store (``label export``; read-only media)."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: no such project folder; make one with 'er-expectations label init {root} ...'")
    if not (root / CONFIG_FILE).is_file():
        raise InputError(f"{root}: no {CONFIG_FILE} here; make the project with 'er-expectations label init {root} ...'")
    config = load_config(root / CONFIG_FILE)
    return Project(folder=root.resolve(), config=config, store=LabelStore.open(root / STORE_FILE, read_only=read_only))


def _yaml_text(values: dict[str, Any]) -> str:
    lines = ["# a labelling project of er-expectations (docs/dev/workbench.md)"]
    for key, value in values.items():
        if value is None:
            continue
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")  # JSON is YAML: quoted, exact
    return "\n".join(lines) + "\n"


def _kind(ids: pd.Series) -> str:
    return "integer" if pd.api.types.is_integer_dtype(ids.dtype) and not pd.api.types.is_bool_dtype(ids.dtype) \
        else "text"


def _sample_draws(sample: Path, frame: pd.DataFrame, *, record_id: str, prediction: str) -> pd.DataFrame:
    """The draws of a worksheet (``draw``, ``record_id``, ``predicted_cluster``), checked against
    the release (drawn records in it, predicted clusters the same) with the labels' own checks."""
    from er_expectations.analysis.labelqc import prepare_labels
    from er_expectations.core.io import read_table

    sheet = read_table(sample)
    for column in ("removed", "added"):
        if column not in sheet.columns:
            sheet[column] = None
    try:
        parsed, look = prepare_labels(sheet, frame, prediction, record_id=record_id, block=None, name=None,
                                      columns=None, separator=";")
    except InputError as exc:
        raise InputError(f"{sample}: {exc}") from None
    if len(parsed) == 0:
        raise InputError(f"{sample}: the worksheet has no draws")
    return pd.DataFrame({"draw": parsed.draw, "record_id": pd.Series(parsed.record, dtype=object),
                         "predicted_cluster": pd.Series([look.cluster[r] for r in parsed.record], dtype=object)})


def _doubles(n: int, share: float, seed: int) -> np.ndarray:
    """Which of ``n`` draws are labelled twice: round(share · n) of them, uniformly without
    replacement (numpy ``default_rng([seed, 2])``, independent of the draws themselves)."""
    mask = np.zeros(n, dtype=bool)
    k = int(round(share * n))
    if k:
        mask[np.random.default_rng([seed, 2]).choice(n, size=k, replace=False)] = True
    return mask


def new_project_folder(folder: str | os.PathLike) -> tuple[Path, Callable[[str | os.PathLike], str]]:
    """The folder of a new project (checked: not a file, its parent exists, no project in it yet)
    and the function writing a path relative to it, as ``workbench.yml`` keeps paths."""
    root = Path(folder)
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: is a file; give a folder for the project")
    if not root.parent.is_dir():
        raise InputError(f"{root}: the folder {root.parent} does not exist; create it first")
    for existing in (CONFIG_FILE, STORE_FILE):
        if (root / existing).exists() or (root / existing).is_symlink():
            raise InputError(f"{root / existing}: the folder holds a labelling project already; open it with "
                             "'er-expectations label serve', or choose another folder")
    base = root.resolve() if root.exists() else root.parent.resolve() / root.name

    def relative(p: str | os.PathLike) -> str:
        absolute = Path(p).expanduser().resolve()
        try:
            return os.path.relpath(absolute, base)
        except ValueError:  # another drive (Windows)
            return str(absolute)

    return root, relative


def write_config(root: Path, values: dict[str, Any]) -> ProjectConfig:
    """Write ``workbench.yml`` (atomically) from ``values`` and read it back as
    :func:`open_project` will (None values are left out)."""
    from er_expectations.core.io import atomic_write_text

    atomic_write_text(root / CONFIG_FILE, _yaml_text(values))
    return load_config(root / CONFIG_FILE)


def init_project(folder: str | os.PathLike, *, records: str | os.PathLike, record_id: str, prediction: str,
                 predictions: str | os.PathLike | None = None, name: str | Sequence[str] | None = None,
                 block: str | None = None, attributes: Sequence[str] = (), sample: str | os.PathLike | None = None,
                 draws: int | None = None, seed: int | None = None, double_label_share: float = 0.1,
                 tags: Sequence[str] = DEFAULT_TAGS, similarity: float = 0.8) -> Project:
    """Make a labelling project in ``folder`` (created if missing; its parent must exist).

    The draws are those of the ``sample`` worksheet (``er-expectations sample``), or ``draws``
    records drawn uniformly with replacement from the release with ``seed`` (SPEC 1,
    ``draw_sample``). ``double_label_share`` of the draws are labelled twice, blind. Refuses a
    folder that holds a project already; writes only ``workbench.yml`` and the store in it.
    """
    root, relative = new_project_folder(folder)
    if (sample is None) == (draws is None):
        raise InputError("give either sample= (a worksheet from 'er-expectations sample') or draws= (the number "
                         "of records to draw), not both")
    if draws is not None and seed is None:
        raise InputError("seed=None: give a seed (an integer ≥ 0) so that the draws can be made again")
    names = [name] if isinstance(name, str) else list(name or [])

    values: dict[str, Any] = {
        "records": relative(records), "predictions": None if predictions is None else relative(predictions),
        "record_id": record_id, "prediction": prediction, "name": names or None, "block": block,
        "attributes": list(attributes) or None, "sample": None if sample is None else relative(sample),
        "draws": draws, "seed": seed if seed is not None else 0, "double_label_share": double_label_share,
        "tags": list(tags), "similarity": similarity,
    }
    try:
        config = ProjectConfig.model_validate(values)
    except Exception as exc:  # pydantic's errors, as one line per parameter
        errors = getattr(exc, "errors", None)
        if errors is None:
            raise
        first = errors()[0]
        loc = first["loc"]
        where = (str(loc[0]) + "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in loc[1:])) if loc \
            else "arguments"
        ctx = first.get("ctx") or {}
        if "message" in ctx:  # our own validators: "{where}: …" with a hint
            text = str(ctx["message"]).replace("{where}", where).replace("{got}", repr(first.get("input")))
            raise InputError(text + (f"; {ctx['hint']}" if ctx.get("hint") else "")) from None
        raise InputError(f"{where}={values.get(str(loc[0]))!r}: {first['msg']}") from None
    frame = read_records(Path(records), record_id=record_id, prediction=prediction, name=names, block=block,
                         attributes=attributes, predictions=None if predictions is None else Path(predictions))
    if sample is not None:
        drawn = _sample_draws(Path(sample), frame, record_id=record_id, prediction=prediction)
        design = read_design(sample)  # None: a worksheet of an older version records none
        if design is not None and design.draws != len(drawn):
            raise InputError(f"{sample}: the worksheet has {len(drawn):,} draws, its design file records "
                             f"{design.draws:,}; give the worksheet written with that design file")
    else:
        from er_expectations.analysis.sampling import draw_sample

        drawn = draw_sample(frame, prediction=prediction, n=int(draws), seed=int(seed), record_id=record_id)  # type: ignore[arg-type]
        design = SampleDesign.drawn(name="cluster_size", release=prediction, record_id=record_id,
                                    population=drawn.attrs["population"], draws=len(drawn), seed=seed)
    values["design"] = None if design is None else design.as_dict()
    double = _doubles(len(drawn), double_label_share, int(config.seed or 0))
    rows = list(zip(drawn["draw"].tolist(), drawn["record_id"].tolist(), drawn["predicted_cluster"].tolist(),
                    double.tolist(), strict=True))
    root.mkdir(exist_ok=True)
    store_path = root / STORE_FILE
    store = LabelStore.create(store_path, draws=rows, id_kind=_kind(frame[record_id]),
                              cluster_kind=_kind(frame[prediction].dropna()))
    try:
        config = write_config(root, values)  # what open_project reads: the same model
    except BaseException:
        store.close()
        store_path.unlink(missing_ok=True)
        (root / CONFIG_FILE).unlink(missing_ok=True)
        raise
    return Project(folder=root.resolve(), config=config, store=store, _records=frame)


__all__ += ["ConfigError", "new_project_folder", "read_records", "write_config"]
