"""Quality control of a labels table (SPEC 9): the seven rules, each one function, checked against
the release the labels were made on."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from er_expectations.analysis.labels import (
    CRITICAL_RULES,
    RULES,
    VIOLATION_COLUMNS,
    LabelColumns,
    Labels,
    RecordLookup,
    TrueClusters,
    by_draw,
    check_records,
    lookup_records,
    parse_labels,
    records_id_kind,
    sorted_unique,
    true_clusters,
)
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError


# -- the result ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelsQC:
    """Result of the labelling quality control (SPEC 9).

    ``violations`` has one row per (draw, rule) that fails, columns :data:`VIOLATION_COLUMNS`
    (``records`` a list of the record ids involved); ``checked[r]`` is the number of draws
    rule r applies to (0 when it was not evaluated; ``notes[r]`` says why); ``draws`` the
    number of draws in the labels.
    """

    violations: pd.DataFrame
    checked: dict[int, int]
    draws: int
    notes: dict[int, str] = field(default_factory=dict)

    def failing(self, rule: int) -> pd.DataFrame:
        """The violations of one rule."""
        return self.violations[self.violations["rule"] == rule].reset_index(drop=True)

    def failed(self, rule: int) -> int:
        """Number of draws that fail ``rule``."""
        return int(self.failing(rule)["draw"].nunique())

    def summary(self) -> pd.DataFrame:
        """One row per rule: rule, rule_name, critical, checked, failed, note."""
        return pd.DataFrame(
            [{"rule": n, "rule_name": r.name, "critical": r.critical, "checked": self.checked.get(n, 0),
              "failed": self.failed(n), "note": self.notes.get(n)} for n, r in RULES.items()]
        )

    @property
    def critical_violations(self) -> pd.DataFrame:
        """Violations of the critical rules (all but rule 5)."""
        return self.violations[self.violations["rule"].isin(CRITICAL_RULES)].reset_index(drop=True)


def _ids_text(ids: Iterable[object], limit: int = 8) -> str:
    items = list(ids)
    text = ", ".join(repr(i) for i in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _empty_violations() -> pd.DataFrame:
    return pd.DataFrame({
        "draw": pd.Series([], dtype="int64"), "rule": pd.Series([], dtype="int64"),
        "rule_name": pd.Series([], dtype="object"), "records": pd.Series([], dtype="object"),
        "message": pd.Series([], dtype="object"),
    })


SCORERS = ("token_sort_ratio", "ratio", "token_set_ratio", "jaro_winkler")


def _scorer(name: str):
    """A name-similarity function with values in [0, 1] (rapidfuzz), by name."""
    if name not in SCORERS:
        from er_expectations.core.hints import did_you_mean

        hint = did_you_mean(str(name), list(SCORERS))
        raise InputError(f"scorer={name!r} is not known{' (' + hint + ')' if hint else ''}; use one of {', '.join(SCORERS)}")
    from rapidfuzz import fuzz, utils
    from rapidfuzz.distance import JaroWinkler

    if name == "jaro_winkler":
        return lambda a, b: JaroWinkler.normalized_similarity(a, b, processor=utils.default_process)
    scorer = getattr(fuzz, name)
    return lambda a, b: scorer(a, b, processor=utils.default_process) / 100.0


def _check_rules(rules: Iterable[int] | None) -> tuple[int, ...]:
    if rules is None:
        return tuple(RULES)
    if isinstance(rules, (int, np.integer)) and not isinstance(rules, bool):
        rules = (int(rules),)
    out = []
    for r in rules:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or int(r) not in RULES:
            raise InputError(f"rules: {r!r} is not a rule of SPEC 9; give numbers from 1 to 7")
        out.append(int(r))
    return tuple(sorted(set(out)))


def _check_similarity(similarity: float) -> float:
    if isinstance(similarity, bool) or not isinstance(similarity, (int, float, np.floating, np.integer)) \
            or not 0.0 <= float(similarity) <= 1.0:
        raise InputError(f"similarity={similarity!r}: give a name-similarity threshold between 0 and 1 (e.g. 0.8)")
    return float(similarity)


def _same_cluster_id(a: object, b: object) -> bool:
    """Cluster ids from a labels file (text in CSV) against the prediction's ids."""
    return a == b or str(a) == str(b)


