"""The Spark engine: the release, its pair and the labelling rows, aggregated by Spark."""
