"""Baselines of the EMRIS experiment, run directly on a :class:`~.graphs.SiteGraph`.

Paper: Goodwin, "A solution to the exact match on rare item searches", sections "Related work"
and "Implementation details" (RW, OPTIMAL, A*, FOCUSED, HMM / HMM2F, SIM, DEG, SIMDEG).

Contract: every function takes ``(graph, qmask, ctx)`` where ``qmask`` marks the query's
vocabulary ids and ``ctx`` is a :class:`Ctx` (target, threshold, maxdepth, rng, automaton
settings) and returns ``(page, downloads)``; ``downloads`` counts distinct pages fetched,
the start page included (the runner derives the paper's D from it: minus the start page; the
random walk's steps, :func:`random_walk_steps`). Similarity is the cosine between the query's binary
vector and the page's term frequencies (query words present on the page weighted by count).

Choices where the paper is vague:

- RW: from the start page follow a uniform random link, ``ceil(0.2 N)`` steps; a dead end
  restarts at the start page; returns the last page (it cannot recognise the target).
- SIM / DEG / SIMDEG: download every neighbour of the current page, score it (cosine, out-degree,
  their product); stop and return the best neighbour when ``best / sum >= threshold``, else move
  to the best neighbour not stood on yet, at most ``maxdepth`` rounds; at a dead end or at
  ``maxdepth`` return the most query-similar page downloaded (DEG: the last best neighbour).
- A*: best-first search on ``g + h`` with ``g`` the depth and ``h = 1 - cosine`` (the target is
  not an input [2]); expanding a page downloads its children; stop with the threshold rule on the
  children's cosines, or after ``maxdepth * 10`` expansions; then return the most similar page.
- FOCUSED (Aggarwal et al. [22]): downloads the start page's children first, then the frontier
  page with the most *relevant* downloaded in-linking pages (relevant = shares a query word),
  ties to the earliest discovered; "satisfied" when the most similar page has stayed the same
  for ``ceil(sqrt(N))`` downloads (the paper's ``P(C) = 1/N`` gives no usable rule here).
- HMM / HMM2F: download every page and run the automaton on each page's text (no labels);
  return the largest ``f`` (ties to the lowest page id). The threshold does not apply.
- OPTIMAL: breadth-first shortest path from the start to the target; D = pages on the path.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from hiddenweb.bench.lostsheep.graphs import SiteGraph
from hiddenweb.lostsheep.tsetlin import batch_durations

logger = logging.getLogger(__name__)


@dataclass
class Ctx:
    """Per-run inputs a baseline may use."""

    target: int
    threshold: float
    maxdepth: int
    rng: np.random.Generator
    states: int = 100
    twofold: bool = False
    start_state: int | None = None
    _sim: np.ndarray | None = None

    def sim(self, graph: SiteGraph, qmask: np.ndarray) -> np.ndarray:
        if self._sim is None:
            counts = graph.query_counts(qmask).astype(float)
            norms = graph.tf_norms() * math.sqrt(max(1, int(qmask.sum())))
            self._sim = np.divide(counts, norms, out=np.zeros_like(counts), where=norms > 0)
        return self._sim


def optimal(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    parent = {0: -1}
    queue = deque([0])
    while queue:
        page = queue.popleft()
        if page == ctx.target:
            break
        for child in graph.children(page).tolist():
            if child not in parent:
                parent[child] = page
                queue.append(child)
    if ctx.target not in parent:
        return 0, 1
    length, page = 1, ctx.target
    while parent[page] != -1:
        page = parent[page]
        length += 1
    return ctx.target, length


def random_walk_steps(n: int) -> int:
    """The random walk's length: 20 % of the population, ``ceil(0.2 N)`` (paper, "Random Walk";
    its D, 20 / 200 / 2000, is this count of steps)."""
    return math.ceil(0.2 * n)


def random_walk(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    page, seen = 0, {0}
    for _ in range(random_walk_steps(graph.n)):
        kids = graph.children(page)
        page = int(kids[ctx.rng.integers(kids.size)]) if kids.size else 0
        seen.add(page)
    return page, len(seen)


def _greedy(graph: SiteGraph, ctx: Ctx, score: np.ndarray, sim: np.ndarray) -> tuple[int, int]:
    seen, stood, current = {0}, {0}, 0
    last_best = 0
    for _ in range(ctx.maxdepth):
        kids = graph.children(current)
        if kids.size == 0:
            break
        seen.update(kids.tolist())
        vals = score[kids]
        best = int(np.argmax(vals))
        last_best = int(kids[best])
        total = float(vals.sum())
        if total > 0 and vals[best] / total >= ctx.threshold:
            return last_best, len(seen)
        order = np.argsort(-vals, kind="stable")
        nxt = next((int(kids[i]) for i in order if int(kids[i]) not in stood), None)
        if nxt is None:
            break
        current = nxt
        stood.add(current)
    pages = np.fromiter(seen, dtype=np.int64)
    if float(sim[pages].max()) > 0:
        return int(pages[np.argmax(sim[pages])]), len(seen)
    return last_best, len(seen)


def sim_search(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    sim = ctx.sim(graph, qmask)
    return _greedy(graph, ctx, sim, sim)


def deg_search(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    deg = graph.out_degree().astype(float)
    return _greedy(graph, ctx, deg, np.zeros(graph.n))


def simdeg_search(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    sim = ctx.sim(graph, qmask)
    return _greedy(graph, ctx, sim * graph.out_degree(), sim)


def astar(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    sim = ctx.sim(graph, qmask)
    seen = {0}
    heap: list[tuple[float, int, int]] = [(1.0 - sim[0], 0, 0)]
    expanded: set[int] = set()
    for _ in range(ctx.maxdepth * 10):
        if not heap:
            break
        _, depth, page = heapq.heappop(heap)
        if page in expanded:
            continue
        expanded.add(page)
        kids = graph.children(page)
        if kids.size == 0:
            continue
        seen.update(kids.tolist())
        vals = sim[kids]
        total = float(vals.sum())
        best = int(np.argmax(vals))
        if total > 0 and vals[best] / total >= ctx.threshold:
            return int(kids[best]), len(seen)
        for kid in kids.tolist():
            if kid not in expanded:
                heapq.heappush(heap, (depth + 1 + 1.0 - sim[kid], depth + 1, kid))
    pages = np.fromiter(seen, dtype=np.int64)
    return int(pages[np.argmax(sim[pages])]), len(seen)


def focused(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    sim = ctx.sim(graph, qmask)
    relevant = graph.query_counts(qmask) > 0
    patience = math.ceil(math.sqrt(graph.n))
    downloaded = {0}
    votes: dict[int, int] = {}
    discovered: dict[int, int] = {}
    heap: list[tuple[int, int, int]] = []

    def discover(page: int) -> None:
        for kid in graph.children(page).tolist():
            if kid in downloaded:
                continue
            if kid not in discovered:
                discovered[kid] = len(discovered)
            votes[kid] = votes.get(kid, 0) + int(relevant[page])
            heapq.heappush(heap, (-votes[kid], discovered[kid], kid))

    best, stale = 0, 0
    discover(0)
    first = [int(k) for k in graph.children(0)]
    queue = deque(first)
    while (queue or heap) and stale < patience:
        if queue:
            page = queue.popleft()
        else:
            neg, _, page = heapq.heappop(heap)
            if page in downloaded or -neg != votes.get(page, 0):
                continue
        if page in downloaded:
            continue
        downloaded.add(page)
        discover(page)
        if sim[page] > sim[best]:
            best, stale = page, 0
        else:
            stale += 1
    return best, len(downloaded)


def hmm(graph: SiteGraph, qmask: np.ndarray, ctx: Ctx) -> tuple[int, int]:
    _, f = batch_durations(
        qmask[graph.words], graph.word_off, ctx.states, ctx.twofold, ctx.start_state
    )
    return int(np.argmax(f)), graph.n


BASELINES = {
    "optimal": optimal,
    "random": random_walk,
    "sim": sim_search,
    "deg": deg_search,
    "simdeg": simdeg_search,
    "astar": astar,
    "focused": focused,
    "hmm": hmm,
    "hmm2f": hmm,
}