def qc_labels(
    labels: pd.DataFrame | Labels,
    records: pd.DataFrame,
    prediction: Hashable,
    *,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    similarity: float = 0.8,
    scorer: str = "token_sort_ratio",
    rules: Iterable[int] | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> LabelsQC:
    """Check a labels table against the starting prediction: the rules of SPEC 9.

    ``records`` holds the release the labels were made against: ``record_id`` and the
    predicted cluster column ``prediction`` (null = not in the release). Rule 5 (soft)
    needs ``block`` and/or ``name`` (columns of ``records``): an added record resembles
    the drawn record when it has the same block, or when the ``scorer`` similarity
    (rapidfuzz, in [0, 1]) of their names is at least ``similarity``. ``rules`` limits the
    check to some rule numbers.

    Problems that make the whole table unusable raise :class:`InputError`: a drawn record
    that is not in the release, a ``predicted_cluster`` column that disagrees with the
    prediction (labels made against another release), and the table errors of
    :func:`parse_labels`. Everything else is a violation row.
    """
    wanted = _check_rules(rules)
    similarity = _check_similarity(similarity)
    need_5 = 5 in wanted and (block is not None or name is not None)
    if rules is not None and 5 in wanted and not need_5:
        raise InputError("rule 5 compares added records with the drawn record: give block= and/or name= "
                         "(columns of the records)")
    score = _scorer(scorer) if need_5 and name is not None else None
    parsed, look = prepare_labels(labels, records, prediction, record_id=record_id, block=block if need_5 else None,
                            name=name if need_5 else None, columns=columns, separator=separator)
    return evaluate_rules(parsed, look, wanted, block=block if need_5 else None, name=name if need_5 else None,
                     score=score, similarity=similarity)


def prepare_labels(labels: pd.DataFrame | Labels, records: pd.DataFrame, prediction: Hashable, *, record_id: Hashable,
             block: Hashable | None, name: Hashable | None, columns: LabelColumns | Mapping[str, str] | None,
             separator: str) -> tuple[Labels, RecordLookup]:
    """Parse the labels and look up the records they name; refuse labels of another release."""
    frame = check_records(records, record_id, prediction, (("block", block), ("name", name)))
    kind = records_id_kind(frame[record_id])
    parsed = labels if isinstance(labels, Labels) else parse_labels(labels, id_kind=kind, columns=columns,
                                                                     separator=separator)
    parsed = by_draw(parsed)
    cols = parsed.columns
    ids = list(dict.fromkeys([*parsed.record, *(i for t in parsed.removed for i in t), *(i for t in parsed.added for i in t)]))
    look = lookup_records(frame, record_id=record_id, prediction=prediction, ids=ids, drawn=parsed.record,
                   block=block, name=name)

    # -- the table as a whole: every drawn record in the release, same release as the labels
    absent = [(d, r) for d, r in zip(parsed.draw.tolist(), parsed.record, strict=True) if r not in look.cluster]
    if absent:
        d, r = absent[0]
        where = "has no prediction (it is not in this release)" if r in look.outside else "is not in the records"
        raise InputError(
            f"draw {d}, column {cols.record_id!r}: drawn record {r!r} {where}"
            + (f" ({len(absent)} draws like this)" if len(absent) > 1 else "")
            + f"; the labels must be checked against the release they were drawn from (prediction={prediction!r})"
        )
    if parsed.predicted_cluster is not None:
        wrong = [(d, r, p, look.cluster[r]) for d, r, p in
                 zip(parsed.draw.tolist(), parsed.record, parsed.predicted_cluster, strict=True)
                 if p is not None and not _same_cluster_id(p, look.cluster[r])]
        if wrong:
            d, r, p, c = wrong[0]
            raise InputError(
                f"draw {d}, column {cols.predicted_cluster!r}: {p!r}, but record {r!r} is in cluster {c!r} of "
                f"prediction {prediction!r} ({len(wrong)} of {len(parsed)} draws disagree); the labels were made "
                "against another release: pass the prediction they were drawn from"
            )

    return parsed, look


#: ``add(draw, rule, records, message)``: report one violation.
_Add = Callable[[int, int, Iterable[object], str], None]


@dataclass(frozen=True, slots=True)
class _Draw:
    """One draw as the rules read it: the drawn record, its predicted cluster ĉ(r), A_r and B_r."""

    number: int
    record: object
    cluster: object
    removed: tuple
    added: tuple
    known_removed: list
    known_added: list


def _draws(parsed: Labels, look: RecordLookup) -> Iterator[_Draw]:
    in_release = look.cluster
    for d, r, removed, added in zip(parsed.draw.tolist(), parsed.record, parsed.removed, parsed.added, strict=True):
        yield _Draw(d, r, in_release[r], removed, added, [i for i in removed if i in in_release],
                    [i for i in added if i in in_release])


def _rule_1(draw: _Draw, look: RecordLookup, cols: LabelColumns, add: _Add) -> None:
    """Rule 1 (SPEC 9): A_r ⊂ ĉ(r), only members of the predicted cluster can be removed."""
    bad = [i for i in draw.known_removed if look.cluster[i] != draw.cluster]
    if bad:
        add(draw.number, 1, bad,
            f"draw {draw.number}: removed record(s) {_ids_text(bad)} (column {cols.removed!r}) are not in "
            f"the predicted cluster {draw.cluster!r} of record {draw.record!r}; only its members can be removed")


def _rule_2(draw: _Draw, look: RecordLookup, cols: LabelColumns, add: _Add) -> None:
    """Rule 2 (SPEC 9): r ∉ A_r, the drawn record is never removed from its own cluster."""
    if draw.record in draw.removed:
        add(draw.number, 2, [draw.record],
            f"draw {draw.number}: the drawn record {draw.record!r} is in its own column {cols.removed!r}; "
            "a record is never removed from its own cluster")


def _rule_3(draw: _Draw, look: RecordLookup, cols: LabelColumns, add: _Add) -> None:
    """Rule 3 (SPEC 9): B_r ∩ ĉ(r) = ∅, an added record comes from another cluster."""
    bad = [i for i in draw.known_added if look.cluster[i] == draw.cluster]
    if bad:
        add(draw.number, 3, bad,
            f"draw {draw.number}: added record(s) {_ids_text(bad)} (column {cols.added!r}) are already in "
            f"the predicted cluster {draw.cluster!r} of record {draw.record!r}; add only records from other clusters")


def _rule_4(draw: _Draw, look: RecordLookup, cols: LabelColumns, add: _Add) -> None:
    """Rule 4 (SPEC 9): every id of A_r and B_r is a record of the release."""
    for column, values in ((cols.removed, draw.removed), (cols.added, draw.added)):
        unknown = [i for i in values if i not in look.cluster]
        if unknown:
            gone = [i for i in unknown if i in look.outside]
            why = (" (in the records but not in this release)" if gone else "")
            add(draw.number, 4, unknown,
                f"draw {draw.number}: record id(s) {_ids_text(unknown)} in column {column!r} do not "
                f"exist in the records of the release{why}; fix the id(s)")


def _unlike(draw: _Draw, i: object, look: RecordLookup, *, block: Hashable | None, score,
            similarity: float) -> list[str] | None:
    """Why added record ``i`` does not look like the drawn record (None when it does)."""
    r = draw.record
    reasons = []
    if block is not None:
        b_r, b_i = look.block.get(r), look.block.get(i)
        if b_r is not None and b_i is not None and b_r == b_i:
            return None
        reasons.append(f"block {b_i!r}, not {b_r!r}")
    if score is not None:
        n_r, n_i = look.name.get(r), look.name.get(i)
        s = score(str(n_r), str(n_i)) if n_r is not None and n_i is not None else None
        if s is not None and s >= similarity:
            return None
        reasons.append(f"name {n_i!r} vs {n_r!r}" + (f", similarity {s:.2f} < {similarity:g}"
                                                     if s is not None else ", a name is missing"))
    return reasons


def _rule_5(draw: _Draw, look: RecordLookup, cols: LabelColumns, add: _Add, *, block: Hashable | None, score,
            similarity: float) -> bool:
    """Rule 5 (SPEC 9): an added record shares the drawn record's block and has a similar name.

    Returns whether the draw was checked (it has added records from other clusters)."""
    outside_members = [i for i in draw.known_added if look.cluster[i] != draw.cluster]
    if not outside_members:
        return False
    unlike, why = [], []
    for i in outside_members:
        reasons = _unlike(draw, i, look, block=block, score=score, similarity=similarity)
        if reasons is not None:
            unlike.append(i)
            why.append(f"{i!r} ({'; '.join(reasons)})")
    if unlike:
        shown = "; ".join(why[:5]) + (f" and {len(why) - 5} more" if len(why) > 5 else "")
        add(draw.number, 5, unlike,
            f"draw {draw.number}: added record(s) (column {cols.added!r}) do not look like record "
            f"{draw.record!r}: {shown}; check that they are the same entity")
    return True


#: The rules read one draw at a time (rules 6 and 7 compare draws with each other).
_PER_DRAW_RULES = {1: _rule_1, 2: _rule_2, 3: _rule_3, 4: _rule_4}


def _violations_frame(rows: list[tuple]) -> pd.DataFrame:
    if not rows:
        return _empty_violations()
    violations = pd.DataFrame(rows, columns=list(VIOLATION_COLUMNS)).astype({"draw": "int64", "rule": "int64"})
    return violations.sort_values(["draw", "rule"], kind="stable").reset_index(drop=True)


def evaluate_rules(parsed: Labels, look: RecordLookup, wanted: tuple[int, ...], *, block: Hashable | None,
              name: Hashable | None, score, similarity: float, truth: TrueClusters | None = None) -> LabelsQC:
    """Run the rules ``wanted`` on parsed labels (SPEC 9); ``truth`` if already built."""
    cols = parsed.columns
    need_5 = 5 in wanted and (block is not None or name is not None)
    rows: list[tuple] = []
    checked = {n: 0 for n in RULES}
    notes: dict[int, str] = {}

    def add(draw: int, rule: int, recs: Iterable[object], message: str) -> None:
        rows.append((draw, rule, RULES[rule].name, list(recs), message))

    per_draw = [(n, rule) for n, rule in _PER_DRAW_RULES.items() if n in wanted]
    for draw in _draws(parsed, look):
        for n, rule in per_draw:
            checked[n] += 1
            rule(draw, look, cols, add)
        if need_5:
            checked[5] += _rule_5(draw, look, cols, add, block=block, score=score, similarity=similarity)
    if 5 in wanted and not need_5:
        notes[5] = "not checked: give block= and/or name= to compare added records with the drawn record"

    if 6 in wanted or 7 in wanted:
        truth = truth if truth is not None else true_clusters(parsed, look)
        if 6 in wanted:
            checked[6] = len(parsed)
            _rule_6(parsed, truth, cols, add)
        if 7 in wanted:
            _rule_7(parsed, truth, cols, add, checked)
            if parsed.true_cluster is None:
                notes[7] = f"not checked: the labels have no column {cols.true_cluster!r}"
    violations = _violations_frame(rows)
    for n in RULES:
        if n not in wanted:
            notes.setdefault(n, "not evaluated (rules=…)")
    violations.attrs["checked"] = dict(checked)
    return LabelsQC(violations=violations, checked=checked, draws=len(parsed), notes=notes)


def _rule_6(parsed: Labels, truth: TrueClusters, cols: LabelColumns, add) -> None:
    """Draws whose true clusters share a record but differ (SPEC 9, rule 6).

    A record that sits in two distinct sets is found from the unique (record, set) pairs;
    only the draws involved are then described.
    """
    lengths = np.diff(truth.start)
    pair_set = np.repeat(truth.set_id, lengths)
    n_sets = np.int64(int(truth.set_id.max()) + 1 if len(truth.set_id) else 1)
    pairs = sorted_unique(truth.codes * n_sets + pair_set)
    p_rec, p_set = pairs // n_sets, pairs % n_sets
    n_sets_of_rec = np.bincount(p_rec)
    clash = n_sets_of_rec[p_rec] > 1
    if not clash.any():
        return
    frame = pd.DataFrame({"rec": p_rec[clash], "set": p_set[clash]})
    both = frame.merge(frame, on="rec", suffixes=("", "_other"))
    both = both[both["set"] != both["set_other"]][["set", "set_other"]].drop_duplicates()
    partners = both.groupby("set")["set_other"].agg(list).to_dict()
    draws = parsed.draw.tolist()
    draws_of_set: dict[int, list[int]] = {}
    for i, sid in enumerate(truth.set_id.tolist()):
        draws_of_set.setdefault(sid, []).append(i)
    for i in sorted((i for i, sid in enumerate(truth.set_id.tolist()) if sid in partners), key=lambda j: draws[j]):
        mine = truth.of(i)
        others = sorted((j for sid in partners[int(truth.set_id[i])] for j in draws_of_set[sid]), key=lambda j: draws[j])
        firsts = [draws_of_set[sid][0] for sid in partners[int(truth.set_id[i])]]
        shared = truth.named(np.unique(np.concatenate([np.intersect1d(mine, truth.of(j)) for j in firsts])))
        differ = truth.named(np.unique(np.concatenate([np.setxor1d(mine, truth.of(j)) for j in firsts])))
        add(draws[i], 6, differ,
            f"draw {draws[i]}: its true cluster shares record(s) {_ids_text(shared)} with draw(s) "
            f"{', '.join(str(draws[j]) for j in others)}, but the clusters differ on {_ids_text(differ)}; "
            f"one entity must be labelled the same way every time (check columns {cols.removed!r} and {cols.added!r})")


def _rule_7(parsed: Labels, truth: TrueClusters, cols: LabelColumns, add, checked: dict[int, int]) -> None:
    """A true cluster id names one set, and one set has one id (SPEC 9, rule 7)."""
    if parsed.true_cluster is None:
        return
    draws = parsed.draw.tolist()
    given = [i for i, t in enumerate(parsed.true_cluster) if t is not None]
    checked[7] = len(given)
    by_id: dict[str, list[int]] = {}
    by_set: dict[int, list[int]] = {}
    for i in given:
        by_id.setdefault(str(parsed.true_cluster[i]), []).append(i)
        by_set.setdefault(int(truth.set_id[i]), []).append(i)
    problems: dict[int, list[tuple[list, str]]] = {}
    for idx in by_id.values():
        if len({int(truth.set_id[i]) for i in idx}) > 1:
            for i in idx:
                others = [j for j in idx if truth.set_id[j] != truth.set_id[i]]
                differ = truth.named(np.unique(np.concatenate([np.setxor1d(truth.of(i), truth.of(j)) for j in others])))
                problems.setdefault(i, []).append((differ, (
                    f"column {cols.true_cluster!r} gives {parsed.true_cluster[i]!r} to draw(s) "
                    f"{', '.join(str(draws[j]) for j in others)} too, whose records differ on {_ids_text(differ)}")))
    for idx in by_set.values():
        names = {str(parsed.true_cluster[i]) for i in idx}
        if len(names) > 1:
            for i in idx:
                others = [j for j in idx if str(parsed.true_cluster[j]) != str(parsed.true_cluster[i])]
                problems.setdefault(i, []).append(([parsed.record[i]], (
                    f"column {cols.true_cluster!r} is {parsed.true_cluster[i]!r} but draw(s) "
                    f"{', '.join(f'{draws[j]} ({parsed.true_cluster[j]!r})' for j in others)} label the same records "
                    "with another id")))
    for i in sorted(problems, key=lambda j: draws[j]):
        recs = list(dict.fromkeys(rec for recs, _ in problems[i] for rec in recs))
        add(draws[i], 7, recs, f"draw {draws[i]}: " + "; ".join(text for _, text in problems[i])
            + "; one true cluster id must name one set (ĉ(r) \\ A_r) ∪ B_r")


@old_call_forms(data=2, positional=('prediction',))
def check_labels(
    labels: pd.DataFrame,
    records: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    similarity: float = 0.8,
    scorer: str = "token_sort_ratio",
    rules: Iterable[int] | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """Violations of the labelling rules of SPEC 9: one row per (draw, rule) that fails.

    Columns ``draw``, ``rule`` (SPEC 9 number), ``rule_name``, ``records`` (list of the ids
    involved) and ``message``; an empty frame with these columns when the labels are
    clean. ``attrs['checked']`` maps each rule to the number of draws it applies to.
    Arguments as :func:`qc_labels` (which also returns per-rule counts).


    Parameters
    ----------
    labels : pandas.DataFrame
        The labels table (SPEC 2.2): one row per draw, ``draw``, ``record_id``, ``removed``,
        ``added`` (ids separated by ``separator``).
    records : pandas.DataFrame
        The release the labels were made against, one row per record.
    prediction : hashable
        The column of ``records`` with the predicted cluster ids.
    record_id : hashable
        The record id column of ``records``.
    block : hashable, optional
        A blocking column of ``records``, for rule 5.
    name : hashable, optional
        A name column of ``records``, for rule 5.
    similarity : float
        The least name similarity (in [0, 1]) of rule 5.
    scorer : str
        The rapidfuzz scorer of the name similarity.
    rules : iterable of int, optional
        Only these rule numbers (SPEC 9).
    columns : LabelColumns or mapping, optional
        Names of the labels-table columns.
    separator : str
        The separator of the ids in ``removed`` and ``added``.

    Returns
    -------
    pandas.DataFrame
        One row per (draw, rule) that fails, above.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> records = pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["P1", "P1", "P2", "P2"]})
    >>> labels = pd.DataFrame({"draw": [1], "record_id": ["a"], "removed": ["c"], "added": [""]})
    >>> erx.check_labels(labels, records, prediction="pred", record_id="id")[["draw", "rule", "records"]].values.tolist()
    [[1, 1, ['c']]]
    """
    return qc_labels(labels, records, prediction, record_id=record_id, block=block, name=name,
                     similarity=similarity, scorer=scorer, rules=rules, columns=columns,
                     separator=separator).violations
