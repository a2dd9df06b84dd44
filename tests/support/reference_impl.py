"""A deliberately slow, obviously-correct reference for the core mathematics.

Written from /work/shared/SPEC.md (sections 2-7 and 11) only, independently of
the package's implementation, so that the tests compare two computations that
share no code.  Everything here works on plain Python lists, sets and dicts:

* the release population is the set of records whose prediction is not null;
* pairwise metrics enumerate pairs of records;
* the record-level errors EI/SDE/OCE/UCE/ROCE/RUCE are set operations between
  the predicted cluster of a record and its (release-restricted) true cluster;
* the estimator and its variance are the formulas of SPEC 6, term by term.

Nothing here is fast.  It is meant for tens of records (all-pairs enumeration)
and, for the within-cluster variants, for the real data sets of the tests.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pandas as pd

# ---------------------------------------------------------------------------
# metric ids
# ---------------------------------------------------------------------------

PERFORMANCE_METRICS = [
    "pairwise_precision",
    "pairwise_recall",
    "pairwise_f",
    "cluster_precision",
    "cluster_recall",
    "cluster_f",
    "b_cubed_precision",
    "b_cubed_recall",
    "b_cubed_f",
    "homogeneity",
]
TRUE_SUMMARY_METRICS = ["average_cluster_size", "matching_rate"]
NAME_METRICS = ["homonymy_rate", "name_variation_rate"]
ESTIMATE_METRICS = PERFORMANCE_METRICS + TRUE_SUMMARY_METRICS
ESTIMATE_METRICS_WITH_NAME = ESTIMATE_METRICS + NAME_METRICS

# metrics whose true value lives in [0, 1] (their CI bounds may be clipped)
UNIT_INTERVAL_METRICS = set(PERFORMANCE_METRICS) | {"matching_rate"} | set(NAME_METRICS)

ESTIMATE_COLUMNS = ["estimate", "std_error", "ci_lower", "ci_upper", "draws", "clusters", "note"]

# metrics with 0 <= f(c) <= g(c): an error-free sample gets the binomial interval of SPEC 6
ZERO_EVENT_METRICS = {
    "pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_recall", "b_cubed_precision",
    "b_cubed_recall", "matching_rate", "homonymy_rate", "name_variation_rate",
}


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def is_null(value) -> bool:
    """True for None, NaN, pd.NA, NaT."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def column_values(df: pd.DataFrame, column: str) -> list:
    """The column as a plain Python list, nulls turned into None."""
    return [None if is_null(v) else v for v in df[column].tolist()]


def f_beta(p: float, r: float, beta: float) -> float:
    """1/F = (1/P + beta^2/R)/(1 + beta^2); F = 0 when P or R is 0."""
    if p is None or r is None or math.isnan(p) or math.isnan(r):
        return math.nan
    if p == 0 or r == 0:
        return 0.0
    b2 = beta * beta
    return (1.0 + b2) / (1.0 / p + b2 / r)


def hill_label(q: float) -> str:
    if q == math.inf:
        return "hill_number_inf"
    if float(q).is_integer():
        return f"hill_number_{int(q)}"
    return f"hill_number_{q}"


def z_value(ci_level: float) -> float:
    return NormalDist().inv_cdf(0.5 + ci_level / 2.0)


def group_positions(labels: list) -> dict:
    """label -> frozenset of positions, for the non-null labels."""
    groups: dict = {}
    for pos, lab in enumerate(labels):
        if lab is None:
            continue
        groups.setdefault(lab, set()).add(pos)
    return {lab: frozenset(members) for lab, members in groups.items()}


# ---------------------------------------------------------------------------
# SPEC 3: summary statistics of a clustering
# ---------------------------------------------------------------------------


def hill_number(shares: list[float], q: float) -> float:
    if q == 0:
        return float(len([p for p in shares if p > 0]))
    if q == 1:
        total = 0.0
        for p in shares:
            if p > 0:
                total -= p * math.log(p)
        return math.exp(total)
    if q == math.inf:
        return 1.0 / max(shares)
    # (sum p^q)^(1/(1-q)) written with the largest share factored out, so that
    # large q does not underflow: sum p^q = pmax^q * sum (p/pmax)^q
    pmax = max(shares)
    scaled = 0.0
    for p in shares:
        if p > 0:
            scaled += (p / pmax) ** q
    return math.exp((q * math.log(pmax) + math.log(scaled)) / (1.0 - q))


