"""Checkpoint runs: everything that takes a checkpoint file, from the checks before writing to the alerts."""
