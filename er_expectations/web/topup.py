"""The workbench's top-up mode: pages and JSON endpoints of a top-up project (SPEC 14.3).

A top-up project's tasks are sampled entities (:mod:`er_expectations.labelling.topup_store`).
Its page shows the entity's known records, asks of each candidate record "Is this the same
person as the records above?" (yes / no, or all at once), and searches the release's records
that the benchmark does not know so that a new record found elsewhere can be added (reason
``found by search``); records outside the release or known to the benchmark are shown greyed
with the reason and are refused at save. Saves go through
:meth:`~er_expectations.labelling.topup_store.TopupStore.save` (one transaction, versioned).

Routes (behind the token like every route of :mod:`er_expectations.web.app`):

``GET /``                        the entities and how many are answered (the app's home)
``GET /entity/N``                the page of entity N
``GET /api/entity/N``            its state as JSON
``GET /api/entity/N/search``     ``?q=TEXT[&limit=K]``: records to add, each addable or with the reason not
``POST /api/entity/N/save``      ``{belongs: {id: "yes"|"no"}, found: [ids], expected_version}``; 200 saved,
                                 409 conflict, 4xx refused with the reason
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from er_expectations.core.errors import InputError
from er_expectations.web.errors import whole_number
from er_expectations.web.guard import MAX_BODY, BodyTooLarge
from er_expectations.web.model import Workspace, text_of

__all__ = ["QUESTION", "TopupPages"]

#: The question asked of every candidate record (plain words, SPEC 14.3's "belongs to c").
QUESTION = "Is this the same person as the records above?"
#: Most hits one search lists.
MAX_HITS = 200
SAVE_KEYS = frozenset({"belongs", "found", "expected_version"})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class TopupPages:
    """The top-up routes over ``app`` (a :class:`~er_expectations.web.app.WebApp`: its ``page``,
    ``labeller`` and :class:`Workspace`)."""

    def __init__(self, app) -> None:
        self.app = app

    @property
    def space(self) -> Workspace:
        return self.app.space

    def routes(self) -> list[Route]:
        return [Route("/entity/{n}", self.entity_page), Route("/api/entity/{n}", self.state_api),
                Route("/api/entity/{n}/search", self.search_api),
                Route("/api/entity/{n}/save", self.save_api, methods=["POST"])]

    def counts(self) -> tuple[int, int]:
        """Entities whose every candidate is answered, and entities."""
        topup = self.space.topup
        tasks, answers = topup.tasks(), topup.answers()
        done = sum(1 for t in tasks if t.task in answers
                   and all(c.record in answers[t.task].belongs for c in t.candidates))
        return done, len(tasks)

    # -- pages ------------------------------------------------------------------------------------
    def home(self, request: Request, me: str) -> Response:
        topup = self.space.topup
        answers = topup.answers()
        rows = []
        for t in topup.tasks():
            a = answers.get(t.task)
            answered = 0 if a is None else sum(c.record in a.belongs for c in t.candidates)
            rows.append({"task": t.task, "entity": t.entity, "name": self._names(t.known), "known": len(t.known),
                         "candidates": len(t.candidates), "answered": answered,
                         "found": 0 if a is None else len(a.found), "by": "" if a is None else a.labeller})
        return self.app.page("topup_queue.html.j2", request, rows=rows, release=self.space.release)

    def _names(self, ids) -> str:
        rows = [r for r in self.space.rows(list(ids)).tolist() if r >= 0]
        return ", ".join(dict.fromkeys(self.space.names[r] for r in rows))

    async def entity_page(self, request: Request) -> Response:
        me = self.app.labeller(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        try:
            state = await run_in_threadpool(self.state, request.path_params["n"])
        except InputError as exc:
            return self.app.page("error.html.j2", request, status=404, message=str(exc))
        return self.app.page("topup.html.j2", request, state=state, question=QUESTION,
                             columns=self.space.columns, release=self.space.release)

    # -- JSON -------------------------------------------------------------------------------------
    def _task(self, n: str):
        number = whole_number(n)
        if number is None:
            raise InputError(f"entity {n.strip()[:40]!r}: give an entity number (a whole number from 1, digits 0-9)")
        return self.space.topup.task(number)

    def _record(self, record: str, **extra) -> dict:
        row = self.space.row(record)
        if row is None:
            return {"id": record, "name": "", "cells": [], "missing": True, **extra}
        m = self.space.member(row)
        return {"id": m.id, "name": m.name, "cells": list(m.cells), "missing": False, **extra}

    def state(self, n: str) -> dict:
        """The entity's page state: known records, candidates, the saved answer and its version."""
        task = self._task(n)
        answer = self.space.topup.answer(task.task)
        return {"task": task.task, "entity": task.entity,
                "known": [self._record(r) for r in task.known],
                "candidates": [self._record(c.record, reason=c.reason, cluster=c.predicted_cluster)
                               for c in task.candidates],
                "belongs": {} if answer is None else answer.belongs,
                "found": [] if answer is None else [self._record(r) for r in answer.found],
                "version": 0 if answer is None else answer.version,
                "labeller": None if answer is None else answer.labeller,
                "saved_at": None if answer is None else answer.saved_at}

    async def state_api(self, request: Request) -> Response:
        if self.app.labeller(request) is None:
            return _error(401, "sign in first: open / and give your name")
        try:
            return JSONResponse(await run_in_threadpool(self.state, request.path_params["n"]))
        except InputError as exc:
            return _error(404, str(exc))

    async def search_api(self, request: Request) -> Response:
        if self.app.labeller(request) is None:
            return _error(401, "sign in first: open / and give your name")
        try:
            return JSONResponse(await run_in_threadpool(self._search, request.path_params["n"],
                                                        request.query_params))
        except InputError as exc:
            return _error(404 if "entity" in str(exc)[:12] else 422, str(exc))

    def _search(self, n: str, params) -> dict:
        space = self.space
        task = self._task(n)
        if space.search is None:
            raise InputError("this project names no 'name:' column in workbench.yml: nothing to search")
        limit_text = params.get("limit", "20")
        limit = whole_number(limit_text)
        if limit is None or not 1 <= limit <= MAX_HITS:
            raise InputError(f"limit={limit_text[:20]!r}: give a whole number from 1 to {MAX_HITS}")
        near = next((r for r in task.known if space.row(r) is not None), None)
        # the new records of the release first: look deeper, then list the addable hits before the others
        found = space.search.find(params.get("q", ""), near=near, limit=min(5 * limit, 5 * MAX_HITS))
        candidates = {c.record for c in task.candidates}
        hits = []
        for h in found.hits:
            record = space.ids[h.row]
            why = space.why_not_added(h.row) or ("a candidate above: answer it there" if record in candidates else "")
            hits.append(self._record(record, addable=not why, reason=why, block=text_of(h.block)))
        hits.sort(key=lambda h: not h["addable"])
        return {"hits": hits[:limit], "truncated": found.truncated or len(hits) > limit,
                "release": space.release}

    async def save_api(self, request: Request) -> Response:
        me = self.app.labeller(request)
        if me is None:
            return _error(401, "sign in first: open / and give your name")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "send the answer as JSON (Content-Type: application/json)")
        try:
            body, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise BodyTooLarge(f"request body over {MAX_BODY:,} bytes")
                body.append(chunk)
            payload = json.loads(b"".join(body))
        except BodyTooLarge as exc:
            return _error(413, str(exc))
        except (ValueError, UnicodeDecodeError) as exc:
            return _error(400, f"the body is not JSON: {exc}")
        except RecursionError:
            return _error(400, "the body nests lists or objects too deep to read; send a flat JSON object")
        return await run_in_threadpool(self._save, request.path_params["n"], me, payload)

    def _save(self, n: str, me: str, payload: object) -> Response:
        from er_expectations.labelling.topup_store import TopupConflict

        space = self.space
        try:
            task = self._task(n)
        except InputError as exc:
            return _error(404, str(exc))
        if not isinstance(payload, dict) or set(payload) - SAVE_KEYS:
            return _error(422, "give the answer as a JSON object {belongs: {record id: 'yes' or 'no'}, found: "
                               "[record ids], expected_version}")
        belongs, found = payload.get("belongs", {}), payload.get("found", [])
        expected = payload.get("expected_version")
        if not isinstance(belongs, dict):
            return _error(422, "belongs: give an object {record id: 'yes' or 'no'}")
        if not isinstance(found, list) or not all(isinstance(r, str) for r in found):
            return _error(422, "found: give a list of record ids (as text)")
        if isinstance(expected, bool) or not isinstance(expected, int) or not 0 <= expected < 2**62:
            return _error(422, f"expected_version={expected!r}: give the version the page started from (0 when new)")
        for record in found:
            row = space.row(record)
            why = "not a record of this project" if row is None else space.why_not_added(row)
            if why:
                return _error(422, f"record {record[:60]!r} cannot be added to entity {task.entity!r}: {why}; only "
                                   f"new records of release {space.release} (unknown to the benchmark) join an entity")
        try:
            result = space.topup.save(task.task, me, belongs=belongs, found=found, expected_version=expected)
        except InputError as exc:
            return _error(422, str(exc))
        if isinstance(result, TopupConflict):
            current = result.current
            return JSONResponse({"conflict": "version", "theirs": None if current is None else {
                "belongs": current.belongs, "found": list(current.found), "version": current.version,
                "labeller": current.labeller}}, status_code=409)
        done, total = self.counts()
        saved = result.answer
        return JSONResponse({"saved": {"version": saved.version, "labeller": saved.labeller, "at": saved.saved_at,
                                       "belongs": saved.belongs, "found": list(saved.found)},
                             "progress": {"done": done, "entities": total}})
