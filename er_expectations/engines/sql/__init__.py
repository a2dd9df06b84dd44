"""The SQL engine: the release, its pair and the labelling rows, aggregated inside the database."""
