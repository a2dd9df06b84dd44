"""Review-mode error tags as the tags table of the error audit (SPEC 12.1, issue 19 item 5 → issue 20).

Review mode saves a tag on the key of a true cluster: the labeller's true cluster id, or
``draw-<n>`` for the draw reviewed. The benchmark built from the same labels
(``erx.benchmark_from_labels``) names each true cluster by its labeller's id, else by
``draw-<first draw>`` of that cluster. :func:`tags_frame` writes every tag under the
benchmark's name of its cluster, found through the drawn record (which is always in its own
true cluster), so ``erx.error_audit(..., tags=tags_frame(project), reference=...)`` reads it
as it is.
"""

from __future__ import annotations

import re

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.labelling.project import Project

__all__ = ["tags_frame"]

_DRAW_KEY = re.compile(r"draw-([0-9]+)")


def tags_frame(project: Project, *, labels: pd.DataFrame | None = None,
               benchmark: pd.DataFrame | None = None) -> pd.DataFrame:
    """The project's review tags as a tags table (SPEC 12.1): ``cluster`` (the benchmark's id
    of the true cluster), ``kind`` (over/under), ``tag``, ``records`` (list of record ids, in
    the records' id type), ``labeller``, ``tagged_at``; oldest first.

    ``labels`` is the labels table the benchmark is built from (default: the store's labels
    frame) and ``benchmark`` that benchmark (default: built here with
    ``erx.benchmark_from_labels``). A tag whose cluster is in no answered draw (its draw
    was skipped since, or its true cluster id was renamed) is an error naming the tag: the
    audit would otherwise count its errors as untagged without a word.
    """
    from er_expectations.analysis.benchmark import benchmark_from_labels

    store, cfg = project.store, project.config
    tags = store.tags()
    columns = ["cluster", "kind", "tag", "records", "labeller", "tagged_at"]
    if not tags:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    if labels is None:
        labels = store.labels_frame()
    if benchmark is None and len(labels):
        benchmark = benchmark_from_labels(labels, project.records(), prediction=cfg.prediction, record_id=cfg.record_id)
    reference_of = {} if benchmark is None else dict(zip(benchmark[cfg.record_id], benchmark["reference"],
                                                         strict=True))
    references = set(reference_of.values())
    record_of_draw = dict(zip(labels["draw"], labels["record_id"], strict=True))
    typed = (lambda text: int(text)) if store.id_kind == "integer" else (lambda text: text)
    rows = []
    for t in tags:
        match = _DRAW_KEY.fullmatch(t.cluster)
        if t.cluster in references:
            cluster = t.cluster
        elif match and int(match.group(1)) in record_of_draw:
            cluster = reference_of.get(record_of_draw[int(match.group(1))])
        else:
            cluster = None
        if cluster is None:
            raise InputError(f"{project.folder}: tag {t.tag!r} ({t.kind}) by {t.labeller} at {t.at} is on cluster "
                             f"{t.cluster!r}, which no answered draw of the labels gives; answer that draw again "
                             "or export the labels that hold it")
        rows.append((cluster, t.kind, t.tag, [typed(r) for r in t.records], t.labeller, t.at))
    frame = pd.DataFrame(rows, columns=columns).astype(object)
    # shown to people, never read back as ids: a CSV export neutralises their formulas
    frame.attrs["display_columns"] = ["tag", "labeller", "tagged_at"]
    return frame
