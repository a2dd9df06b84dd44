"""Small random benchmarks for the interval tests (issue 21): a few true clusters, some split
in two pieces, some predicted clusters holding one stranger."""

from __future__ import annotations

import numpy as np

from er_expectations.stats import BenchmarkSample


def random_sample(seed: int, n: int = 40) -> BenchmarkSample:
    """A random benchmark of ``n`` true clusters with a few prediction errors."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 5, n)
    cluster, count, label = [], [], []
    next_label = 0
    for c, s in enumerate(size):
        if s >= 2 and rng.random() < 0.3:  # split in two pieces
            cluster += [c, c]
            count += [1, s - 1]
            label += [next_label, next_label + 1]
            next_label += 2
        else:
            cluster.append(c)
            count.append(s)
            label.append(next_label)
            next_label += 1
    piece_n = np.array(count)
    piece_m = piece_n + (rng.random(piece_n.size) < 0.15)  # some predicted clusters hold one stranger
    return BenchmarkSample(labels=np.array([f"c{i:03d}" for i in range(n)], dtype=object), size=size,
                           weight=1.0 / size, draws=rng.integers(1, 3, n), piece_cluster=np.array(cluster),
                           piece_n=piece_n, piece_m=piece_m, piece_label=np.array(label), n_records=2000,
                           n_clusters=1500, design="cluster_size")
