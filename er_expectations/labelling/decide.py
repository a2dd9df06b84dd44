"""What the exported labels table holds for each draw, and how it was decided (SPEC 2.2; issue 27).

A draw's answer for the labels table:

* one answer (labelled or unsure; skips are no answers): that answer, ``single``;
* two or more answers giving the same true cluster: the first sure one (else the first),
  ``agreed``;
* answers that differ: the reconciled one (:meth:`LabelStore.reconcile`), ``reconciled``,
  when the reconciliation is not out of date (no answer of the draw saved again since); else,
  only when asked (``first_answer=True``), the earliest answer, ``first_of_two``;
* an answer marked unsure: left out (``unsure="skip"``) or kept as given (``unsure="keep"``,
  ``unsure_kept``), only when asked.

Without the choices a project that needs them is refused (:class:`InputError` listing the
draws and naming each fix) and nothing is written. :data:`ANSWER_KINDS` are the values of the
``answer`` column of the exported table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from er_expectations.analysis.sample_design import write_design
from er_expectations.core.errors import InputError
from er_expectations.labelling.agreement import predicted_members, same_true_cluster
from er_expectations.labelling.project import Project
from er_expectations.labelling.store import (
    ANSWERED,
    Decision,
    LabelStore,
    Reconciliation,
    labeller_name,
)

__all__ = ["ANSWER_KINDS", "OPEN_KINDS", "UNSURE_CHOICES", "Decided", "Outcome", "decide", "outcomes", "export_labels", "labels_frame", "plural",
           "reconcile", "reconciled"]

#: How a draw's exported answer was decided: the ``answer`` column of the labels table.
ANSWER_KINDS = ("single", "agreed", "reconciled", "first_of_two", "unsure_kept")
#: What ``unsure=`` may say.
UNSURE_CHOICES = ("skip", "keep")
#: Draws named in a refusal, per reason.
SHOWN = 5


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun in the right number: ``1 draw``, ``2 draws``."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


@dataclass(frozen=True)
class Decided:
    """The rows of the labels table (``rows``: each draw's answer and how it was decided, by
    draw) and the draws left out: unsure answers skipped, draws only skipped by labellers,
    draws not answered yet."""

    draws: int
    rows: list[tuple[Decision, str]]
    unsure_skipped: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    unlabelled: list[int] = field(default_factory=list)

    def count(self, kind: str) -> int:
        """Rows decided as ``kind`` (one of :data:`ANSWER_KINDS`)."""
        return sum(1 for _, k in self.rows if k == kind)

    def summary(self) -> str:
        """What was decided, with counts: ``"3 draws exported: 2 single answers, …; 1 not yet labelled"``."""
        kept = [plural(self.count("single"), "single answer"),
                plural(self.count("agreed"), "double that agrees", "doubles that agree"),
                f"{self.count('reconciled'):,} reconciled",
                f"{self.count('first_of_two'):,} first-of-two (--first-answer)",
                f"{self.count('unsure_kept'):,} unsure kept"]
        left = [f"{len(self.unsure_skipped):,} unsure skipped",
                f"{len(self.skipped):,} skipped by labellers",
                f"{len(self.unlabelled):,} not yet labelled"]
        shown = [k for k in kept if not k.startswith("0 ")] or ["none"]
        out = [k for k in left if not k.startswith("0 ")]
        return f"{plural(len(self.rows), 'draw')} exported: {', '.join(shown)}" + (f"; {', '.join(out)}" if out else "")


def _fixes(unsure: list[int], open_: list[tuple[int, list[str], bool]], *, project: str) -> str:
    def some(ns: list[int]) -> str:
        return ", ".join(map(str, ns[:SHOWN])) + (f" and {len(ns) - SHOWN:,} more" if len(ns) > SHOWN else "")

    parts = []
    if open_:
        ns = [n for n, _, _ in open_]
        named = ", ".join(f"{n} ({', '.join(names)})" for n, names, _ in open_[:SHOWN])
        more = f" and {len(ns) - SHOWN:,} more" if len(ns) > SHOWN else ""
        outdated = [n for n, _, old in open_ if old]
        parts.append(
            f"{plural(len(ns), 'draw')} answered twice with different true clusters, not reconciled: draw "
            f"{named}{more}"
            + (f" (draw {some(outdated)} reconciled before an answer was saved again)" if outdated else "")
            + f". Reconcile each with 'er-expectations label reconcile {project} --draw {ns[0]} --use LABELLER "
            "--by YOU', or add --first-answer to use the earlier answer")
    if unsure:
        parts.append(f"{plural(len(unsure), 'answer')} marked unsure (draw {some(unsure)}): add --unsure skip to "
                     "leave those draws out of the labels, or --unsure keep to use the answers as given")
    return "; ".join(parts)


#: What :func:`outcomes` says of a draw the export leaves out or refuses, beside :data:`ANSWER_KINDS`.
OPEN_KINDS = ("unlabelled", "skipped", "unsure_open", "unsure_skipped", "conflict")


@dataclass(frozen=True)
class Outcome:
    """What the export does with one draw: ``kind`` (one of :data:`ANSWER_KINDS` when it is
    exported, of :data:`OPEN_KINDS` otherwise), the answer it uses (``chosen``), every answer
    and skip of the draw (``answers``, in the order of their first save), its latest
    reconciliation and whether that still stands."""

    draw: int
    kind: str
    answers: list[Decision]
    chosen: Decision | None = None
    reconciliation: Reconciliation | None = None
    stands: bool = False

    @property
    def exported(self) -> bool:
        """The draw has a row in the labels table."""
        return self.kind in ANSWER_KINDS


def outcomes(store: LabelStore, project: Project | None = None, *, unsure: str | None = None,
             first_answer: bool = False, labeller: str | None = None) -> list[Outcome]:
    """Each draw's :class:`Outcome` under the export's rule (see the module): the one reading
    behind :func:`decide` (which refuses the open ones) and the lead's view. Parameters as
    :func:`decide`'s."""
    if unsure is not None and unsure not in UNSURE_CHOICES:
        raise InputError(f"unsure={unsure!r}: give 'skip' or 'keep' (or None to refuse unsure answers)")
    who = None if labeller is None else labeller_name(labeller)
    by_draw: dict[int, list[Decision]] = {}
    for d in store.decisions():  # each draw's labellers in the order of their first save
        if who is None or d.labeller == who:
            by_draw.setdefault(int(d.draw or 0), []).append(d)
    draws = store.draws()
    twice = [n for n, ds in by_draw.items() if sum(d.status in ANSWERED for d in ds) >= 2]
    members = predicted_members(store, project, twice) if project is not None else None
    cluster = {d.draw: d.predicted_cluster for d in draws}
    rec: dict[int, Reconciliation] = {r.draw: r for r in store.reconciliations()}
    out: list[Outcome] = []
    for d in draws:
        mine = by_draw.get(d.draw, [])
        answers = [x for x in mine if x.status in ANSWERED]
        r = rec.get(d.draw)
        current = {str(x.labeller): x.version for x in answers}
        stands = r is not None and r.versions == current
        if not answers:
            out.append(Outcome(d.draw, "skipped" if mine else "unlabelled", mine, None, r, stands))
            continue
        chat = None if members is None else members.get(cluster[d.draw], set())
        if len(answers) == 1:
            chosen, kind = answers[0], "single"
        elif all(same_true_cluster(answers[0], x, chat) for x in answers[1:]):
            chosen, kind = next((x for x in answers if x.status == "labelled"), answers[0]), "agreed"
        else:
            use = next((x for x in answers if x.labeller == r.labeller), None) if stands else None
            if use is not None:
                chosen, kind = use, "reconciled"
            elif first_answer:
                chosen, kind = answers[0], "first_of_two"
            else:
                out.append(Outcome(d.draw, "conflict", mine, None, r, stands))
                continue
        if chosen.status == "unsure":
            if unsure is None:
                out.append(Outcome(d.draw, "unsure_open", mine, chosen, r, stands))
                continue
            if unsure == "skip":
                out.append(Outcome(d.draw, "unsure_skipped", mine, chosen, r, stands))
                continue
            kind = "unsure_kept"
        out.append(Outcome(d.draw, kind, mine, chosen, r, stands))
    return out


