"""The pandas engine: the release, its pair and the checks of a record table, aggregated by pandas."""
