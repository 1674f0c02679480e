"""The paper's published EMRIS figures, to print next to ours.

Goodwin, "A solution to the exact match on rare item searches", appendix tables 2 (threshold
0.25, with the rows that take no threshold: OPTIMAL, RW, FOCUSED) and 3 (threshold 0.75), and the
real-site table (420 municipal sites). Contract: :data:`PAPER` maps ``(algorithm, states or 0,
threshold, N)`` to ``(accuracy, D)``; :func:`paper_figure` looks one up, taking the
threshold-free rows at any threshold. Algorithm names are the bench's (``random`` is RW, ``ls2f``
is LS2F ...). The paper's D counts downloads without the start page, the random walk's steps
(20 / 200 / 2000 = 0.2N) and HMM's N (it downloads "every available node").
"""

from __future__ import annotations

NODES = (100, 1000, 10000)

#: threshold-free rows (table 2's "No threshold" block)
_FREE: dict[str, list[tuple[float, float]]] = {
    "optimal": [(1.0, 2.74), (1.0, 2.87), (1.0, 2.01)],
    "random": [(0.02, 20), (0.00, 200), (0.00, 2000)],
    "focused": [(0.28, 35.14), (0.32, 171.9), (0.00, 771.7)],
}

_T25: dict[tuple[str, int], list[tuple[float, float]]] = {
    ("sim", 0): [(0.02, 8.00), (0.01, 15.8), (0.03, 23.6)],
    ("deg", 0): [(0.0, 8.50), (0.0, 15.1), (0.0, 29.7)],
    ("simdeg", 0): [(0.01, 7.38), (0.0, 14.1), (0.0, 24.5)],
    ("astar", 0): [(0.04, 11.94), (0.04, 40.8), (0.02, 537.4)],
    ("hmm", 3): [(0.80, 100), (0.41, 1000), (0.07, 10000)],
    ("hmm", 100): [(0.68, 100), (0.28, 1000), (0.02, 10000)],
    ("hmm", 200): [(0.58, 100), (0.22, 1000), (0.14, 10000)],
    ("hmm", 400): [(0.47, 100), (0.16, 1000), (0.09, 10000)],
    ("ls", 3): [(0.78, 20.84), (0.68, 106.4), (0.52, 429.3)],
    ("ls", 100): [(0.49, 27.10), (0.31, 77.0), (0.14, 826.0)],
    ("ls", 200): [(0.40, 24.13), (0.18, 57.2), (0.25, 1670.7)],
    ("ls", 400): [(0.14, 14.67), (0.18, 146.1), (0.13, 1736.0)],
    ("hmm2f", 100): [(0.75, 100), (0.49, 1000), (0.04, 10000)],
    ("hmm2f", 200): [(0.68, 100), (0.40, 1000), (0.06, 10000)],
    ("hmm2f", 400): [(0.75, 100), (0.47, 1000), (0.04, 10000)],
    ("ls2f", 100): [(0.79, 11.77), (0.70, 48.4), (0.47, 195.6)],
    ("ls2f", 200): [(0.78, 12.25), (0.65, 50.8), (0.67, 368.8)],
    ("ls2f", 400): [(0.73, 13.94), (0.67, 52.6), (0.51, 187.0)],
}

_T75: dict[tuple[str, int], list[tuple[float, float]]] = {
    ("sim", 0): [(0.07, 10.89), (0.05, 23.4), (0.04, 36.1)],
    ("deg", 0): [(0.00, 11.16), (0.0, 31.6), (0.0, 51.9)],
    ("simdeg", 0): [(0.10, 10.91), (0.03, 22.6), (0.0, 46.9)],
    ("astar", 0): [(0.21, 24.76), (0.08, 255.6), (0.08, 1853.4)],
    ("hmm", 3): [(0.69, 100), (0.45, 1000), (0.09, 10000)],
    ("hmm", 100): [(0.71, 100), (0.30, 1000), (0.07, 10000)],
    ("hmm", 200): [(0.60, 100), (0.26, 1000), (0.06, 10000)],
    ("hmm", 400): [(0.47, 100), (0.20, 1000), (0.09, 10000)],
    ("ls", 3): [(0.75, 22.52), (0.67, 124.0), (0.32, 1839.2)],
    ("ls", 100): [(0.57, 35.19), (0.34, 356.5), (0.10, 5088.0)],
    ("ls", 200): [(0.37, 35.64), (0.25, 519.4), (0.17, 5442.7)],
    ("ls", 400): [(0.30, 43.45), (0.16, 633.8), (0.09, 8278.1)],
    ("hmm2f", 100): [(0.73, 100), (0.41, 1000), (0.03, 10000)],
    ("hmm2f", 200): [(0.75, 100), (0.45, 1000), (0.06, 10000)],
    ("hmm2f", 400): [(0.74, 100), (0.47, 1000), (0.04, 10000)],
    ("ls2f", 100): [(0.76, 12.52), (0.72, 58.2), (0.57, 715.1)],
    ("ls2f", 200): [(0.80, 12.64), (0.66, 75.8), (0.41, 578.4)],
    ("ls2f", 400): [(0.78, 11.72), (0.64, 75.2), (0.35, 793.0)],
}

PAPER: dict[tuple[str, int, float, int], tuple[float, float]] = {}
for _threshold, _table in ((0.25, _T25), (0.75, _T75)):
    for (_alg, _states), _cells in _table.items():
        for _n, _cell in zip(NODES, _cells, strict=True):
            PAPER[(_alg, _states, _threshold, _n)] = _cell

#: the real-site experiment (26,000-page municipal sites, threshold 0.75)
REAL_SITES: dict[str, tuple[float, float]] = {"ls2f": (0.84, 25.35), "sim": (0.28, 84.03)}


def paper_figure(
    algorithm: str, states: int | None, threshold: float, nodes: int
) -> tuple[float, float] | None:
    """The paper's ``(accuracy, D)`` for this cell, or None when it has none."""
    if algorithm in _FREE:
        return _FREE[algorithm][NODES.index(nodes)] if nodes in NODES else None
    return PAPER.get((algorithm, states or 0, round(threshold, 2), nodes))
