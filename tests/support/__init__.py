"""Helpers shared by the tests (not tests themselves): one home for the code several test
folders import, so that no test module imports another.

* :mod:`.paths` — the repository, the bundled demo data, the tests' own data folder;
* :mod:`.reference_impl` — the slow, obviously correct reference of the statistics (SPEC 2–7);
* :mod:`.enginetools` — which engines run (SQLite, PostgreSQL, Spark) and loading a frame into them;
* :mod:`.gxtools` — GX contexts and validating a frame through a datasource of each engine;
* :mod:`.drift`, :mod:`.labeltools` — the drift and labelling cases several folders run;
* :mod:`.toyproject` — the toy checkpoint project of the runner tests;
* :mod:`.datadocs`, :mod:`.chromium` — offline Data Docs sites and reading them (HTML, headless Chromium);
* :mod:`.sourcetools`, :mod:`.historytools` — warehouses and PostgreSQL schemas for the run layer.

``pyproject.toml`` puts ``tests/`` on ``sys.path`` (``pythonpath``), so a test imports
``from support.gxtools import validate_frame`` from any folder.
"""
