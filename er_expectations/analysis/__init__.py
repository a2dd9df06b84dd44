"""The pandas-facing analysis behind ``erx.*``: one module per family (SPEC 3-10)."""
