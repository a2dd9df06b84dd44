"""The workbench's web app: pages and JSON endpoints over a labelling project (docs/dev/workbench.md).

Pages are rendered on the server by Jinja2 (``autoescape=True``, ``StrictUndefined``) from
``web/templates``; the small script ``web/static/draw.js`` makes the draw page interactive
through the JSON endpoints. Every write goes through
:meth:`~er_expectations.labelling.store.LabelStore.save` (SPEC 2.2: A_r, B_r); the findings
of SPEC 9 come from :func:`~er_expectations.labelling.qc.check_draw` after each save.

Routes (all behind :class:`~er_expectations.web.guard.Guard`, the token):

``GET /``                   the queue and progress (k of n, per labeller); sign-in first
``GET|POST /signin``        the labeller's name (a cookie; no password on localhost); a personal
                            link (team mode, issue 31) names its labeller and skips it
``GET /lead``               the lead's view (the lead's link only, :mod:`er_expectations.web.team`)
``GET /next``               the next draw of the queue for the labeller
``GET /draw/N``             the draw page (its first member rows)
``GET /draw/N/rows``        ``?from=K``: the member rows from the K-th on (HTML), asked by the page
                            after its first paint
``GET /agreement``          agreement of the doubly labelled draws, disagreements to reconcile
``GET /review/N``           review mode: the true cluster by predicted cluster, error tags
``POST /api/review/N/tag``  ``{tag, kind, records}``: an error tag on the draw's true cluster
``GET /estimates``          the estimates so far (SPEC 6) and the draws still needed (``?target_se=``)
``GET /api/draw/N``         the draw's state as JSON
``GET /api/search``         ``?draw=N&q=TEXT[&limit=K]``: ranked records to add (typo tolerant), with
                            how many records carry each name listed (issue 31)
``GET /api/expand``         ``?draw=N&name=NAME`` or ``&block=B``: every record of that name or block,
                            grouped by predicted cluster (the draw's own members and the records
                            outside the release set apart), a page at a time: ``&page=P`` the
                            clusters with counts and a preview, ``&cluster=C&offset=O`` more of one
                            cluster, ``&cluster=C&ids=all`` all its ids (to add), ``&outside=1&offset=O``
``POST /api/draw/N/save``   a decision; 200 saved, 409 conflict, 4xx bad input
``GET /api/draw/N/findings``  SPEC 9's findings for my saved decision (the page asks right after a save)
``GET /api/progress``       progress as JSON
``GET /favicon.ico``        the icon (``/static/favicon.svg``), so that no page's icon request is a 404

A top-up project (SPEC 14.3) has its own home and entity pages instead of the draws
(:mod:`er_expectations.web.topup`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from er_expectations.core.errors import InputError
from er_expectations.labelling.decide import plural
from er_expectations.labelling.store import ANSWERED, Conflict, Decision, labeller_name
from er_expectations.web.errors import LOCK_WAIT, exception_handlers, whole_number
from er_expectations.web.guard import MAX_BODY, BodyTooLarge, Guard
from er_expectations.web.model import FOLD_AT, Workspace, decision_json, text_of
from er_expectations.web.team import LeadPages, identity
from er_expectations.web.topup import TopupPages

__all__ = ["build_app", "labeller_cookie"]

HERE = Path(__file__).resolve().parent
#: Member rows sent with the draw page; draw.js asks the rest (``/draw/N/rows``) after the first paint.
FIRST_ROWS = 50
#: The metrics of the estimates page (SPEC 5) and the replicates of its plan (fast enough to update).
ESTIMATED = ("pairwise_precision", "pairwise_recall", "pairwise_f")
PLAN_REPS = 300
#: Most hits one search lists (the page asks for more 20 at a time).
MAX_HITS = 200
#: An expansion's pages (issue 31): predicted clusters per page, records shown of each at first,
#: records per further page of one cluster (or of the records outside the release).
EXPAND_GROUPS, EXPAND_PREVIEW, EXPAND_PAGE = 20, 5, 100
#: Keys a save request may carry.
SAVE_KEYS = frozenset({"status", "removed", "added", "note", "reason", "expected_version", "seen", "true_cluster"})


def labeller_cookie(port: int) -> str:
    """The cookie holding the signed-in labeller's name on the server on ``port``."""
    return f"erx-labeller-{int(port)}"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.globals["FOLD_AT"] = FOLD_AT
    env.globals["FIRST_ROWS"] = FIRST_ROWS
    env.filters["count"] = lambda n: f"{int(n):,}"
    env.filters["breakable"] = breakable
    return env


