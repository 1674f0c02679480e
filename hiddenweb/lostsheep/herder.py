"""The herder loop of the lost sheep, written against a small abstract site.

Paper: Goodwin, "A solution to the exact match on rare item searches", section "Lost sheep
description" (algorithm "Lost sheep with a hidden Markov model classifier", steps 1-6).

Contract. A site is anything with ``out_links(page) -> list[(target, label)]``,
``text(page) -> str`` and ``download(page)``; the herder calls ``download`` exactly once per
page whose text it reads (and once for the start page), before ``text``, so the site's count of
``download`` calls is the paper's ``D``. The same herder runs on the in-memory generated graph
(:class:`hiddenweb.lostsheep.graphs.GraphSite`) and, later, behind a Scrapy spider.

One round at the herder's page: release one sheep (a :class:`TsetlinAutomaton`) per outgoing
link; each reads the link's label, and a sheep that reaches ``Q`` on the label alone is done and
its page is never downloaded (the pre-filter); the others download their page and read its text,
continuing the same count ``t``. The lost sheep is the one with the largest ``f``. If
``f_best / sum(f) >= threshold`` its page is returned; otherwise the herder moves there and
repeats, at most ``maxdepth`` rounds.

Choices where the paper is vague:

- ``sum(f)`` and the lost sheep run over every sheep released in the round, pre-filtered ones
  included, as in the paper's step 5 (``argmax`` over all ``x_j``). Ties go to a sheep that read
  its page, then to the first link in page order. If the herder moves to a pre-filtered page it
  must download it then (counted); a page returned on the threshold is not downloaded.
- Pages already downloaded are not downloaded again (their text is cached), and the herder never
  moves to a page it has already stood on: it moves to the best sheep whose page is new.
- When no move is possible (no links, or every link leads to a page stood on) or after
  ``maxdepth`` rounds, the herder returns the page of the lost sheep with the largest ``f`` seen
  in the whole walk.
- The query is analysed like the text (stop-words dropped, stemmed) and used as a set of stems.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from hiddenweb.lostsheep.text import analyze, query_stems
from hiddenweb.lostsheep.tsetlin import TsetlinAutomaton

logger = logging.getLogger(__name__)

DEFAULT_MAXDEPTH = 20


class Site(Protocol):
    """What the herder needs from a site."""

    def out_links(self, page: Hashable) -> list[tuple[Hashable, str]]: ...

    def text(self, page: Hashable) -> str: ...

    def download(self, page: Hashable) -> None: ...


@dataclass
class SheepOutcome:
    """One sheep of one round."""

    page: Hashable
    label: str
    f: int
    quit: bool
    prefiltered: bool


@dataclass
class HerdResult:
    """What the herder returns: the page, why it stopped, and the walk."""

    page: Hashable | None
    reason: str  # "threshold", "maxdepth" or "stuck"
    rounds: int
    downloads: int
    path: list[Hashable] = field(default_factory=list)
    f_best: int = 0
    ratio: float = 0.0


@dataclass
class Herder:
    """The lost-sheep herder for one query.

    ``query`` is a string or a list of words; ``states``/``twofold``/``start`` configure every
    sheep; ``analyzer`` turns text into stems (defaults to :func:`~.text.analyze`).
    """

    query: str | Iterable[str]
    states: int = 100
    twofold: bool = True
    threshold: float = 0.75
    maxdepth: int = DEFAULT_MAXDEPTH
    start: int | None = None
    analyzer: Callable[[str], list[str]] = analyze

    def __post_init__(self) -> None:
        self.stems = (
            query_stems(self.query)
            if self.analyzer is analyze
            else frozenset(
                self.analyzer(self.query if isinstance(self.query, str) else " ".join(self.query))
            )
        )
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.maxdepth < 1:
            raise ValueError(f"maxdepth must be > 0, got {self.maxdepth}")

    def release(
        self, site: Site, page: Hashable, cache: dict[Hashable, list[str]]
    ) -> list[SheepOutcome]:
        """One round: a sheep per outgoing link of ``page``; downloads survivors into ``cache``."""
        outcomes = []
        for target, label in site.out_links(page):
            sheep = self.sheep()
            if sheep.read(self.analyzer(label), self.stems):
                outcomes.append(SheepOutcome(target, label, sheep.f, True, True))
                continue
            stems = cache.get(target)
            if stems is None:
                site.download(target)
                stems = cache[target] = self.analyzer(site.text(target))
            sheep.read(stems, self.stems)
            outcomes.append(SheepOutcome(target, label, sheep.f, sheep.quit, False))
        return outcomes

    def sheep(self) -> TsetlinAutomaton:
        """A fresh sheep configured like every sheep of this herder."""
        return TsetlinAutomaton(self.states, self.twofold, self.start)

    @staticmethod
    def decide(
        outcomes: list[SheepOutcome], stood: set[Hashable]
    ) -> tuple[SheepOutcome | None, float, SheepOutcome | None]:
        """Steps 5-6 of one round: ``(lost sheep, f_best / sum f, next page to stand on)``.

        The lost sheep is the largest ``f`` (ties to a sheep that read its page, then link
        order); the move is the best sheep whose page was not stood on (None: stuck)."""
        if not outcomes:
            return None, 0.0, None
        key = lambda o: (o.f, not o.prefiltered)  # noqa: E731
        lost = max(outcomes, key=key)
        total = sum(o.f for o in outcomes)
        moves = [o for o in outcomes if o.page not in stood]
        return lost, (lost.f / total if total else 0.0), max(moves, key=key) if moves else None

    def run(self, site: Site, start_page: Hashable) -> HerdResult:
        """Herd from ``start_page`` until the threshold, a dead end or ``maxdepth``."""
        site.download(start_page)
        cache: dict[Hashable, list[str]] = {start_page: []}
        stood = {start_page}
        path = [start_page]
        best_page: Hashable | None = None
        best_f = -1
        current = start_page
        for depth in range(1, self.maxdepth + 1):
            outcomes = self.release(site, current, cache)
            lost, ratio, move = self.decide(outcomes, stood)
            if move is None or lost is None:
                return HerdResult(best_page, "stuck", depth, len(cache), path, max(best_f, 0))
            if lost.f > best_f:
                best_page, best_f = lost.page, lost.f
            if ratio > 0 and ratio >= self.threshold:
                logger.debug("threshold %.3f reached at depth %d: %r", ratio, depth, lost.page)
                return HerdResult(lost.page, "threshold", depth, len(cache), path, lost.f, ratio)
            current = move.page
            if current not in cache:  # a pre-filtered page: the herder must fetch it to go on
                site.download(current)
                cache[current] = self.analyzer(site.text(current))
            stood.add(current)
            path.append(current)
        return HerdResult(best_page, "maxdepth", self.maxdepth, len(cache), path, best_f)