def decide(store: LabelStore, project: Project | None = None, *, unsure: str | None = None,
           first_answer: bool = False, labeller: str | None = None) -> Decided:
    """Each draw's answer for the labels table and how it was decided (see the module).

    Parameters
    ----------
    store, project
        The labels store; with the project, answers are compared by their true clusters exactly
        (ĉ(r)'s members), else by their A_r and B_r.
    unsure
        ``"skip"`` (leave a draw whose answer is unsure out) or ``"keep"`` (use it as given);
        None refuses a project with an unsure answer.
    first_answer
        Use the earliest answer of a draw whose answers differ and are not reconciled; False
        refuses such a project.
    labeller
        Only this labeller's answers (each draw then has at most one).

    Raises
    ------
    InputError
        A draw needs a choice not given: the message lists the draws and the fixes.
    """
    every = outcomes(store, project, unsure=unsure, first_answer=first_answer, labeller=labeller)
    rows: list[tuple[Decision, str]] = []
    out = Decided(draws=len(every), rows=rows)
    unsure_open: list[int] = []
    open_: list[tuple[int, list[str], bool]] = []
    lists = {"unlabelled": out.unlabelled, "skipped": out.skipped, "unsure_skipped": out.unsure_skipped,
             "unsure_open": unsure_open}
    for o in every:
        if o.exported:
            rows.append((o.chosen, o.kind))
        elif o.kind == "conflict":
            open_.append((o.draw, [str(x.labeller) for x in o.answers if x.status in ANSWERED],
                          o.reconciliation is not None))
        else:
            lists[o.kind].append(o.draw)
    if unsure_open or open_:
        name = "PROJECT" if project is None else str(project.folder)
        raise InputError(f"{store.path}: the labels cannot be exported as they are; nothing was written. "
                         + _fixes(unsure_open, open_, project=name))
    return out