def size_shares(sizes: list[int]) -> list[float]:
    """pi_i: share of clusters of size i, one entry per distinct size."""
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    n_clusters = len(sizes)
    return [c / n_clusters for c in counts.values()]


def name_rates(clusters: dict, names: list) -> tuple[float, float]:
    """(homonymy rate, name variation rate) of a clustering given as
    label -> positions.  Null names are ignored; a cluster enters the
    denominators only if it holds at least one non-null name."""
    cluster_names = {}
    for lab, members in clusters.items():
        cluster_names[lab] = {names[p] for p in members if names[p] is not None}
    clusters_with_name: dict = {}
    for lab, nms in cluster_names.items():
        for nm in nms:
            clusters_with_name.setdefault(nm, set()).add(lab)
    named = [lab for lab, nms in cluster_names.items() if nms]
    if not named:
        return math.nan, math.nan
    homonymous = 0
    varied = 0
    for lab in named:
        nms = cluster_names[lab]
        if any(len(clusters_with_name[nm]) >= 2 for nm in nms):
            homonymous += 1
        if len(nms) >= 2:
            varied += 1
    return homonymous / len(named), varied / len(named)


def summarize_ref(df, cluster="inventor_id", name=None, hill_orders=(0, 1, 2, math.inf)) -> dict:
    labels = column_values(df, cluster)
    clusters = group_positions(labels)
    n_records = sum(1 for lab in labels if lab is not None)
    n_clusters = len(clusters)
    sizes = [len(m) for m in clusters.values()]
    out = {
        "n_records": n_records,
        "n_clusters": n_clusters,
        "average_cluster_size": n_records / n_clusters,
        "matching_rate": sum(s for s in sizes if s >= 2) / n_records,
    }
    shares = size_shares(sizes)
    for q in hill_orders:
        out[hill_label(q)] = hill_number(shares, q)
    if name is not None:
        names = column_values(df, name)
        # only records of the clustering (non-null cluster) take part
        names = [nm if labels[i] is not None else None for i, nm in enumerate(names)]
        hom, var = name_rates(clusters, names)
        out["homonymy_rate"] = hom
        out["name_variation_rate"] = var
    return out


# ---------------------------------------------------------------------------
# exact metrics (SPEC 5, last paragraph) by enumeration
# ---------------------------------------------------------------------------


