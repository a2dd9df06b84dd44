"""The labelling workbench without its web pages (issue 19, docs/dev/workbench.md).

A labelling project is a folder: ``workbench.yml`` (:mod:`.project`), the SQLite store of the
decisions (:mod:`.store`), a search index over the records (:mod:`.search`), the quality
control of one draw (:mod:`.qc`, SPEC 9) and the agreement of labellers (:mod:`.agreement`).
The web app (``er_expectations/web/``) sits on top of this layer; nothing here imports it.
"""

from __future__ import annotations
