"""The labelling workbench's web app (issue 19, docs/dev/workbench.md): a local page over a
labelling project (:mod:`er_expectations.labelling`), served by uvicorn behind a token.

``erx.workbench(project)`` serves it from a notebook; ``er-expectations label serve`` from a
shell. This layer sits above ``workbench/`` and below ``cli/``.
"""

from __future__ import annotations

from er_expectations.web.server import Workbench, workbench

__all__ = ["Workbench", "workbench"]
