"""Load the bundled PatentsView tables into a SQLite file, standing in for a warehouse.

    python examples/load_warehouse.py                      # -> build/warehouse.db
    er-expectations run checkpoints/patentsview_sqlite.yml --release 2022-06-30

The checkpoint then reads the tables where they are (``data.engine: sql``): each release's
batch is a query run by the database, and only per-cluster tables come back to Python.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

DATA = Path(__file__).resolve().parents[1] / "er_expectations" / "data" / "patentsview"
DEFAULT = Path(__file__).resolve().parents[1] / "build" / "warehouse.db"


def load(path: Path) -> None:
    """Write the tables ``mentions`` (id and name parts), ``predictions`` (a column per
    release) and ``benchmark`` to the SQLite file ``path`` (replaced if it exists)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(f"sqlite:///{path}")
    tables = {
        "mentions": pd.read_parquet(DATA / "records.parquet", columns=["mention_id", "name_first", "name_last"]),
        "predictions": pd.read_parquet(DATA / "predictions.parquet"),
        "benchmark": pd.read_parquet(DATA / "benchmark.parquet"),
    }
    for name, frame in tables.items():
        frame.to_sql(name, engine, index=False, if_exists="replace", chunksize=20_000)
    engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", nargs="?", type=Path, default=DEFAULT, help=f"SQLite file (default {DEFAULT})")
    args = parser.parse_args(argv)
    load(args.database)
    print(f"wrote {args.database}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