def exact_metrics_ref(df, prediction, reference, beta=1.0, all_pairs=True) -> dict:
    """Exact metrics on the records with a non-null prediction.

    all_pairs=True enumerates every unordered pair of records (O(N^2));
    all_pairs=False enumerates the pairs inside predicted and inside true
    clusters only (still pair enumeration, usable for a few 10^4 records)."""
    pred_all = column_values(df, prediction)
    ref_all = column_values(df, reference)
    keep = [i for i, p in enumerate(pred_all) if p is not None]
    pred = [pred_all[i] for i in keep]
    ref = [ref_all[i] for i in keep]
    if any(r is None for r in ref):
        raise ValueError("exact reference needs a reference id on every record of the release")
    n = len(pred)

    pred_clusters = group_positions(pred)
    true_clusters = group_positions(ref)

    if all_pairs:
        both = pred_pairs = true_pairs = 0
        for a in range(n):
            for b in range(a + 1, n):
                same_pred = pred[a] == pred[b]
                same_true = ref[a] == ref[b]
                pred_pairs += same_pred
                true_pairs += same_true
                both += same_pred and same_true
    else:
        both = pred_pairs = true_pairs = 0
        for members in pred_clusters.values():
            ms = sorted(members)
            for i, a in enumerate(ms):
                for b in ms[i + 1 :]:
                    pred_pairs += 1
                    both += ref[a] == ref[b]
        for members in true_clusters.values():
            ms = sorted(members)
            for i, _a in enumerate(ms):
                true_pairs += len(ms) - i - 1

    out = {}
    out["pairwise_precision"] = both / pred_pairs if pred_pairs else math.nan
    out["pairwise_recall"] = both / true_pairs if true_pairs else math.nan
    out["pairwise_f"] = f_beta(out["pairwise_precision"], out["pairwise_recall"], beta)

    pred_sets = set(pred_clusters.values())
    true_sets = set(true_clusters.values())
    correct = len(pred_sets & true_sets)
    out["cluster_precision"] = correct / len(pred_sets)
    out["cluster_recall"] = correct / len(true_sets)
    out["cluster_f"] = f_beta(out["cluster_precision"], out["cluster_recall"], beta)

    # b-cubed, each true cluster has equal weight (SPEC 5)
    prec_terms = []
    rec_terms = []
    for c in true_clusters.values():
        p_sum = 0.0
        r_sum = 0.0
        for r in c:
            chat = pred_clusters[pred[r]]
            inter = len(chat & c)
            p_sum += inter / len(chat)
            r_sum += inter / len(c)
        prec_terms.append(p_sum / len(c))
        rec_terms.append(r_sum / len(c))
    out["b_cubed_precision"] = sum(prec_terms) / len(prec_terms)
    out["b_cubed_recall"] = sum(rec_terms) / len(rec_terms)
    out["b_cubed_f"] = f_beta(out["b_cubed_precision"], out["b_cubed_recall"], beta)

    # homogeneity = 1 - H(C|K) / H(C), from entropies
    h_c = 0.0
    for c in true_clusters.values():
        p = len(c) / n
        h_c -= p * math.log(p)
    contingency: dict = {}  # (predicted id, true id) -> n_ck, counted record by record
    for p, t in zip(pred, ref, strict=True):
        contingency[(p, t)] = contingency.get((p, t), 0) + 1
    h_c_given_k = 0.0
    for (p, _t), n_ck in contingency.items():
        h_c_given_k -= (n_ck / n) * math.log(n_ck / len(pred_clusters[p]))
    out["homogeneity"] = 1.0 if h_c == 0 else 1.0 - h_c_given_k / h_c
    return out


# ---------------------------------------------------------------------------
# SPEC 4: record-level errors and the per-cluster f/g table (SPEC 5, 7)
# ---------------------------------------------------------------------------


def record_errors(r, c: frozenset, chat: frozenset) -> dict:
    """SPEC 4 for one record r of true cluster c with predicted cluster chat."""
    assert r in c and r in chat
    oce = len(chat - c)
    uce = len(c - chat)
    return {
        "EI": 0 if chat == c else 1,
        "SDE": len(chat) - len(c),
        "OCE": oce,
        "UCE": uce,
        "ROCE": oce / len(chat),
        "RUCE": uce / len(c),
        "Hl": math.log(len(chat & c) / len(chat)),
    }


