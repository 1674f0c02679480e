"""The EMRIS experiment runner: the paper's protocol on generated sites, in process.

Paper: Goodwin, "A solution to the exact match on rare item searches", section "Experimental
setup" / "Results from generated directed graph" (tables 2 and 3).

Contract: :func:`run_emris` runs ``runs`` iterations; iteration ``i`` generates a fresh site of
``nodes`` pages and a (target, query) draw from ``numpy.random.default_rng([seed, nodes, i])``
(the paper generates a graph per iteration), so every algorithm sees the same sites and tasks
and a fixed seed gives identical results. Accuracy = fraction of runs whose returned page is the
target. D is counted two ways (issue 28): ``d``, as the paper counts it -- pages downloaded, the
start page excluded (OPTIMAL: the path's edges; HMM: N-1), the random walk as its steps
(``ceil(0.2 N)``, the paper's 20 / 200 / 2000) -- and ``mean_downloads``, the old count:
distinct pages downloaded, the start page included (the random walk's distinct pages).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
from tqdm import tqdm

from hiddenweb import defaults
from hiddenweb.bench.lostsheep.baselines import BASELINES, Ctx, random_walk_steps
from hiddenweb.bench.lostsheep.graphs import (
    GraphParams,
    GraphSite,
    SiteGraph,
    draw_task,
    generate_site,
)
from hiddenweb.lostsheep.herder import DEFAULT_MAXDEPTH, Herder

logger = logging.getLogger(__name__)

ALGORITHMS = ("ls", "ls2f", *BASELINES)
USES_STATES = {"ls", "ls2f", "hmm", "hmm2f"}


@dataclass
class EmrisResult:
    algorithm: str
    states: int | None
    threshold: float
    nodes: int
    runs: int
    accuracy: float
    mean_downloads: float  # distinct pages downloaded, the start page included (the old D)
    seed: int
    wall_seconds: float
    start: str = "B"  # the automata's start state: "B", "middle" (S//2 from Q); "-": no automaton
    d: float = 0.0  # the paper's D: downloads without the start page; random walk: steps
    maxdepth: int = DEFAULT_MAXDEPTH
    at_maxdepth: float = 0.0  # LS / LS2F: share of runs that ended at maxdepth


class Outcome(NamedTuple):
    """One run of one algorithm."""

    found: bool
    downloads: int  # distinct pages, the start page included (the old count)
    d: int  # the paper's count
    reason: str = ""  # the herder's: "threshold", "maxdepth" or "stuck"


def _task(
    nodes: int, index: int, seed: int, params: GraphParams | None
) -> tuple[SiteGraph, int, np.ndarray]:
    rng = np.random.default_rng([seed, nodes, index])
    graph = generate_site(nodes, rng, params)
    target, query = draw_task(graph, rng)
    return graph, target, query


def run_once(
    algorithm: str,
    nodes: int,
    index: int,
    *,
    states: int = 100,
    threshold: float = 0.75,
    seed: int = 0,
    maxdepth: int = DEFAULT_MAXDEPTH,
    params: GraphParams | None = None,
    start: str = defaults.HIDDENWEB_LOSTSHEEP_START,
) -> Outcome:
    """One iteration."""
    return solve(algorithm, _task(nodes, index, seed, params), nodes, index, states=states,
                 threshold=threshold, seed=seed, maxdepth=maxdepth, start=start)


def solve(
    algorithm: str,
    task: tuple[SiteGraph, int, np.ndarray],
    nodes: int,
    index: int,
    *,
    states: int = 100,
    threshold: float = 0.75,
    seed: int = 0,
    maxdepth: int = DEFAULT_MAXDEPTH,
    start: str = defaults.HIDDENWEB_LOSTSHEEP_START,
) -> Outcome:
    """Run ``algorithm`` on one drawn ``(graph, target, query)``.

    ``start`` is where every automaton starts, ``"B"`` or ``"middle"`` (the two readings,
    :func:`~hiddenweb.lostsheep.tsetlin.start_state`)."""
    graph, target, query = task
    algo_rng = np.random.default_rng([seed, nodes, index, 1])
    if algorithm in ("ls", "ls2f"):
        site = GraphSite(graph)
        herder = Herder(
            [graph.vocab[w] for w in query.tolist()],
            states=states,
            twofold=algorithm == "ls2f",
            threshold=threshold,
            maxdepth=maxdepth,
            start=start,
        )
        result = herder.run(site, 0)
        return Outcome(result.page == target, len(site.downloaded),
                       len(site.downloaded - {0}), result.reason)
    qmask = np.zeros(len(graph.vocab), dtype=bool)
    qmask[query] = True
    ctx = Ctx(target, threshold, maxdepth, algo_rng, states, algorithm == "hmm2f", start)
    page, downloads = BASELINES[algorithm](graph, qmask, ctx)
    d = random_walk_steps(graph.n) if algorithm == "random" else downloads - 1
    return Outcome(page == target, downloads, d)


def run_emris(
    algorithm: str,
    nodes: int,
    runs: int = 150,
    *,
    states: int = 100,
    threshold: float = 0.75,
    seed: int = 0,
    maxdepth: int = DEFAULT_MAXDEPTH,
    params: GraphParams | None = None,
    progress: bool = True,
    start: str = defaults.HIDDENWEB_LOSTSHEEP_START,
) -> EmrisResult:
    """Run the protocol for one algorithm and one graph size."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    t0 = time.perf_counter()
    hits, downloads, paper_d, deep = 0, 0, 0, 0
    label = f"{algorithm} S={states}" if algorithm in USES_STATES else algorithm
    for i in tqdm(
        range(runs), desc=f"{label} N={nodes}", file=sys.stderr, disable=not progress, leave=False
    ):
        out = run_once(
            algorithm,
            nodes,
            i,
            states=states,
            threshold=threshold,
            seed=seed,
            maxdepth=maxdepth,
            params=params,
            start=start,
        )
        hits += out.found
        downloads += out.downloads
        paper_d += out.d
        deep += out.reason == "maxdepth"
    return EmrisResult(
        algorithm=algorithm,
        states=states if algorithm in USES_STATES else None,
        threshold=threshold,
        nodes=nodes,
        runs=runs,
        accuracy=hits / runs,
        mean_downloads=downloads / runs,
        seed=seed,
        wall_seconds=round(time.perf_counter() - t0, 3),
        d=paper_d / runs,
        start=start if algorithm in USES_STATES else "-",
    )


