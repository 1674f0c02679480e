"""The EMRIS experiment runner: the paper's protocol on generated sites, in process.

Paper: Goodwin, "A solution to the exact match on rare item searches", section "Experimental
setup" / "Results from generated directed graph" (tables 2 and 3).

Contract: :func:`run_emris` runs ``runs`` iterations; iteration ``i`` generates a fresh site of
``nodes`` pages and a (target, query) draw from ``numpy.random.default_rng([seed, nodes, i])``
(the paper generates a graph per iteration), so every algorithm sees the same sites and tasks
and a fixed seed gives identical results. Accuracy = fraction of runs whose returned page is the
target; D = mean number of distinct pages downloaded (start page included).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np
from tqdm import tqdm

from hiddenweb.lostsheep.baselines import BASELINES, Ctx
from hiddenweb.lostsheep.graphs import GraphParams, GraphSite, draw_task, generate_site
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
    mean_downloads: float
    seed: int
    wall_seconds: float


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
) -> tuple[bool, int]:
    """One iteration: ``(found the target, downloads)``."""
    rng = np.random.default_rng([seed, nodes, index])
    graph = generate_site(nodes, rng, params)
    target, query = draw_task(graph, rng)
    algo_rng = np.random.default_rng([seed, nodes, index, 1])
    if algorithm in ("ls", "ls2f"):
        site = GraphSite(graph)
        herder = Herder(
            [graph.vocab[w] for w in query.tolist()],
            states=states,
            twofold=algorithm == "ls2f",
            threshold=threshold,
            maxdepth=maxdepth,
        )
        result = herder.run(site, 0)
        return result.page == target, len(site.downloaded)
    qmask = np.zeros(len(graph.vocab), dtype=bool)
    qmask[query] = True
    ctx = Ctx(target, threshold, maxdepth, algo_rng, states, algorithm == "hmm2f")
    page, downloads = BASELINES[algorithm](graph, qmask, ctx)
    return page == target, downloads


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
) -> EmrisResult:
    """Run the protocol for one algorithm and one graph size."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    t0 = time.perf_counter()
    hits, downloads = 0, 0
    label = f"{algorithm} S={states}" if algorithm in USES_STATES else algorithm
    for i in tqdm(
        range(runs), desc=f"{label} N={nodes}", file=sys.stderr, disable=not progress, leave=False
    ):
        found, d = run_once(
            algorithm,
            nodes,
            i,
            states=states,
            threshold=threshold,
            seed=seed,
            maxdepth=maxdepth,
            params=params,
        )
        hits += found
        downloads += d
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
    )


def as_dict(result: EmrisResult) -> dict:
    return asdict(result)
