"""The former path of :mod:`er_expectations.gx.docs.site_store`, kept for the GX projects that name it.

er-expectations 0.2.0 and earlier (the module moved into ``gx/docs/`` after 0.2.0, issue 32 item
5) wrote ``module_name: er_expectations.gx.site_store`` into each project's
``great_expectations.yml`` as the Data Docs site's store backend, which GX imports by that name
whenever it opens the site. This module re-exports the class, so such a project keeps writing
its pages until :func:`~er_expectations.gx.docs.data_docs.configure_site` (every
``er-expectations run``, the ``er_offline_data_docs`` action) writes the new path. Keep it while
0.2.0 projects may exist; ``tests/gx/test_offline_docs.py`` builds a site configured this way.
"""

from er_expectations.gx.docs.site_store import AtomicSiteStoreBackend

__all__ = ["AtomicSiteStoreBackend"]