_PUNCTUATION = re.compile(r"([:_/.@-])(?=\w)")


def breakable(text: object) -> Markup:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each ``: _ / . @ -`` that a
    letter or digit follows: a block key or a date wraps at its punctuation, never inside a word,
    so that a narrow window needs no sideways scroll (issue 31). Names are not passed through it."""
    return Markup(_PUNCTUATION.sub(r"\1<wbr>", str(escape(text))))


class BadRequest(Exception):
    """A request the app refuses: its status and message (sent as JSON or an HTML page)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _json_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class WebApp:
    """The routes over one :class:`Workspace`; :attr:`guard` is the ASGI app to serve."""

    def __init__(self, space: Workspace, *, token: str, folder: Path | None = None) -> None:
        self.space = space
        space.store.wait_for_lock(LOCK_WAIT)  # a store locked elsewhere: 503 at once, not after 30 s
        self.env = _environment()
        routes = [
            Route("/", self.home), Route("/signin", self.signin, methods=["GET", "POST"]),
            Route("/signout", self.signout, methods=["POST"]), Route("/next", self.next_draw),
            Route("/draw/{n}", self.draw_page), Route("/draw/{n}/rows", self.draw_rows),
            Route("/agreement", self.agreement_page),
            Route("/estimates", self.estimates_page), Route("/review/{n}", self.review_page),
            Route("/api/review/{n}/tag", self.tag_api, methods=["POST"]),
            Route("/api/draw/{n}", self.draw_api), Route("/api/draw/{n}/save", self.save_api, methods=["POST"]),
            Route("/api/draw/{n}/findings", self.findings_api),
            Route("/api/search", self.search_api), Route("/api/expand", self.expand_api),
            Route("/api/progress", self.progress_api), Route("/favicon.ico", _favicon),
            Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
        ]
        #: a top-up project's pages (SPEC 14.3, :mod:`er_expectations.web.topup`); None otherwise
        self.topup = TopupPages(self) if space.topup is not None else None
        if self.topup is not None:
            routes[:0] = self.topup.routes()
        else:
            routes[:0] = LeadPages(self).routes()
        self.starlette = Starlette(routes=routes, exception_handlers={
            404: self._not_found, 405: self._not_allowed, **exception_handlers()})
        #: ``folder``: the project whose access file names the tokens (team mode); None: ``token`` only
        self.guard = Guard(self._catch, token=token, folder=folder)

    # -- plumbing -----------------------------------------------------------------------------------
    async def _catch(self, scope, receive, send) -> None:
        try:
            await self.starlette(scope, receive, send)
        except BodyTooLarge as exc:
            await _json_error(413, str(exc))(scope, receive, send)

    async def _not_found(self, request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return _json_error(404, f"no such endpoint: {request.url.path[:100]}")
        return self.page("error.html.j2", request, status=404, message="No such page.")

    async def _not_allowed(self, request: Request, exc: Exception) -> Response:
        return _json_error(405, f"{request.method} is not allowed on {request.url.path[:100]}")

    def labeller(self, request: Request) -> str | None:
        """The labeller: named by their personal link, else by the name typed at sign-in."""
        who = identity(request)
        if who is not None and not who.lead:
            return who.name
        raw = request.cookies.get(labeller_cookie(self.guard.port))
        if not raw:
            return None
        try:
            return labeller_name(unquote(raw))
        except InputError:
            return None

    def page(self, template: str, request: Request, *, status: int = 200, **context) -> HTMLResponse:
        store = self.space.store
        who = identity(request)
        html = self.env.get_template(template).render(
            labeller=self.labeller(request), project=self.space.project.folder.name, progress=store.progress(),
            lead=who is not None and who.lead, personal=who is not None and not who.lead,
            topup_counts=None if self.topup is None else self.topup.counts(), **context)
        return HTMLResponse(html, status_code=status)

    # -- pages ------------------------------------------------------------------------------------------
    async def home(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        return await run_in_threadpool(self._home, request, me)

    def _home(self, request: Request, me: str) -> Response:
        if self.topup is not None:
            return self.topup.home(request, me)
        store = self.space.store
        answers: dict[int, list] = {}
        for d in store.decisions():
            answers.setdefault(int(d.draw or 0), []).append(d)
        rows = []
        draws = store.draws()
        sizes = self.space.sizes([d.predicted_cluster for d in draws])
        for d in draws:
            row = self.space.row(d.record)
            mine = next((x for x in answers.get(d.draw, []) if x.labeller == me), None)
            rows.append({"draw": d.draw, "record": d.record, "name": self.space.names[row] if row is not None else "",
                         "size": sizes.get(d.predicted_cluster, 0), "double": d.double,
                         "answers": len(answers.get(d.draw, [])), "mine": mine.status if mine else ""})
        return self.page("queue.html.j2", request, rows=rows, labellers=store.labellers())

    async def signin(self, request: Request) -> Response:
        who = identity(request)
        if who is not None and not who.lead:  # a personal link names its labeller
            return RedirectResponse("/", status_code=303)
        error = ""
        if request.method == "POST":
            body = await _body(request)
            form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
            try:
                name = labeller_name(form.get("name", ""))
            except InputError as exc:
                error = str(exc)
            else:
                response = RedirectResponse("/", status_code=303)
                response.set_cookie(labeller_cookie(self.guard.port), quote(name, safe=""), httponly=True,
                                    samesite="strict", path="/")
                return response
        return self.page("signin.html.j2", request, error=error, status=400 if error else 200)

    async def signout(self, request: Request) -> Response:
        response = RedirectResponse("/signin", status_code=303)
        response.delete_cookie(labeller_cookie(self.guard.port), path="/")
        return response

    async def next_draw(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        n = await run_in_threadpool(self.space.store.next_draw, me)
        return RedirectResponse(f"/draw/{n}" if n is not None else "/?done=1", status_code=303)

    async def draw_page(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        try:
            state = await run_in_threadpool(self.state, request.path_params["n"], me)
        except InputError as exc:
            return self.page("error.html.j2", request, status=404, message=str(exc))
        return await run_in_threadpool(self._draw_page, request, state)

    def _draw_page(self, request: Request, state: dict) -> Response:
        space = self.space
        draw = space.store.draw(state["draw"])
        members = space.members(draw)
        drawn = space.member(space.drawn_row(draw))
        name_at = self._name_at()
        return self.page("draw.html.j2", request, state=state, draw=draw, members=members, drawn=drawn,
                         columns=space.columns, name_at=name_at, prose_at=_prose(members, name_at))

    def _name_at(self) -> set[int]:
        names = set(self.space.project.config.name or ())
        return {i for i, c in enumerate(self.space.columns) if c in names}

    async def draw_rows(self, request: Request) -> Response:
        """The member rows of draw N from ``?from=K`` (HTML, as the page's own rows): the page
        holds the first :data:`FIRST_ROWS` and asks the rest after its first paint (issue 31)."""
        if self.labeller(request) is None:
            return HTMLResponse("sign in first: open / and give your name", status_code=401)
        text = request.query_params.get("from", "0")
        start = whole_number(text)
        if start is None:
            return HTMLResponse(f"from={escape(text[:20])}: give a row number (a whole number from 0)", status_code=422)
        try:
            html = await run_in_threadpool(self._rows_html, request.path_params["n"], start)
        except InputError as exc:
            return HTMLResponse(str(escape(str(exc))), status_code=404)
        return HTMLResponse(html)

    def _rows_html(self, n: str, start: int) -> str:
        space = self.space
        draw = space.draw(n)
        members = space.members(draw)
        name_at = self._name_at()
        return self.env.get_template("draw_rows.html.j2").render(
            rows=members[start:], draw=draw, name_at=name_at, prose_at=_prose(members, name_at))

    async def agreement_page(self, request: Request) -> Response:
        from er_expectations.labelling.agreement import agreement
        from er_expectations.labelling.decide import reconciled

        if self.labeller(request) is None:
            return RedirectResponse("/signin", status_code=303)
        result = await run_in_threadpool(agreement, self.space.store, self.space.project)
        chosen = await run_in_threadpool(reconciled, self.space.store)
        return self.page("agreement.html.j2", request, result=result, chosen=chosen,
                         project_folder=str(self.space.project.folder))

    async def estimates_page(self, request: Request) -> Response:
        if self.labeller(request) is None:
            return RedirectResponse("/signin", status_code=303)
        text = request.query_params.get("target_se", "0.02")
        try:
            target = float(text)
        except ValueError:
            target = float("nan")
        if not 0 < target < 1:
            return self.page("error.html.j2", request, status=422,
                             message=f"target_se={text[:20]!r}: give a standard error between 0 and 1, such as 0.02")
        result = await run_in_threadpool(self._estimates, target)
        return self.page("estimates.html.j2", request, **result)

    def _estimates(self, target: float) -> dict:
        """wb-core's estimates so far (SPEC 6) and plan, as rows for the page."""
        from er_expectations.labelling.estimates import estimates_so_far

        try:
            so_far = estimates_so_far(self.space.project, metrics=ESTIMATED, target_se=target, reps=PLAN_REPS)
        except InputError as exc:  # the planner refuses a pilot it cannot resample (too few draws)
            so_far, plan_problem = estimates_so_far(self.space.project, metrics=ESTIMATED), str(exc)
        else:
            plan_problem = ""
        rows = []
        if so_far.estimates is not None:
            needed = {} if so_far.plan is None else {
                str(r["metric"]): r for r in so_far.plan.to_dict("records")}
            for metric, row in so_far.estimates.to_dict("index").items():
                plan = needed.get(str(metric), {})
                need = plan.get("draws_needed")
                rows.append({"metric": str(metric), "estimate": row["estimate"], "std_error": row["std_error"],
                             "ci_lower": row["ci_lower"], "ci_upper": row["ci_upper"],
                             "draws_needed": None if need is None or need != need else int(need),
                             "note": "; ".join(x for x in (str(row.get("note") or ""), str(plan.get("note") or ""))
                                               if x)})
        return {"so_far": so_far, "rows": rows, "target_se": target, "plan_problem": plan_problem}

    def _reviewed(self, n: str, me: str):
        """wb-core's picture of the draw's true cluster: my answer if I gave one, else the first;
        a draw labelled twice, blind, shows nothing before I answered it (issue 29 round 3 item 4)."""
        from er_expectations.labelling.review import picture

        draw = self.space.draw(n)
        mine = self.space.store.decision(draw.draw, me)
        if draw.double and (mine is None or mine.status not in ANSWERED):
            raise BlindDraw(f"draw {draw.draw} is labelled twice, blind: answer it on its page first; its review "
                            "shows after your answer")
        return picture(self.space.project, draw.draw,
                       labeller=me if mine is not None and mine.status != "skipped" else None)

    async def review_page(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        try:
            pic = await run_in_threadpool(self._reviewed, request.path_params["n"], me)
        except BlindDraw as exc:
            return self.page("error.html.j2", request, status=403, message=str(exc), heading="Answer it first")
        except InputError as exc:
            return self.page("error.html.j2", request, status=404, message=str(exc))
        return self.page("review.html.j2", request, pic=pic, rows=self._picture_rows(pic),
                         tag_names=list(self.space.project.config.tags))

    def _picture_rows(self, pic) -> list[dict]:
        """The picture's rows for the page: ids as text, each record's name and shown cells."""
        space = self.space
        drawn = space.store.draw(pic.draw)
        out = []
        for i, row in enumerate(pic.rows):
            points = []
            for ids, inside in ((row.shared, True), (row.beyond, False)):
                for rid in ids:
                    text = text_of(rid)
                    at = space.row(text)
                    cells = "" if at is None else " · ".join(c for c in space.member(at).cells if c)
                    points.append({"id": text, "name": "" if at is None else space.names[at], "inside": inside,
                                   "drawn": text == drawn.record, "detail": cells})
            out.append({"cluster": text_of(row.predicted_cluster), "drawn": i == 0, "size": row.size,
                        "inside": len(row.shared), "points": points})
        return out

    async def _json_write(self, request: Request, what: str, handler) -> Response:
        """A write from the page: a signed-in labeller, a JSON body within the size limit, then
        ``handler(draw, labeller, payload)`` in a worker thread; every refusal a 4xx JSON error."""
        me = self.labeller(request)
        if me is None:
            return _json_error(401, "sign in first: open / and give your name")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _json_error(415, f"send the {what} as JSON (Content-Type: application/json)")
        try:
            payload = json.loads(await _body(request))
        except BodyTooLarge as exc:
            return _json_error(413, str(exc))
        except (ValueError, UnicodeDecodeError) as exc:
            return _json_error(400, f"the body is not JSON: {exc}")
        except RecursionError:
            return _json_error(400, "the body nests lists or objects too deep to read; send a flat JSON object")
        try:
            return await run_in_threadpool(handler, request.path_params["n"], me, payload)
        except BadRequest as exc:
            return _json_error(exc.status, exc.message)

    async def tag_api(self, request: Request) -> Response:
        return await self._json_write(request, "tag", self._tag)

    def _tag(self, n: str, me: str, payload: object) -> Response:
        try:
            pic = self._reviewed(n, me)
        except BlindDraw as exc:
            raise BadRequest(403, str(exc)) from None
        except InputError as exc:
            raise BadRequest(404, str(exc)) from None
        if not isinstance(payload, dict) or set(payload) - {"tag", "kind", "records"}:
            raise BadRequest(422, "give the tag as a JSON object {tag, kind, records}")
        tag, kind = payload.get("tag"), payload.get("kind")
        if not isinstance(tag, str) or not isinstance(kind, str):
            raise BadRequest(422, "tag and kind: give text (kind 'over' or 'under')")
        ids = _ids(payload.get("records", []), "records")
        unknown = self.space.unknown(list(ids))
        if unknown:
            raise BadRequest(422, f"records: {', '.join(map(repr, unknown[:5]))} are not records of this project")
        try:
            saved = self.space.store.add_tag(pic.key, tag, kind=kind, records=ids, labeller=me,
                                             allowed=list(self.space.project.config.tags))
        except InputError as exc:
            raise BadRequest(422, str(exc)) from None
        return JSONResponse({"tag": {"id": saved.id, "cluster": saved.cluster, "tag": saved.tag, "kind": saved.kind,
                                     "records": list(saved.records), "labeller": saved.labeller, "at": saved.at}})

    # -- JSON -------------------------------------------------------------------------------------------
    def state(self, n: str, me: str) -> dict:
        """The draw page's state: the draw, ĉ's ids, my decision, others' answers (not for blind
        doubles), the earlier answer of the same entity and the QC findings of my decision."""
        from er_expectations.labelling.qc import check_draw, earlier_answer

        space = self.space
        draw = space.draw(n)
        mine = space.store.decision(draw.draw, me)
        others = [d for d in space.store.decisions(draw.draw) if d.labeller != me]
        earlier = earlier_answer(space.project, space.store, draw.draw)
        findings = check_draw(space.project, space.store, draw.draw, mine) if mine is not None else []
        # a draw labelled twice stays blind until this labeller answered it (a skip is no
        # answer); then both answers show, to reconcile (the agreement page links here)
        visible = [] if draw.double and (mine is None or mine.status not in ANSWERED) else others
        return {
            "draw": draw.draw, "record": draw.record, "predicted_cluster": draw.predicted_cluster,
            "double": draw.double, "labeller": me, "members": space.member_ids(draw.predicted_cluster),
            "decision": decision_json(mine), "others": [decision_json(d) for d in visible],
            "seen": {str(d.labeller): d.version for d in visible},
            "earlier": None if earlier is None or earlier.draw == draw.draw else {
                "draw": earlier.draw, "labeller": earlier.labeller, "removed": [text_of(i) for i in earlier.removed],
                "added": [text_of(i) for i in earlier.added],
                "added_names": [self._name(text_of(i)) for i in earlier.added]},
            "findings": [_finding(f) for f in findings],
            "names": {i: self._name(i) for d in [mine, *visible] if d is not None for i in d.added},
        }

    def _name(self, record: str) -> str:
        row = self.space.row(record)
        return "" if row is None else self.space.names[row]

    async def draw_api(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return _json_error(401, "sign in first: open / and give your name")
        try:
            return JSONResponse(await run_in_threadpool(self.state, request.path_params["n"], me))
        except InputError as exc:
            return _json_error(404, str(exc))

    async def progress_api(self, request: Request) -> Response:
        p = await run_in_threadpool(self.space.store.progress)
        return JSONResponse({"draws": p.draws, "done": p.done, "skipped": p.skipped, "unsure": p.unsure,
                             "remaining": p.remaining, "doubles": p.doubles, "doubles_done": p.doubles_done,
                             "per_labeller": p.per_labeller})

    async def search_api(self, request: Request) -> Response:
        return await self._read(request, self._search)

    async def expand_api(self, request: Request) -> Response:
        return await self._read(request, self._expand)

    async def _read(self, request: Request, handler) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(handler, request.query_params))
        except BadRequest as exc:
            return _json_error(exc.status, exc.message)
        except InputError as exc:
            return _json_error(422, str(exc))

    def _searched_draw(self, params):
        space = self.space
        if space.search is None:
            raise BadRequest(409, "this project names no 'name:' column in workbench.yml: nothing to search")
        try:
            return space.draw(params.get("draw", ""))
        except InputError as exc:
            raise BadRequest(404, str(exc)) from None

    def _record(self, row: int, **extra) -> dict:
        """A record found, for the page: id, name, block, shown cells and whether it can be added
        (records outside the release never can: ``reason`` says why)."""
        space = self.space
        m = space.member(row)
        inside = bool(space.in_release[row])
        return {"id": m.id, "name": m.name, "cells": list(m.cells), "in_release": inside,
                "reason": "" if inside else space.not_in_release(), **extra}

    def _search(self, params) -> dict:
        space = self.space
        draw = self._searched_draw(params)
        limit_text = params.get("limit", "20")
        limit = whole_number(limit_text)
        if limit is None or not 1 <= limit <= MAX_HITS:
            raise BadRequest(422, f"limit={limit_text[:20]!r}: give a whole number from 1 to {MAX_HITS}")
        found = space.search.find(params.get("q", ""), near=space.ids[space.drawn_row(draw)], limit=limit)
        hits = [self._record(h.row, name=text_of(h.name), block=text_of(h.block), score=h.score, key=h.key,
                             same_block=h.same_block, in_predicted=h.in_predicted) for h in found.hits]
        names = [{"key": n.key, "name": text_of(n.name), "records": n.records, "shown": n.shown,
                  "more": n.records - n.shown} for n in found.names]
        return {"hits": hits, "names": names, "truncated": found.truncated, "limit": limit,
                "release": space.release}

    def _expand(self, params) -> dict:
        """An expansion, a page at a time (issue 31): the first page lists the predicted clusters
        (:data:`EXPAND_GROUPS` a page, the largest first) with their counts and the first
        :data:`EXPAND_PREVIEW` records of each, and the records outside the release likewise;
        ``cluster=C`` gives that cluster's records from ``offset`` (:data:`EXPAND_PAGE` of
        them), or with ``ids=all`` the ids and names of all of them (what "add these k
        records" adds); ``outside=1`` the records outside the release from ``offset``."""
        space = self.space
        draw = self._searched_draw(params)
        name, block = params.get("name"), params.get("block")
        if (name is None) == (block is None):
            raise BadRequest(422, "give name=<a name> or block=<a block> to list all its records")
        drawn = space.drawn_row(draw)
        e = space.search.expand(name=name, block=block, near=space.ids[drawn])
        if "cluster" in params:
            cluster = params["cluster"]
            group = next((g for g in e.groups if text_of(g.cluster) == cluster), None)
            if group is None:
                raise BadRequest(404, f"cluster={cluster[:40]!r}: no predicted cluster of this draw's other "
                                      f"clusters holds a record {'named' if e.kind == 'name' else 'in block'} "
                                      f"{e.value[:40]!r}")
            if params.get("ids") == "all":  # "add these k records": every one, however many are shown
                return {"cluster": cluster, "count": len(group.rows), "ids": [space.ids[r] for r in group.rows],
                        "names": [space.names[r] for r in group.rows]}
            return {"cluster": cluster, "count": len(group.rows), **self._page_of(group.rows, params)}
        if params.get("outside") == "1":
            return {"count": len(e.outside), **self._page_of(e.outside, params)}
        page_text = params.get("page", "1")
        page = whole_number(page_text)
        pages = max(1, -(-len(e.groups) // EXPAND_GROUPS))
        if page is None or not 1 <= page <= pages:
            raise BadRequest(422, f"page={page_text[:20]!r}: give a page from 1 to {pages}")
        shown = e.groups[(page - 1) * EXPAND_GROUPS:page * EXPAND_GROUPS]
        groups = [{"cluster": text_of(g.cluster), "cluster_size": g.cluster_size, "count": len(g.rows),
                   "records": [self._record(r) for r in g.rows[:EXPAND_PREVIEW]]} for g in shown]
        return {"kind": e.kind, "value": e.value, "name": text_of(e.name), "records": e.records,
                "in_draw": len(e.in_draw), "clusters": len(e.groups), "offered": sum(len(g.rows) for g in e.groups),
                "page": page, "pages": pages, "groups": groups, "outside_count": len(e.outside),
                "outside": [self._record(r) for r in e.outside[:EXPAND_PREVIEW]],
                "release": space.release, "draw_block": text_of(space.search.block_of(drawn))}

    def _page_of(self, rows: tuple[int, ...], params) -> dict:
        """``rows[offset:offset + EXPAND_PAGE]`` as records, and the next offset (None at the end)."""
        text = params.get("offset", "0")
        offset = whole_number(text)
        if offset is None or not 0 <= offset <= len(rows):
            raise BadRequest(422, f"offset={text[:20]!r}: give a whole number from 0 to {len(rows)}")
        end = min(offset + EXPAND_PAGE, len(rows))
        return {"offset": offset, "records": [self._record(r) for r in rows[offset:end]],
                "next": end if end < len(rows) else None}

    async def save_api(self, request: Request) -> Response:
        return await self._json_write(request, "decision", self._save)

    def _save(self, n: str, me: str, payload: object) -> Response:
        space = self.space
        try:
            draw = space.draw(n)
        except InputError as exc:
            raise BadRequest(404, str(exc)) from None
        decision, expected, seen = _parse_save(payload)
        unknown = space.unknown(list(decision.removed) + list(decision.added))
        if unknown:
            raise BadRequest(422, f"{plural(len(unknown), 'id')} "
                                  f"{'is not a record' if len(unknown) == 1 else 'are not records'} of this project: "
                                  f"{', '.join(map(repr, unknown[:5]))}; give ids from the records table")
        outside = space.outside_release(list(decision.added))
        if outside:  # SPEC 9 rule 4: it would block the estimates until removed
            raise BadRequest(422, f"added {'record' if len(outside) == 1 else 'records'} "
                                  f"{', '.join(map(repr, outside[:5]))}"
                                  f"{f' and {len(outside) - 5} more' if len(outside) > 5 else ''} "
                                  f"{'is' if len(outside) == 1 else 'are'} {space.not_in_release()} (no predicted "
                                  f"cluster there), so {'it' if len(outside) == 1 else 'they'} cannot be in a true "
                                  f"cluster of it; take {'it' if len(outside) == 1 else 'them'} out of the added "
                                  "records and save again")
        # someone else answered meanwhile: show it, let me choose; checked inside the save's
        # transaction (issue 29 round 3 item 5: a check before it raced)
        others = seen if not draw.double else None
        try:
            result = space.store.save(draw.draw, me, decision, expected_version=expected, others=others)
        except InputError as exc:
            raise BadRequest(422, str(exc)) from None
        if isinstance(result, Conflict) and result.current is not None and result.current.labeller != me:
            other = result.current
            return JSONResponse({"conflict": "other", "theirs": decision_json(other),
                                 "seen": {**(seen or {}), str(other.labeller): other.version}}, status_code=409)
        if isinstance(result, Conflict):
            return JSONResponse({"conflict": "version", "theirs": decision_json(result.current)}, status_code=409)
        # the findings of SPEC 9 come from GET .../findings right after: the save answers at once
        return JSONResponse({"saved": decision_json(result.decision), "progress": _progress(space.store.progress())})

    async def findings_api(self, request: Request) -> Response:
        me = self.labeller(request)
        if me is None:
            return _json_error(401, "sign in first: open / and give your name")
        try:
            found = await run_in_threadpool(self._findings, request.path_params["n"], me)
        except InputError as exc:
            return _json_error(404, str(exc))
        return JSONResponse({"findings": found})

    def _findings(self, n: str, me: str) -> list[dict]:
        """SPEC 9's findings for my saved decision of draw ``n`` (none when I have not saved it)."""
        from er_expectations.labelling.qc import check_draw

        draw = self.space.draw(n)
        mine = self.space.store.decision(draw.draw, me)
        if mine is None:
            return []
        return [_finding(f) for f in check_draw(self.space.project, self.space.store, draw.draw, mine)]


class BlindDraw(InputError):
    """A draw labelled twice, blind, that the labeller has not answered: its answers stay hidden."""
#: A column whose texts average more characters than this is prose (titles): its rare very long
#: words (chemical names) may break anywhere, so that the table needs no sideways scroll.
PROSE_CHARS = 30


def _prose(members: list, name_at: set[int]) -> set[int]:
    """The positions of the prose columns among the members' cells (names never are)."""
    if not members:
        return set()
    width = len(members[0].cells)
    return {i for i in range(width) if i not in name_at
            and sum(len(m.cells[i]) for m in members) > PROSE_CHARS * len(members)}


async def _favicon(request: Request) -> Response:
    """The page's icon (also linked from every page): a browser asking /favicon.ico gets it, not a 404."""
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")


def _finding(f) -> dict:
    """A finding for the page: in the labeller's words (``message``); the auditors' text as ``detail``."""
    return {"rule": f.rule, "rule_name": f.rule_name, "critical": f.critical,
            "records": [text_of(r) for r in f.records], "message": f.plain or f.message, "detail": f.message}


def _progress(p) -> dict:
    return {"draws": p.draws, "done": p.done, "per_labeller": p.per_labeller}


async def _body(request: Request) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise BodyTooLarge(f"request body over {MAX_BODY:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _ids(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise BadRequest(422, f"{key}: give a list of record ids (as text), got {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise BadRequest(422, f"{key}: {v!r} is not a record id; give ids as text")
        out.append(str(v))
    return tuple(out)


def _parse_save(payload: object) -> tuple[Decision, int, dict[str, int] | None]:
    """The decision, the version it was started from and the other answers seen, from a save
    request; every bad key or type raises :class:`BadRequest` (422) naming it."""
    if not isinstance(payload, dict):
        raise BadRequest(422, "give the decision as a JSON object {status, removed, added, note, reason, "
                              "expected_version}")
    extra = sorted(set(payload) - SAVE_KEYS)
    if extra:
        raise BadRequest(422, f"unknown key {extra[0][:40]!r}; a decision has {', '.join(sorted(SAVE_KEYS))}")
    status = payload.get("status", "labelled")
    if not isinstance(status, str):
        raise BadRequest(422, f"status={status!r}: give 'labelled', 'unsure' or 'skipped'")
    expected = payload.get("expected_version")
    if isinstance(expected, bool) or not isinstance(expected, int) or not 0 <= expected < 2**62:
        raise BadRequest(422, f"expected_version={expected!r}: give the version the page started from (0 when new)")
    for key in ("note", "reason"):
        if not isinstance(payload.get(key, ""), str):
            raise BadRequest(422, f"{key}: give text")
    true_cluster = payload.get("true_cluster")
    if true_cluster is not None and not isinstance(true_cluster, str):
        raise BadRequest(422, "true_cluster: give the id as text")
    seen = payload.get("seen")
    if seen is not None and (not isinstance(seen, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in seen.items())):
        raise BadRequest(422, "seen: give an object {labeller: version} of the answers the page showed")
    try:
        from er_expectations.labelling.store import checked_decision

        decision = checked_decision(Decision(status=status, removed=_ids(payload.get("removed", []), "removed"),
                                             added=_ids(payload.get("added", []), "added"),
                                             true_cluster=true_cluster, note=payload.get("note", ""),
                                             reason=payload.get("reason", "")))
    except InputError as exc:
        raise BadRequest(422, str(exc)) from None
    return decision, expected, seen


def build_app(space: Workspace, *, token: str, folder: Path | None = None) -> WebApp:
    """The web app over ``space``; serve ``.guard`` after :meth:`Guard.bind` names its address.
    ``folder``: the project folder whose access file (team mode) names the tokens."""
    return WebApp(space, token=token, folder=folder)