def benchmark_table_ref(
    df,
    prediction,
    reference,
    weights="cluster_size",
    draws=None,
    name=None,
    beta=1.0,
):
    """One entry per benchmark cluster restricted to the release, with its
    size, weight, draw count, cluster-level errors and the f/g values of every
    metric.  Returns (rows, info)."""
    pred_all = column_values(df, prediction)
    ref_all = column_values(df, reference)
    names_all = column_values(df, name) if name is not None else None
    weight_all = column_values(df, weights) if weights not in ("cluster_size", "uniform") else None
    draws_all = column_values(df, draws) if draws is not None else None

    release = [i for i, p in enumerate(pred_all) if p is not None]
    n_release = len(release)
    pred_clusters = group_positions(pred_all)
    n_pred_clusters = len(pred_clusters)
    set_aside = sum(
        1 for i in range(len(pred_all)) if pred_all[i] is None and ref_all[i] is not None
    )

    true_clusters: dict = {}
    for i in release:
        if ref_all[i] is not None:
            true_clusters.setdefault(ref_all[i], set()).add(i)
    true_clusters = {lab: frozenset(m) for lab, m in true_clusters.items()}

    # name occurrences in the release population
    name_count: dict = {}
    if names_all is not None:
        for i in release:
            if names_all[i] is not None:
                name_count[names_all[i]] = name_count.get(names_all[i], 0) + 1

    b2 = beta * beta
    rows = []
    for lab in sorted(true_clusters, key=lambda x: str(x)):
        c = true_clusters[lab]
        s = len(c)
        if weights == "cluster_size":
            w = 1.0 / s
        elif weights == "uniform":
            w = 1.0
        else:
            vals = {float(weight_all[i]) for i in c}
            assert len(vals) == 1, "weights vary within a cluster"
            w = vals.pop()
        if draws_all is None:
            d = 1
        else:
            vals = {int(draws_all[i]) for i in c}
            assert len(vals) == 1
            d = vals.pop()

        errs = [record_errors(r, c, pred_clusters[pred_all[r]]) for r in c]
        E = {key: sum(e[key] for e in errs) / s for key in errs[0]}

        fg = {}
        f_pair = s * (s - 1 - E["UCE"]) * w
        fg["pairwise_precision"] = (f_pair, s * (s - 1 + E["SDE"]) * w)
        fg["pairwise_recall"] = (f_pair, s * (s - 1) * w)
        fg["pairwise_f"] = (f_pair, s * (s - 1 + E["SDE"] / (1 + b2)) * w)
        fg["cluster_precision"] = (n_release * (1 - E["EI"]) * w, n_pred_clusters * s * w)
        fg["cluster_recall"] = ((1 - E["EI"]) * w, w)
        fg["cluster_f"] = (
            n_release * (1 + b2) * (1 - E["EI"]) * w,
            (n_release * b2 + n_pred_clusters * s) * w,
        )
        fg["b_cubed_precision"] = ((1 - E["ROCE"]) * w, w)
        fg["b_cubed_recall"] = ((1 - E["RUCE"]) * w, w)
        fg["homogeneity"] = (s * E["Hl"] * w, s * math.log(s / n_release) * w)
        fg["average_cluster_size"] = (s * w, w)
        fg["matching_rate"] = (s * (1 if s > 1 else 0) * w, s * w)
        if names_all is not None:
            nms = [names_all[r] for r in c if names_all[r] is not None]
            distinct = set(nms)
            in_c = {nm: nms.count(nm) for nm in distinct}
            h = 1 if any(name_count[nm] > in_c[nm] for nm in distinct) else 0
            has_name = 1 if distinct else 0
            fg["homonymy_rate"] = (h * w, has_name * w)
            fg["name_variation_rate"] = ((1 if len(distinct) >= 2 else 0) * w, has_name * w)
        rows.append(
            {
                "label": lab,
                "size": s,
                "weight": w,
                "draws": d,
                "errors": E,
                "fg": fg,
                "has_name": bool(
                    names_all is not None and any(names_all[r] is not None for r in c)
                ),
            }
        )
    info = {
        "N": n_release,
        "n_pred_clusters": n_pred_clusters,
        "records_set_aside": set_aside,
        "n_clusters": len(rows),
    }
    return rows, info


# ---------------------------------------------------------------------------
# SPEC 6: the estimator, written from the formula
# ---------------------------------------------------------------------------


def ratio_estimator(f: list[float], g: list[float], bias_adjust=True) -> dict:
    """theta = (fbar/gbar)(1 + sum_i (g_i/gbar)(f_i/fbar - g_i/gbar)/(k(k-1)))
    V = (fbar/gbar)^2 sum_i (g_i/gbar - f_i/fbar)^2 / (k(k-1))."""
    k = len(f)
    fbar = sum(f) / k
    gbar = sum(g) / k
    if gbar == 0:
        return {"estimate": math.nan, "std_error": math.nan, "ratio": math.nan, "case": "undefined"}
    if fbar == 0:
        return {"estimate": 0.0, "std_error": math.nan, "ratio": 0.0, "case": "f_zero"}
    ratio = fbar / gbar
    if k < 2:
        return {"estimate": ratio, "std_error": math.nan, "ratio": ratio, "case": "k_lt_2"}
    adj = 0.0
    var_sum = 0.0
    for fi, gi in zip(f, g, strict=True):
        adj += (gi / gbar) * (fi / fbar - gi / gbar)
        var_sum += (gi / gbar - fi / fbar) ** 2
    adj /= k * (k - 1)
    v = ratio**2 * var_sum / (k * (k - 1))
    estimate = ratio * (1.0 + adj) if bias_adjust else ratio
    return {"estimate": estimate, "std_error": math.sqrt(v), "ratio": ratio, "case": "ok"}


