"""The former path of :mod:`er_expectations.gx.docs.data_docs`, kept for the GX projects that name it.

er-expectations 0.2.0 and earlier (the module moved into ``gx/docs/`` after 0.2.0, issue 32 item
5) wrote ``module_name: er_expectations.gx.data_docs`` into each project's
``great_expectations.yml``: the Data Docs site's view, page renderers and index builder, which GX
imports by that name whenever it builds the site (``context.build_data_docs``, GX's
``UpdateDataDocsAction``). This module re-exports those classes, so such a project builds its
Data Docs as before until :func:`~er_expectations.gx.docs.data_docs.configure_site` (every
``er-expectations run``, the ``er_offline_data_docs`` action) writes the new path. Keep it while
0.2.0 projects may exist; ``tests/gx/test_offline_docs.py`` builds a site configured this way.
"""

from er_expectations.gx.docs.data_docs import (
    DescribedSuitePageRenderer,
    OfflinePageView,
    OfflineSiteIndexBuilder,
    SeverityValidationResultsPageRenderer,
)

__all__ = ["DescribedSuitePageRenderer", "OfflinePageView", "OfflineSiteIndexBuilder",
           "SeverityValidationResultsPageRenderer"]
