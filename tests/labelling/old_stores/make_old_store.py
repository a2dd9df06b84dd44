"""Make a labels store with the code of an older er-expectations (the fixtures beside this file).

    git worktree add --detach /tmp/erx-old <commit>
    PYTHONPATH=/tmp/erx-old python tests/labelling/old_stores/make_old_store.py OUT.sqlite

Run with an older checkout first on the path (``er_expectations`` imported from it): the store
is written by that version's own :class:`LabelStore` (its schema, its pragmas, its
application id), never by hand. The commits that wrote the fixtures (issue 31 item 5):

* ``v1.sqlite``: 69c53a0^ (the last commit with ``SCHEMA_VERSION = 1``);
* ``v2.sqlite``: 69c53a0 (``SCHEMA_VERSION = 2``, reconciliations);
* ``v3.sqlite``: e36920a (``SCHEMA_VERSION = 3``, top-up tables);
* ``v4.sqlite``: 9165055 (``SCHEMA_VERSION = 4``, progress counts).

Every kind of row the version can hold is written: draws (integer ids beyond 2^53, blind
doubles), decisions labelled, unsure and skipped by three labellers, saved again (versions
above 1, the history), hostile text (markup, a formula, right-to-left and astral characters),
error tags, a queue reservation and, from version 2, a reconciliation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from er_expectations.labelling import store as old

BIG = 2**62 + 1  # beyond 2^53: a float would lose it


def make(path: Path) -> None:
    draws = [(n, BIG + n, BIG + 1000 + n % 7, n % 5 == 0) for n in range(1, 41)]
    s = old.LabelStore.create(path, draws=draws, id_kind="integer", cluster_kind="integer")
    D = old.Decision
    notes = ["", "<script>alert(1)</script>", "=HYPERLINK(\"x\")", "\u202eevil", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ①²", "a;b'c\"d"]
    for n in range(1, 31):
        who = ("ann", "bob", "cé dric")[n % 3]
        status = "skipped" if n % 11 == 0 else ("unsure" if n % 7 == 0 else "labelled")
        d = D(status=status, removed=[str(BIG + n + 100 * k) for k in range(n % 4)],
              added=[str(BIG + 5000 + n)] if n % 2 else [], true_cluster=str(BIG + n) if n % 3 == 0 else None,
              note=notes[n % len(notes)], reason="no idea who" if status == "skipped" else "")
        out = s.save(n, who, d, expected_version=0)
        assert isinstance(out, old.Saved), out
        if n % 4 == 0:  # saved again: version 2, the first answer kept in the history
            again = s.save(n, who, D(removed=[str(BIG + n)], note="second thoughts"), expected_version=1)
            assert isinstance(again, old.Saved), again
    for n in (5, 10, 15, 20):  # the blind doubles' second answers
        s.save(n, "dora", D(removed=[str(BIG + n + 100)] if n != 10 else [], note="blind"), expected_version=0)
    s.add_tag(str(BIG + 1003), "twins", kind="over", records=[str(BIG + 3), str(BIG + 4)], labeller="ann")
    s.add_tag(str(BIG + 1004), "<b>typo</b>", kind="under", records=[str(BIG + 5)], labeller="bob")
    taken = s.next_draw("erin")
    assert taken == 31, taken
    if hasattr(s, "reconcile"):  # version 2 and later
        s.reconcile(5, use="dora", by="lead", note="dora saw the patent")
    s.close()


if __name__ == "__main__":
    target = Path(sys.argv[1])
    make(target)
    print(f"{target}: schema version {old.SCHEMA_VERSION}, written by {old.__file__}")