def zero_event_ref(f, g, ci_level):
    """SPEC 6, sample without errors: (lower, upper) or None. Written from the formula:
    k* = sum g / max g over the draws with g > 0, q = 1 - (1 - level)^(1/k*)."""
    pairs = [(fi, gi) for fi, gi in zip(f, g, strict=True) if gi > 0]
    if len(f) < 2 or not pairs:
        return None
    k_eff = sum(gi for _, gi in pairs) / max(gi for _, gi in pairs)
    q = 1.0 - (1.0 - ci_level) ** (1.0 / k_eff)
    if all(abs(fi - gi) <= 1e-12 * gi for fi, gi in pairs):
        return (1.0 - q, 1.0)
    if all(fi == 0 for fi, _ in pairs):
        return (0.0, q)
    return None


def expand_draws(rows, metric, only_named=False):
    f, g = [], []
    for row in rows:
        if only_named and not row["has_name"]:
            continue
        fi, gi = row["fg"][metric]
        for _ in range(row["draws"]):
            f.append(fi)
            g.append(gi)
    return f, g


def b_cubed_f_std_errors(rows, beta, p_hat, r_hat):
    """Linearised standard errors of F_beta(P, R) for the b-cubed ratios over
    the shared draws.  Returns the values obtained with the derivatives taken
    at the plain ratios and at the reported (possibly bias-adjusted) estimates."""
    fp, g = expand_draws(rows, "b_cubed_precision")
    fr, g2 = expand_draws(rows, "b_cubed_recall")
    assert g == g2
    k = len(g)
    if k < 2:
        return [math.nan]
    gbar = sum(g) / k
    p = sum(fp) / k / gbar
    r = sum(fr) / k / gbar
    b2 = beta * beta
    out = []
    for pp, rr in ((p, r), (p_hat, r_hat)):
        denom = (b2 * pp + rr) ** 2
        a = (1 + b2) * rr * rr / denom
        b = (1 + b2) * b2 * pp * pp / denom
        total = 0.0
        for i in range(k):
            zp = (fp[i] - p * g[i]) / gbar
            zr = (fr[i] - r * g[i]) / gbar
            total += (a * zp + b * zr) ** 2
        out.append(math.sqrt(total / (k * (k - 1))))
    return out


def estimate_ref(
    df,
    prediction,
    reference,
    weights="cluster_size",
    draws=None,
    name=None,
    beta=1.0,
    ci_level=0.95,
    bias_adjust=True,
    name_domain="indicator",
):
    """Reference estimates: metric -> dict(estimate, std_error, ci_lower,
    ci_upper, draws, clusters, case) plus info.

    name_domain: how clusters with no non-null name enter the name statistics:
    "indicator" keeps every draw with g = 0 for them (domain estimation over
    all draws), "subset" drops those draws."""
    rows, info = benchmark_table_ref(df, prediction, reference, weights, draws, name, beta)
    metrics = ESTIMATE_METRICS_WITH_NAME if name is not None else ESTIMATE_METRICS
    z = z_value(ci_level)
    out = {}
    for m in metrics:
        if m == "b_cubed_f":
            continue
        only_named = m in NAME_METRICS and name_domain == "subset"
        f, g = expand_draws(rows, m, only_named=only_named)
        res = (
            ratio_estimator(f, g, bias_adjust)
            if f
            else {"estimate": math.nan, "std_error": math.nan, "ratio": math.nan, "case": "empty"}
        )
        if m == "homogeneity":
            res = dict(res)
            res["estimate"] = 1.0 - res["estimate"]
        if m in ZERO_EVENT_METRICS and res["case"] in ("ok", "f_zero"):
            res = dict(res)
            res["zero_event"] = zero_event_ref(f, g, ci_level)
        res["draws"] = len(f)
        res["clusters"] = len([row for row in rows if not (only_named and not row["has_name"])])
        out[m] = res
    p_hat = out["b_cubed_precision"]["estimate"]
    r_hat = out["b_cubed_recall"]["estimate"]
    ses = b_cubed_f_std_errors(rows, beta, p_hat, r_hat)
    out["b_cubed_f"] = {
        "estimate": f_beta(p_hat, r_hat, beta),
        "std_error": ses[-1],
        "std_error_variants": ses,
        "draws": out["b_cubed_precision"]["draws"],
        "clusters": out["b_cubed_precision"]["clusters"],
        "case": out["b_cubed_precision"]["case"],
    }
    zp, zr = out["b_cubed_precision"].get("zero_event"), out["b_cubed_recall"].get("zero_event")
    if zp and zr and zp[1] == zr[1] == 1.0:
        out["b_cubed_f"]["zero_event"] = (min(zp[0], zr[0]), 1.0)
    for res in out.values():
        se = res["std_error"]
        res["ci_lower"] = res["estimate"] - z * se
        res["ci_upper"] = res["estimate"] + z * se
    return out, info


