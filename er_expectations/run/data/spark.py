"""A checkpoint's data in Spark (``data.engine: spark``): checks and release batches as DataFrames."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.core.errors import SourceUnreachableError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.engines.sql.dialect import (
    WHITESPACE,  # what str.strip() removes, as SQL strips it
)
from er_expectations.run.data.base import BatchLayout, ReleaseSource

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config import CheckpointConfig
    from er_expectations.config.checkpoint import EngineTable
from er_expectations.run.data.source import (
    ID_COLUMN,
    NAME_COLUMN,
    PRED_COLUMN,
    REF_COLUMN,
    Source,
    one_line,
)


def _spark_kind(dtype: Any) -> str:
    name = type(dtype).__name__
    if name in ("ByteType", "ShortType", "IntegerType", "LongType"):
        return "integer"
    if name in ("FloatType", "DoubleType", "DecimalType"):
        return "number"
    if name in ("StringType", "VarcharType", "CharType"):
        return "text"
    return dtype.simpleString()


class SparkSource(Source):
    """The tables in Spark: catalog tables, queries (``spark.sql``) or Parquet paths."""

    engine = "spark"
    gx_kind = "spark"

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        super().__init__(checkpoint)
        self.spark: Any = None
        #: the ids of the three tables were checked (:meth:`check_data`): a batch's are unique
        self.checked = False

    def connect(self) -> None:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            self.add("data.engine", "data.engine: engine spark needs pyspark",
                     "pip install 'er-expectations[spark]'")
            self.issues.raise_if_any()
        try:
            session = SparkSession.getActiveSession()
            if session is None:
                builder = SparkSession.builder
                settings = self.data.spark
                if settings is not None and settings.master:
                    builder = builder.master(settings.master)
                for key, value in (settings.config if settings is not None else {}).items():
                    builder = builder.config(key, value)
                session = builder.appName(f"er-expectations {self.checkpoint.name}").getOrCreate()
        except Exception as error:  # noqa: BLE001 - Java missing, master unreachable, ...
            line, column = self.checkpoint.location("data.spark" if self.data.spark else "data.engine")
            raise SourceUnreachableError(
                f"{self.checkpoint.path}:{line}:{column}: cannot start Spark: {one_line(error)}; check "
                "data.spark.master and that Java runs (java -version), then run again") from None
        self.spark = session

    def gx_options(self) -> dict[str, Any]:
        """GX's Spark datasource has no options: the batch is passed to each run."""
        return {}

    def gx_asset(self, datasource: Any, name: str, batch: Any) -> Any:
        """A dataframe asset (the DataFrame itself goes in :meth:`batch_parameters`)."""
        try:
            return datasource.get_asset(name)
        except (KeyError, LookupError, ValueError):
            return datasource.add_dataframe_asset(name)

    def gx_batch_definition(self, asset: Any) -> Any:
        try:
            return asset.get_batch_definition("all")
        except (KeyError, LookupError, ValueError):
            return asset.add_batch_definition_whole_dataframe("all")

    def batch_parameters(self, batch: Any) -> dict[str, Any] | None:
        """GX's dataframe asset reads the release's DataFrame from the run's batch parameters."""
        return {"dataframe": batch}

    def _path(self, text: str) -> str:
        if "://" in text:
            return text
        path = Path(text).expanduser()
        return str(path if path.is_absolute() else (Path(self.checkpoint.path).absolute().parent / path).resolve())

    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        try:
            if config.table is not None:
                if not self.spark.catalog.tableExists(config.table):
                    database, _, name = config.table.rpartition(".")
                    try:
                        known = [t.name for t in self.spark.catalog.listTables(database or None)]
                    except Exception:  # noqa: BLE001 - an unknown database
                        known = []
                    self.add(f"data.{role}.table", f"data.{role}.table: table '{config.table}' is not in the Spark "
                             "catalog", did_you_mean(name, known) or
                             f"tables: {quote_list(sorted(known)[:20], conjunction='and') or '(none)'}")
                    return None
                frame = self.spark.table(config.table)
            elif config.query is not None:
                frame = self.spark.sql(config.query)
            else:
                frame = self.spark.read.parquet(self._path(str(config.path)))
            return frame, list(frame.columns)
        except Exception as error:  # noqa: BLE001 - AnalysisException, ParseException, ...
            what = {"table": f"Spark cannot read table '{config.table}'", "query": "Spark refused the query",
                    "path": f"Spark cannot read {self._path(str(config.path))}"}[config.kind]
            self.add(f"data.{role}.{config.kind}", f"data.{role}.{config.kind}: {what}: {one_line(error)}",
                     "check the path (a relative path is resolved against the checkpoint's folder)"
                     if config.kind == "path" else None)
            return None

    def _col(self, name: str) -> Any:
        from pyspark.sql import functions as F  # noqa: N812

        return F.col("`" + name.replace("`", "``") + "`")

    def check_data(self) -> None:
        """:meth:`Source.check_data` in one Spark job when the data is clean: the null and
        duplicated ids of the three tables and the benchmark ids that are not records,
        counted in one union; only when one is not zero are they counted again one by one
        (with examples) to say which."""
        data = self.data
        pred = data.predictions
        ids = {"records": data.records.id_column, "predictions": pred.id_column}
        if data.benchmark is not None:
            ids["benchmark"] = data.benchmark.id_column
        kinds = {role: self.value_kind(role, column) for role, column in ids.items()}
        if len({k for k in kinds.values() if k is not None}) <= 1 and self._clean(ids):
            self.checked = True
            return
        super().check_data()
        self.checked = True

    def _clean(self, ids: Mapping[str, str]) -> bool:
        """True when no table has a null or duplicated id and every benchmark id is a record."""
        from pyspark.sql import functions as F  # noqa: N812

        if self.data.predictions.layout == "long":  # ids repeat across releases: a group-by per table
            return self._clean_per_table(ids)
        # one id per row in every table: one group-by of the ids of the three tables
        roles = list(ids)
        tagged = None
        for role in roles:
            part = self.handles[role].select(self._col(ids[role]).alias(ID_COLUMN),
                                             *[F.lit(1 if other == role else 0).alias(other) for other in roles])
            tagged = part if tagged is None else tagged.unionByName(part)
        per_id = tagged.groupBy(ID_COLUMN).agg(*[F.sum(role).alias(role) for role in roles])
        null = F.col(ID_COLUMN).isNull()
        checks = [F.sum(F.when(null, F.col(role)).otherwise(0)) for role in roles]  # null ids
        checks += [F.sum(F.when(~null & (F.col(role) > 1), 1).otherwise(0)) for role in roles]  # duplicated
        if "benchmark" in ids:  # benchmark ids that are not records
            checks.append(F.sum(F.when(~null & (F.col("benchmark") > 0) & (F.col("records") == 0), 1).otherwise(0)))
        row = per_id.agg(*[check.alias(f"c{i}") for i, check in enumerate(checks)]).first()
        return row is None or not any(row)

    def _clean_per_table(self, ids: Mapping[str, str]) -> bool:
        from pyspark.sql import functions as F  # noqa: N812

        pred = self.data.predictions
        parts = []
        for role, column in ids.items():
            group = (str(pred.release_column),) if role == "predictions" else ()
            df, col = self.handles[role], self._col(column)
            per_id = df.groupBy(*[self._col(g) for g in group], col.alias("id")).agg(F.count(F.lit(1)).alias("k"))
            parts.append(per_id.agg(
                F.sum(F.when(F.col("id").isNull(), F.col("k")).otherwise(0)).cast("long").alias("nulls"),
                F.sum(F.when(F.col("id").isNotNull() & (F.col("k") > 1), 1).otherwise(0)).cast("long").alias("dups")))
        if "benchmark" in ids:
            b, r = self.handles["benchmark"], self.handles["records"]
            outside = (b.select(self._col(ids["benchmark"]).alias(ID_COLUMN))
                       .join(r.select(self._col(ids["records"]).alias(ID_COLUMN)), on=ID_COLUMN, how="left_anti"))
            parts.append(outside.agg(F.count(F.lit(1)).cast("long").alias("nulls"),
                                     F.lit(0).cast("long").alias("dups")))
        union = parts[0]
        for part in parts[1:]:
            union = union.unionByName(part)
        return all(not (row["nulls"] or row["dups"]) for row in union.collect())

    def id_counts(self, role: str, column: str, group: tuple[str, ...]) -> tuple[int, int, list[Any]]:
        from pyspark.sql import functions as F  # noqa: N812

        df = self.handles[role]
        col = self._col(column)
        (n_null,) = df.agg(F.count(F.lit(1)) - F.count(col)).first()
        dup = (df.where(col.isNotNull()).groupBy(*[self._col(g) for g in group], col).count()
               .where(F.col("count") > 1))
        n_dup = dup.count()
        examples = [row[column] for row in dup.orderBy(col).limit(3).collect()] if n_dup else []
        return int(n_null), int(n_dup), examples

    def value_kind(self, role: str, column: str) -> str | None:
        return _spark_kind(self.handles[role].schema[column].dataType)

    def orphans(self) -> tuple[int, list[Any]]:
        b, r = self.handles["benchmark"], self.handles["records"]
        bid, rid = self.data.benchmark.id_column, self.data.records.id_column  # type: ignore[union-attr]
        outside = (b.select(self._col(bid).alias(ID_COLUMN))
                   .join(r.select(self._col(rid).alias(ID_COLUMN)), on=ID_COLUMN, how="left_anti"))
        n = outside.count()
        return int(n), [row[ID_COLUMN] for row in outside.orderBy(ID_COLUMN).limit(3).collect()] if n else []

    def release_values(self) -> list[Any]:
        col = self._col(str(self.data.predictions.release_column))
        frame = self.handles["predictions"]
        return [row[0] for row in frame.select(col).where(col.isNotNull()).distinct().orderBy(col).collect()]

    def _predictions(self, release: ReleaseSource, name: str) -> Any:
        pred = self.data.predictions
        p = self.handles["predictions"]
        if pred.layout == "wide":
            return p.select(self._col(pred.id_column).alias(ID_COLUMN), self._col(release.key).alias(name))
        return (p.where(self._col(str(pred.release_column)) == release.value)
                .select(self._col(pred.id_column).alias(ID_COLUMN), self._col(str(pred.prediction_column)).alias(name)))

    def _name(self, r: Any) -> Any:
        from pyspark.sql import functions as F  # noqa: N812

        spec = self.data.name

        def strip(expr: Any) -> Any:
            return F.call_function("btrim", expr, F.lit(WHITESPACE))

        parts = [F.coalesce(strip(self._col(c).cast("string")), F.lit("")) for c in spec.columns]  # type: ignore[union-attr]
        joined = parts[0]
        for part in parts[1:]:
            joined = F.concat(joined, F.lit(spec.separator), part)  # type: ignore[union-attr]
        return F.nullif(strip(joined), F.lit(""))

    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch as a :class:`~er_expectations.engines.spark.labelling.SparkLabelling` (SPEC 9)."""
        from er_expectations.engines.spark.labelling import SparkLabelling
        from er_expectations.engines.spark.release import SparkRelease

        return SparkLabelling(SparkRelease(self.batch(layout, release, {}), prediction=layout.prediction_column))

    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch as a Spark DataFrame (lazy: nothing is computed here)."""
        from pyspark.sql import functions as F  # noqa: N812

        data = self.data
        r = self.handles["records"]
        rec_cols = [self._col(data.records.id_column).alias(ID_COLUMN)]
        if data.name is not None:
            rec_cols.append(self._name(r).alias(NAME_COLUMN))
        rec_cols += [self._col(c).alias(f"__er_r_{i}") for i, c in enumerate(layout.record_columns)]
        wide = data.predictions.layout == "wide"
        if wide:  # the baselines are columns of the same rows: one scan, no join per baseline
            predictions = self.handles["predictions"].select(
                self._col(data.predictions.id_column).alias(ID_COLUMN), self._col(release.key).alias(PRED_COLUMN),
                *[self._col(base.key).alias(f"__er_base_{index}") for index, base in enumerate(baselines.values())
                  if base is not None])
        else:
            predictions = self._predictions(release, PRED_COLUMN)
        frame = predictions.join(r.select(*rec_cols), on=ID_COLUMN, how="full_outer")
        out = [F.col(ID_COLUMN).alias(layout.id_column), F.col(PRED_COLUMN).alias(layout.prediction_column)]
        if data.benchmark is not None:
            b = self.handles["benchmark"]
            bench = b.select(self._col(data.benchmark.id_column).alias(ID_COLUMN),
                             self._col(data.benchmark.reference_column).alias(REF_COLUMN),
                             *[self._col(c).alias(f"__er_b_{i}") for i, c in enumerate(layout.extra_columns)])
            frame = frame.join(bench, on=ID_COLUMN, how="left")
            out.append(F.col(REF_COLUMN).alias(str(layout.reference_column)))
        if data.name is not None:
            out.append(F.col(NAME_COLUMN).alias(str(layout.name_column)))
        out += [F.col(f"__er_b_{i}").alias(c) for i, c in enumerate(layout.extra_columns)]
        out += [F.col(f"__er_r_{i}").alias(c) for i, c in enumerate(layout.record_columns)]
        from er_expectations.analysis.baseline_columns import baseline_label_column

        for index, (column, base) in enumerate(baselines.items()):
            if base is None:
                dtype = frame.schema[PRED_COLUMN].dataType
                out += [F.lit(None).cast(dtype).alias(column), F.lit(None).cast("string").alias(baseline_label_column(column))]
                continue
            name = f"__er_base_{index}"
            if not wide:
                frame = frame.join(self._predictions(base, name), on=ID_COLUMN, how="left")
            out += [F.col(name).alias(column), F.lit(base.label).cast("string").alias(baseline_label_column(column))]
        batch = frame.select(*out)
        from er_expectations.engines.spark.release import describe_batch

        # the batch joins the tables on their ids: checked unique in each, unique in the batch
        describe_batch(batch, checked_ids=[layout.id_column] if self.checked else [],
                       reference=layout.reference_column, name=layout.name_column)
        return batch
