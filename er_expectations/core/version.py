"""The version of er-expectations, declared once (pyproject.toml reads it from here)."""

__version__ = "0.3.0.dev0"