# ---------------------------------------------------------------------------
# SPEC 10: the release diff, cluster by cluster
# ---------------------------------------------------------------------------


def brute_force_diff(before: list, after: list) -> tuple[dict, dict, int]:
    """The diff of release ``after`` against ``before`` (lists of cluster ids, None: outside the
    release) on the records in both: (clusters per change class, records per change class,
    records moved), by comparing the member sets of every cluster."""
    common = [i for i in range(len(before)) if before[i] is not None and after[i] is not None]
    members_a: dict = {}
    members_b: dict = {}
    for i in common:
        members_a.setdefault(after[i], set()).add(i)
        members_b.setdefault(before[i], set()).add(i)
    clusters = dict.fromkeys(("unchanged", "merged", "split", "both"), 0)
    records = dict.fromkeys(("unchanged", "merged", "split", "both"), 0)
    for records_a in members_a.values():
        sources = {before[i] for i in records_a}
        whole = all(members_b[s] <= records_a for s in sources)
        if len(sources) == 1:
            kind = "unchanged" if whole else "split"
        else:
            kind = "merged" if whole else "both"
        clusters[kind] += 1
        records[kind] += len(records_a)
    moved = sum(members_a[after[i]] != members_b[before[i]] for i in common)
    return clusters, records, moved


# ---------------------------------------------------------------------------
# SPEC 9: the critical labelling rules, draw by draw
# ---------------------------------------------------------------------------


def brute_force_rules(records: pd.DataFrame, lab: pd.DataFrame, *, record: str = "id",
                      pred: str = "pred") -> set[tuple[int, int]]:
    """(draw, rule) of every draw that breaks a critical rule of SPEC 9 (1-4, 6, 7), from the
    member sets of the predicted clusters: ``records`` has the record ids and the release
    (null: outside it), ``lab`` one row per draw (record_id, removed and added as lists of
    ids, true_cluster)."""
    pred = {r: p for r, p in zip(column_values(records, record), column_values(records, pred), strict=True)
            if p is not None}
    members = {}
    for r, p in pred.items():
        members.setdefault(p, set()).add(r)
    fails = set()
    truth = {}
    for row in lab.itertuples():
        d, r, a, b = row.draw, row.record_id, set(row.removed), set(row.added)
        if any(x in pred and pred[x] != pred[r] for x in a):
            fails.add((d, 1))
        if r in a:
            fails.add((d, 2))
        if any(x in pred and pred[x] == pred[r] for x in b):
            fails.add((d, 3))
        if any(x not in pred for x in a | b):
            fails.add((d, 4))
        truth[d] = (members[pred[r]] - a) | {x for x in b if x in pred}
    tc = {d: (None if is_null(t) else t) for d, t in zip(lab["draw"], lab["true_cluster"], strict=True)}
    for i in truth:
        for j in truth:
            if i != j and truth[i] & truth[j] and truth[i] != truth[j]:
                fails.add((i, 6))
            if i != j and tc[i] is not None and tc[j] is not None and (
                    (tc[i] == tc[j]) != (truth[i] == truth[j])):
                fails.add((i, 7))
    return fails


