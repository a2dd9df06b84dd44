"""The terms a validation page uses, defined where they are read (issue 29 item 5).

Data Docs are published on their own (opened from disk, copied to a web server or an archive),
without the documentation site, so a link to the docs would often lead nowhere: each validation
page carries, collapsed at its end, the definitions of the terms that appear on it
(:func:`terms_on`). ``docs/glossary.md`` is written from the same list (:func:`glossary_markdown`;
a test keeps the two equal), with the SPEC section of each term.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from er_expectations.stats.decision import DECISION_RULES, DEFAULT_RULE, RULE_WORDS

__all__ = ["GLOSSARY", "Term", "glossary_markdown", "terms_on"]


@dataclass(frozen=True)
class Term:
    """One term: its name, what marks it on a page (lower-case phrases), its definition and SPEC section."""

    name: str
    marks: tuple[str, ...]
    definition: str
    spec: str = ""

    @property
    def anchor(self) -> str:
        """The term's id on a page and in docs/glossary.md."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


GLOSSARY: tuple[Term, ...] = (
    Term("Severity (critical, warning, info)", ("critical", "warning/info", "severity"),
         "How much a failed check matters. Only a failed critical check fails the validation (and the run's exit "
         "code); a failed warning or info check is reported and the validation still passes.", "13"),
    Term("Skipped (not evaluated)", ("skipped", "not evaluated"),
         "A check that could not be evaluated on this release, for the reason shown (no baseline release, not "
         "enough history, too few draws). It is neither passed nor failed and is never counted as passed.", "13"),
    Term("Benchmark, sampled cluster, draw", ("benchmark", "draws", "sampled clusters"),
         "The benchmark is a sample of true clusters (entities), each found by drawing a record and labelling "
         "every record of its entity. A draw is one such drawn record; a sampled cluster is the true cluster it "
         "leads to (a cluster drawn twice counts twice).", "1, 2"),
    Term("Set aside", ("set aside",),
         "Benchmark clusters (or records) this release does not hold, left out of its estimates because the "
         "release cannot be judged on them.", "2.1"),
    Term("Records known at labelling, benchmark version", ("records known at labelling", "benchmark version"),
         "Which records existed when the benchmark was labelled. Records added later are not evaluated (their "
         "truth is unknown) until a top-up labels them; each top-up makes a new benchmark version.", "14"),
    Term("Estimate ± SE (standard error)", ("± ", "standard error", "estimate ± se"),
         "A value estimated from the benchmark sample, with its standard error: the typical distance between "
         "such an estimate and the true value over repeated samples.", "6"),
    Term("95 % CI (confidence interval)", ("% ci", "interval"),
         "A range that, over repeated samples, contains the true value 95 % of the time (the level is shown). "
         "Its method is named (normal, logit, bootstrap, exact bound).", "6"),
    Term("Effective draws", ("effective draws",),
         "When no sampled draw shows an error, the interval's far end comes from an exact bound on the share of "
         "clusters with an error, computed from the number of draws that could show it, counted in units of "
         "the heaviest drawn one (so an error on the heaviest clusters is still covered).", "6"),
    Term("Blind spot of the sample", ("blind spot",),
         "The records (or entities) the benchmark's draws miss altogether with chance at least 1/2, and how far "
         "they could move pairwise precision or F: errors there would not show in the sample. When that move is "
         "larger than the interval reaches below the estimate, the interval is marked as not to be relied on, "
         "and drawing by expected errors (or more draws) is the remedy.", "6.1"),
    Term("Decision rule", ("decision (",),
         "How the estimate is compared with the check's limit, named on each check: "
         + "; ".join(f"'{RULE_WORDS[rule]}'" for rule in DECISION_RULES)
         + f". Unless a check names another, it decides by '{RULE_WORDS[DEFAULT_RULE].partition(':')[0]}'.",
         "6, 8, 10, 13"),
    Term("Pairwise precision, recall and F", ("pairwise precision", "pairwise recall", "pairwise f"),
         "Over pairs of records: precision is the share of pairs the prediction puts together that truly belong "
         "together; recall the share of truly matching pairs the prediction keeps together; F their harmonic "
         "mean. Large entities weigh more (they have more pairs).", "5"),
    Term("Cluster precision and recall", ("cluster precision", "cluster recall"),
         "Over whole clusters: recall is the share of true entities found exactly (one predicted cluster, "
         "nothing else in it); precision the share of predicted clusters that are exactly one entity.", "5"),
    Term("b-cubed precision, recall and F", ("b-cubed",),
         "Per true entity, averaged (every entity weighs the same, as the paper defines it; the textbook "
         "b-cubed averages over records instead, so large entities weigh more): for a record, precision is the "
         "share of its predicted cluster that is its own entity and recall the share of its entity found in its "
         "predicted cluster; each is averaged over the entity's records, then over entities. F is their "
         "harmonic mean.", "5"),
    Term("Homogeneity", ("homogeneity",),
         "An entropy-based purity of the predicted clusters: 1 when every predicted cluster holds records of one "
         "entity only, lower the more entities are mixed in them.", "5"),
    Term("Average cluster size", ("average cluster size", "cluster size"),
         "Records divided by predicted clusters in the release.", "3"),
    Term("Matching rate", ("matching rate",),
         "The share of records in a predicted cluster of two or more records (linked to at least one other "
         "record).", "3"),
    Term("Hill numbers (order 0, 1, 2, ∞)", ("hill number",),
         "Diversity of the cluster sizes: with π_i the share of clusters of size i, H_q = (Σ π_i^q)^(1/(1−q)). "
         "H_0 is the number of distinct sizes, H_1 the exponential of the Shannon entropy, H_2 the inverse "
         "Simpson index, H_∞ one over the share of the most common size. A fall means a few sizes dominate.", "3"),
    Term("Homonymy rate", ("homonymy",),
         "The share of clusters holding a record whose name also appears on a record of another cluster. It rises "
         "when one person is split into several clusters with the same name.", "3"),
    Term("Name variation rate", ("name variation", "name_variation"),
         "The share of clusters whose records carry two or more distinct names. Much higher values than the "
         "truth's suggest different people lumped together.", "3"),
    Term("True value estimated (prediction against the truth)", ("true value", "vs_benchmark", "vs benchmark"),
         "A summary statistic of the prediction compared with the same statistic of the true clustering, "
         "estimated from the benchmark with its interval.", "7"),
    Term("Over-clustering (OCE) and under-clustering (UCE)", ("over-clustering", "under-clustering", "(oce)", "(uce)"),
         "For a record, OCE counts the records of its predicted cluster that are not its entity (lumping); UCE "
         "the records of its entity missing from its predicted cluster (splitting). 'Share of error' is a "
         "cluster's part of the metric's total error.", "4"),
    Term("Drift, baseline release", ("baseline", "drift", "_change"),
         "A change of a statistic against a baseline release (by default the previous one), with its interval.",
         "10"),
    Term("Control limits", ("control", "past values"),
         "Limits from the history: the mean of the last n recorded values ± k standard deviations (releases "
         "whose check failed left out). With fewer values than required the check is skipped.", "10"),
    Term("Gap, adjusted p (disparity)", ("gap", "adjusted p", "holm"),
         "The difference of a metric between a group and the rest of the entities. The p value of 'no gap' is "
         "adjusted for the number of groups tested (Holm's method by default).", "8"),
    Term("SHA-256, code revision", ("sha-256", "code revision"),
         "A SHA-256 is a fingerprint of a file's bytes: any change to the file changes it. The code revision "
         "names the code that ran: its git commit and whether the package's files were those of the commit, or "
         "the installed version, and a SHA-256 of the package's files. Full values can be copied from the page.",
         "13"),
)


def terms_on(text: str, glossary: Iterable[Term] = GLOSSARY) -> list[Term]:
    """The terms of ``glossary`` that a page's ``text`` uses (case-insensitive), in glossary order."""
    low = text.lower()
    return [term for term in glossary if any(mark in low for mark in term.marks)]


def glossary_markdown(glossary: Iterable[Term] = GLOSSARY) -> str:
    """docs/glossary.md: every term with its definition and SPEC section."""
    lines = ["# Glossary of the reports", "",
             "Every statistic and term a validation page of the Data Docs uses. Each page carries the same",
             "definitions of the terms it uses, collapsed under \"Terms on this page\" at its end, so that a",
             "page read without this site still explains itself. The formulas are in [SPEC.md](SPEC.md); how",
             "to read a page is in [Reading the reports](reading-the-reports.md).",
             "",
             "<!-- written by er_expectations.gx.docs.glossary.glossary_markdown(); a test keeps them equal -->", ""]
    for term in glossary:
        lines += [f"## {term.name} {{#{term.anchor}}}", "", term.definition
                  + (f" (SPEC {term.spec})" if term.spec else ""), ""]
    return "\n".join(lines)
