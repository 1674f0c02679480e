"""The blind floor: downloads to 90 % of the hidden pages for a crawler that does not know where
the forms are.

``oracle`` knows the truth and goes straight to the form pages, so its downloads to 90 % are a
lower bound no real crawler can reach. This module computes a floor a real crawler can be held
to: the *expected* downloads to 90 % for a crawler that knows everything about the site except
which pages hold the forms.

The argument (the proving ground's placement rule, in
:class:`~hiddenweb.bench.provingground.site.SiteModel`): a collection's main form page is drawn
uniformly from the public pages at link depth ≤ 2 (the ``main_host_pages``), its copies
uniformly from all public pages. That placement is unchanged by any permutation of the
``main_host_pages``, and nothing a crawler sees before reading a page (links, labels, topics)
depends on whether that page holds a form. So every reading order of those pages costs the same
in expectation as a uniformly random one, and a page outside them is less likely to hold a form
(copies only) for the same one download. The floor counts, over random orders of the
``main_host_pages``:

- the home page (1 download);
- the pages read until the collections found so far hold ``ceil(0.9 H)`` hidden pages (a
  collection is found when any of its form pages among them is read; a form copy on a deeper
  page is not counted: reaching it costs more than a shallow page);
- ``ceil(0.9 H)`` downloads, one per hidden page (every submission a hit: no blind misses, no
  pagination or detail page read twice).

``H`` is the benchmark's ``hidden_total`` (hidden pages plain HTTP can reach). The floor is an
expectation over placements, not a bound for one site: a crawler may beat it on a site where the
forms happen to sit on the first pages it reads. What a crawler needs beyond it is its own waste
(blind misses, public pages read after the forms it needed were found, traps); what it needs
below ``bfs`` is bounded by it (on a small site, half of ``bfs`` can be close to the floor).

:func:`order_floor_to_90` splits one run's cost the other way: the same count for the order in
which *that run* read the public pages. ``downloads_to_90 - order_floor_to_90`` is the run's
waste; ``order_floor_to_90 - blind_floor_to_90`` is the luck of its reading order, which no
crawler controls on a site where nothing tells a form page from another before it is read.
"""

from __future__ import annotations

import math
import random
from statistics import fmean

from hiddenweb.bench.provingground.site import SiteModel


def hidden_by_collection(hidden: set[str]) -> dict[int, int]:
    """Hidden truth keys (``c12/…``) counted per collection id."""
    counts: dict[int, int] = {}
    for key in hidden:
        head = key.split("/", 1)[0]
        if head.startswith("c") and head[1:].isdigit():
            cid = int(head[1:])
            counts[cid] = counts.get(cid, 0) + 1
    return counts


def blind_floor_to_90(site: SiteModel, hidden: set[str], trials: int = 2000,
                      seed: int = 0) -> dict[str, float | int]:
    """The floor (see the module docstring) for ``site`` whose plain-HTTP hidden truth keys are
    ``hidden``: ``{"mean", "p10", "p90", "public_reads_mean", "hidden_needed", "trials"}``."""
    need = math.ceil(0.9 * len(hidden))
    sizes = hidden_by_collection(hidden)
    pages = list(site.main_host_pages)
    index = {u: i for i, u in enumerate(pages)}
    # each collection: its hidden count and the indices of its form pages among ``pages``
    cols = [(sizes[c.cid], [index[h] for h in c.hosts if h in index])
            for c in site.collections if sizes.get(c.cid)]
    if need == 0:
        return {"mean": 1, "p10": 1, "p90": 1, "public_reads_mean": 0, "hidden_needed": 0,
                "trials": 0}
    if sum(size for size, hosts in cols if hosts) < need:
        raise ValueError("the collections on main host pages hold fewer than 90 % of the "
                         "hidden pages: the floor's placement rule does not fit this site")
    rng = random.Random(seed)
    reads: list[int] = []
    position = list(range(1, len(pages) + 1))
    for _ in range(trials):
        rng.shuffle(position)  # position[i]: when page i is read (1-based)
        found = sorted((min(position[h] for h in hosts), size) for size, hosts in cols if hosts)
        total = 0
        for when, size in found:
            total += size
            if total >= need:
                reads.append(when)
                break
    reads.sort()
    floor = [1 + r + need for r in reads]
    return {"mean": round(fmean(floor), 1), "p10": floor[len(floor) // 10],
            "p90": floor[(9 * len(floor)) // 10], "public_reads_mean": round(fmean(reads), 1),
            "hidden_needed": need, "trials": trials}


def order_floor_to_90(site: SiteModel, hidden: set[str], public_order: list[int]
                      ) -> dict[str, int] | None:
    """One run's own floor: the downloads to 90 % it would have needed, reading the public
    pages in the order it did (``public_order``: page ids in first-read order, home first),
    had every other download been a new hidden page. That is ``P + ceil(0.9 H)``, with ``P``
    the public pages read until the collections whose form pages (any copy) were among them
    held ``ceil(0.9 H)`` hidden pages. What a run needs beyond it is its waste (blind misses,
    public pages read after the forms it needed, step pages, repeats); what separates it from
    :func:`blind_floor_to_90` is the luck of its reading order. ``{"floor", "public_reads",
    "hidden_needed"}``, or ``None`` when the pages it read never held enough."""
    need = math.ceil(0.9 * len(hidden))
    sizes = hidden_by_collection(hidden)
    host_cols: dict[int, list[int]] = {}
    for c in site.collections:
        if sizes.get(c.cid):
            for h in c.hosts:
                host_cols.setdefault(h, []).append(c.cid)
    if need == 0:
        return {"floor": 0, "public_reads": 0, "hidden_needed": 0}
    found: set[int] = set()
    total = 0
    for reads, u in enumerate(public_order, start=1):
        for cid in host_cols.get(u, ()):
            if cid not in found:
                found.add(cid)
                total += sizes[cid]
        if total >= need:
            return {"floor": reads + need, "public_reads": reads, "hidden_needed": need}
    return None