# ---------------------------------------------------------------------------
# random test data
# ---------------------------------------------------------------------------

NAME_POOL = ["ann lee", "bo chen", "cy kato", "di mizuno", "ed wu"]


def make_frame(
    true_labels: list[int],
    pred_labels: list,
    bench_clusters: set,
    names: list | None = None,
    id_kind: str = "str",
    cluster_weights: dict | None = None,
    cluster_draws: dict | None = None,
) -> pd.DataFrame:
    """Build an evaluation table.

    true_labels: the true cluster of every record (int); pred_labels: the
    predicted cluster (int) or None (record outside the release);
    bench_clusters: the true labels that form the benchmark.  Ids are turned
    into strings ("str"), nullable integers ("int") or Python objects
    ("object": ints in an object column)."""
    n = len(true_labels)
    ref = [t if t in bench_clusters else None for t in true_labels]

    def convert(values, prefix, offset):
        if id_kind == "str":
            return pd.Series([None if v is None else f"{prefix}{v}" for v in values], dtype="str")
        if id_kind == "int":
            return pd.Series([None if v is None else v + offset for v in values], dtype="Int64")
        if id_kind == "object":
            return pd.Series([None if v is None else v + offset for v in values], dtype=object)
        raise ValueError(id_kind)

    data = {
        "record": [f"r{i}" for i in range(n)],
        "pred": convert(pred_labels, "p", 1000),
        "ref": convert(ref, "t", 5000),
        "truth": convert(true_labels, "t", 5000),
    }
    if names is not None:
        data["name"] = pd.Series(names, dtype="str")
    if cluster_weights is not None:
        data["w"] = [cluster_weights[t] if t in bench_clusters else math.nan for t in true_labels]
    if cluster_draws is not None:
        data["n_draws"] = pd.Series(
            [cluster_draws[t] if t in bench_clusters else None for t in true_labels], dtype="Int64"
        )
    return pd.DataFrame(data)


def random_case(seed: int, n_max: int = 40, id_kind: str = "str", null_rate=0.15):
    """A random clustering problem: true clustering, a noisy prediction (merge,
    split and moves of records), nulls, names, benchmark, weights, draws."""
    rng = random.Random(seed)
    n = rng.randint(6, n_max)
    n_true = rng.randint(2, max(2, n // 2))
    true_labels = [rng.randrange(n_true) for _ in range(n)]
    # prediction: start from truth, merge some clusters, split some, move some
    merge = {t: (t if rng.random() < 0.7 else rng.randrange(n_true)) for t in range(n_true)}
    pred = []
    for t in true_labels:
        p = merge[t]
        if rng.random() < 0.15:
            p = p + 100  # split off
        if rng.random() < 0.1:
            p = rng.randrange(n_true)
        if rng.random() < null_rate:
            p = None
        pred.append(p)
    names = []
    for t in true_labels:
        if rng.random() < 0.1:
            names.append(None)
        elif rng.random() < 0.75:
            names.append(NAME_POOL[t % len(NAME_POOL)])
        else:
            names.append(rng.choice(NAME_POOL))
    labels = sorted(set(true_labels))
    n_bench = rng.randint(2, len(labels)) if len(labels) >= 2 else 1
    bench = set(rng.sample(labels, n_bench))
    weights = {t: rng.choice([0.25, 0.5, 1.0, 3.0, 7.5]) for t in labels}
    draws = {t: rng.choice([1, 1, 2, 3]) for t in labels}
    return make_frame(true_labels, pred, bench, names, id_kind, weights, draws)


# ---------------------------------------------------------------------------
# access to the implementation under test
# ---------------------------------------------------------------------------

PUBLIC_API = ("summarize", "estimate", "exact_metrics", "InputError")


def load_erx():
    """The package under test, or None while its public API is not there."""
    try:
        import er_expectations as erx  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the state of the package
        return None
    if not all(hasattr(erx, attr) for attr in PUBLIC_API):
        return None
    return erx


def close(a, b, tol=1e-9) -> bool:
    """Equal within tol (absolute and relative); NaN equals NaN."""
    a = float(a)
    b = float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
