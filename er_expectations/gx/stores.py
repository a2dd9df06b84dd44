"""GX's store classes, importable under this package's name.

A store that a project's ``great_expectations.yml`` names with ``module_name:
er_expectations.gx.stores`` makes GX import er-expectations when it opens the project.
"""

from great_expectations.data_context.store import ExpectationsStore

__all__ = ["ExpectationsStore"]
