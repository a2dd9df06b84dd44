"""Data Docs: the offline site GX builds with this package's renderers, view and index builder.

* :mod:`.data_docs`: the site's configuration (:func:`~.data_docs.configure_site`), its page
  renderers, the escaped Jinja2 view, the index and its cache, :func:`~.data_docs.build_site`;
* :mod:`.site_store`: the site's store backend (every page written atomically);
* :mod:`.html_view`, :mod:`.render`: GX's content blocks as escaped HTML, and the helpers the
  expectations' renderers build them with;
* :mod:`.chart_blocks`, :mod:`.chart_prewarm`: the charts of a page, and those drawn ahead in
  worker processes during a run;
* :mod:`.error_audit_view`, :mod:`.history_view`, :mod:`.provenance_view`, :mod:`.glossary`:
  the sections of a validation page (the error audit, a check's history, the provenance lines,
  the terms the page uses).

The site's classes are named in a project's ``great_expectations.yml`` by these modules' paths;
projects configured by er-expectations 0.2.0 and earlier name the modules' former paths
(``er_expectations.gx.data_docs``, ``er_expectations.gx.site_store``), which stay importable.
"""