def export_labels(store: LabelStore, path: str | os.PathLike, project: Project | None = None, *,
                  unsure: str | None = None, first_answer: bool = False) -> tuple[Path, Decided]:
    """The workbench's export: :func:`decide`, then the labels table (SPEC 2.2, with the
    ``answer`` column) written inside the project folder (:meth:`LabelStore.export`), with the
    project's sample design beside it (:func:`~er_expectations.analysis.sample_design.write_design`);
    a refusal writes nothing. Returns the path and what was decided."""
    decided = decide(store, project, unsure=unsure, first_answer=first_answer)
    written = store.export(path, labels_frame(store, decided))
    write_design(written, None if project is None else project.config.sample_design())  # SPEC 12.3; issue 28
    return written, decided


def labels_frame(store: LabelStore, decided: Decided) -> pd.DataFrame:
    """The labels table (SPEC 2.2) of ``decided``'s rows, with the ``answer`` column."""
    return store.labels_frame(decided=decided.rows)


def reconcile(store: LabelStore, draw: int, *, use: str, by: str, note: str = "",
              project: Project | None = None) -> Reconciliation:
    """Record ``use``'s answer as ``draw``'s answer (:meth:`LabelStore.reconcile`); a draw whose
    answers give the same true cluster needs none and is refused, as are the store's refusals."""
    info = store.draw(draw)
    number = info.draw
    answers = [d for d in store.decisions(number) if d.status in ANSWERED]
    if len(answers) >= 2:
        chat = None if project is None else predicted_members(store, project, [number]).get(
            info.predicted_cluster, set())
        if all(same_true_cluster(answers[0], x, chat) for x in answers[1:]):
            raise InputError(f"draw {number}: the answers of {', '.join(str(a.labeller) for a in answers)} give the "
                             "same true cluster; nothing to reconcile (the export uses it as it is)")
    return store.reconcile(number, use=use, by=by, note=note)



def reconciled(store: LabelStore) -> dict[int, tuple[Reconciliation, bool]]:
    """Each reconciled draw's latest reconciliation and whether it still stands (no answer of
    the draw saved since), for the agreement page."""
    current: dict[int, dict[str, int]] = {}
    for d in store.decisions():
        if d.status in ANSWERED:
            current.setdefault(int(d.draw or 0), {})[str(d.labeller)] = d.version
    return {r.draw: (r, r.versions == current.get(r.draw, {})) for r in store.reconciliations()}