def as_dict(result: EmrisResult) -> dict:
    return asdict(result)


def run_grid(
    rows: list[tuple[str, int]],
    nodes: int,
    thresholds: list[float],
    runs: int = 150,
    *,
    seed: int = 0,
    maxdepth: int = DEFAULT_MAXDEPTH,
    params: GraphParams | None = None,
    progress: bool = True,
    starts: tuple[str, ...] = (defaults.HIDDENWEB_LOSTSHEEP_START,),
    sweep: tuple[int, ...] = (),
) -> list[EmrisResult]:
    """:func:`run_emris` for many ``(algorithm, states)`` rows, thresholds and start readings.

    Each iteration's site is generated once and shared by every row (the same sites and tasks
    as :func:`run_emris` draws, so the figures are identical); wall time is per row. A row
    without automata runs once, whatever ``starts``. ``sweep``: the LS2F rows again at each of
    these maxdepths (issue 28's sensitivity)."""
    cells = [(a, s, t, st, maxdepth) for a, s in rows for t in thresholds
             for st in (starts if a in USES_STATES else ("-",))]
    cells += [(a, s, t, st, md) for a, s in rows if a == "ls2f" for t in thresholds
              for st in starts for md in sweep]
    cells = list(dict.fromkeys(cells))
    hits = dict.fromkeys(cells, 0)
    downloads = dict.fromkeys(cells, 0)
    paper_d = dict.fromkeys(cells, 0)
    deep = dict.fromkeys(cells, 0)
    clock = dict.fromkeys(cells, 0.0)
    for i in tqdm(range(runs), desc=f"grid N={nodes}", file=sys.stderr, disable=not progress):
        t0 = time.perf_counter()
        task = _task(nodes, i, seed, params)
        gen = time.perf_counter() - t0
        memo: dict[tuple, Outcome] = {}  # HMM ignores the threshold: one run per site
        for cell in cells:
            algorithm, states, threshold, start, depth = cell
            t0 = time.perf_counter()
            key = (algorithm, states, start) if algorithm in ("hmm", "hmm2f") else None
            out = memo.get(key) if key else None
            if out is None:
                out = solve(algorithm, task, nodes, i, states=states or 100,
                            threshold=threshold, seed=seed, maxdepth=depth,
                            start=start if start != "-" else "B")
                if key:
                    memo[key] = out
            clock[cell] += gen + time.perf_counter() - t0
            hits[cell] += out.found
            downloads[cell] += out.downloads
            paper_d[cell] += out.d
            deep[cell] += out.reason == "maxdepth"
    return [
        EmrisResult(
            algorithm=c[0],
            states=c[1] if c[0] in USES_STATES else None,
            threshold=c[2],
            nodes=nodes,
            runs=runs,
            accuracy=hits[c] / runs,
            mean_downloads=downloads[c] / runs,
            seed=seed,
            wall_seconds=round(clock[c], 3),
            start=c[3],
            d=paper_d[c] / runs,
            maxdepth=c[4],
            at_maxdepth=deep[c] / runs,
        )
        for c in cells
    ]
