"""The lead's view of a labelling project (issue 31, team mode): reachable with the lead's link only.

``GET /lead``             the draws that need the lead: answers that differ (reconcile them here),
                          unsure answers, skipped draws, and every draw answered twice or more,
                          each with who answered what and what ``label export`` does with it now
``POST /lead/reconcile``  a form (``draw``, ``use``, ``note``): the lead chooses a draw's answer

What the page says the export does comes from :func:`er_expectations.labelling.decide.outcomes`,
the reading behind ``label export``; a choice made here goes through
:func:`er_expectations.labelling.decide.reconcile`, as ``label reconcile`` does: one code path.
The lead is who holds the project's secret (:mod:`er_expectations.labelling.access`); the name
kept with a reconciliation is the one the lead signed in with.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from er_expectations.core.errors import InputError
from er_expectations.labelling.access import Identity
from er_expectations.labelling.decide import Outcome, outcomes, reconcile
from er_expectations.labelling.store import ANSWERED

__all__ = ["LeadPages", "identity"]

#: Ids of an answer's removed or added records shown on the lead's view (then "and k more").
SHOWN_IDS = 8
#: What the export does, in words, per outcome kind.
EXPORT_SAYS = {
    "single": "uses the one answer", "agreed": "uses the answer both give", "reconciled": "uses the chosen answer",
    "unlabelled": "not labelled yet", "skipped": "left out: only skipped",
    "unsure_open": "asks what to do (unsure): --unsure skip or keep, or answer it again and choose",
    "conflict": "refused until you choose an answer",
}


def identity(request: Request) -> Identity | None:
    """Who the request's token belongs to (set by :class:`~er_expectations.web.guard.Guard`)."""
    return request.scope.get("state", {}).get("erx_identity")


class LeadPages:
    """The lead's view over a :class:`~er_expectations.web.app.WebApp`'s project."""

    def __init__(self, app) -> None:
        self.app = app

    def routes(self) -> list[Route]:
        return [Route("/lead", self.lead_page), Route("/lead/reconcile", self.reconcile, methods=["POST"])]

    def _refused(self, request: Request) -> Response | None:
        who = identity(request)
        if who is None or not who.lead:
            return self.app.page("error.html.j2", request, status=403, heading="The lead's view",
                                 message="The lead's view opens only with the lead's link (the project's own link, "
                                         "printed by 'er-expectations label serve' or 'label links lead').")
        if self.app.labeller(request) is None:
            return RedirectResponse("/signin", status_code=303)
        return None

    async def lead_page(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        return await run_in_threadpool(self._page, request, "", 200)

    def _page(self, request: Request, error: str, status: int) -> Response:
        space = self.app.space
        every = outcomes(space.store, space.project)
        draws = {d.draw: d for d in space.store.draws()}
        rows = [self._row(o, draws[o.draw].double) for o in every if o.answers]
        sections = [
            ("differ", "Answers that differ", "Choose the answer the export uses; every answer stays in the store.",
             [r for r in rows if r["differ"]]),
            ("unsure", "Unsure answers", "Answer the draw yourself on its page, then choose an answer if it differs; "
             "or export with --unsure skip or --unsure keep.", [r for r in rows if r["unsure"]]),
            ("skipped", "Skipped draws", "With the labeller's reason; answer them on their page.",
             [r for r in rows if r["skipped"]]),
            ("twice", "Draws answered twice or more", "The blind doubles and every second answer.",
             [r for r in rows if r["answered"] >= 2]),
        ]
        return self.app.page("lead.html.j2", request, sections=sections, error=error, status=status)

    def _row(self, o: Outcome, double: bool) -> dict:
        answered = [a for a in o.answers if a.status in ANSWERED]
        differ = o.kind == "conflict" or (o.reconciliation is not None and len(answered) >= 2 and o.kind != "agreed")
        chosen = o.reconciliation.labeller if o.reconciliation is not None and o.stands else None
        return {
            "draw": o.draw, "double": double, "kind": o.kind, "says": EXPORT_SAYS.get(o.kind, o.kind),
            "used": None if o.chosen is None or not o.exported else str(o.chosen.labeller),
            "answered": len(answered), "differ": differ, "unsure": any(a.status == "unsure" for a in o.answers),
            "skipped": any(a.status == "skipped" for a in o.answers), "chosen": chosen,
            "outdated": o.reconciliation is not None and not o.stands,
            "by": None if o.reconciliation is None else o.reconciliation.by,
            "answers": [self._answer(a) for a in o.answers],
            "choices": [str(a.labeller) for a in answered if a.status == "labelled"] if differ else [],
        }

    def _answer(self, a) -> dict:
        def ids(values) -> dict:
            shown = [{"id": i, "name": self._name(i)} for i in values[:SHOWN_IDS]]
            return {"shown": shown, "more": max(0, len(values) - SHOWN_IDS), "count": len(values)}

        return {"labeller": str(a.labeller), "status": a.status, "saved_at": a.saved_at, "version": a.version,
                "removed": ids(list(a.removed)), "added": ids(list(a.added)), "note": a.note, "reason": a.reason}

    def _name(self, record: str) -> str:
        space = self.app.space
        row = space.row(record)
        return "" if row is None else space.names[row]

    async def reconcile(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await request.body()  # the guard has bounded its size
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        text = form.get("draw", "").strip()
        if not text.isascii() or not text.isdigit():
            return await run_in_threadpool(self._page, request, f"draw={text[:20]!r}: give a draw number", 422)
        me = self.app.labeller(request)
        space = self.app.space
        try:
            await run_in_threadpool(lambda: reconcile(space.store, int(text), use=form.get("use", ""), by=me,
                                                      note=form.get("note", ""), project=space.project))
        except InputError as exc:
            return await run_in_threadpool(self._page, request, str(exc), 422)
        return RedirectResponse(f"/lead#draw-{int(text)}", status_code=303)
