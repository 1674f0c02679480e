"""The herder loop of the lost sheep, written against a small abstract site.

Paper: Goodwin, "A solution to the exact match on rare item searches", section "Lost sheep
description" (algorithm "Lost sheep with a hidden Markov model classifier", steps 1-6).

Contract. A site is anything with ``out_links(page) -> list[(target, label)]``,
``text(page) -> str`` and ``download(page)``; the herder calls ``download`` exactly once per
page whose text it reads (and once for the start page), before ``text``, so the site's count of
``download`` calls is the paper's ``D``. The same herder runs on the in-memory generated graph
(:class:`hiddenweb.bench.lostsheep.graphs.GraphSite`) and, later, behind a Scrapy spider.

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

Readings re-checked in issue 4 (none changed the algorithm; listed so they are explicit):

- A surviving sheep reads its page's whole text ("for each word", steps 3.10-3.10.3 stop only
  at ``Q``), so its ``f`` is label words + page words: a long page that never sends the sheep
  to ``Q`` scores its length. The paper names this bias ("nodes may be of different sizes").
- A pre-filtered sheep's ``f`` is the label words it read (``f = t`` at ``Q``); it stays in
  ``sum(f)`` and in the ``argmax`` (step 5 ranges over all of ``X``).
- ``t`` is per sheep (2F's step size needs each automaton's own count), starting at 0.
- The threshold test is ``f_best / sum(f) >= threshold`` (step 6, cut off in our copy of the
  paper; ``>=`` as the prose "stop when ... reaches"). A round where ``sum(f) = 0`` never stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hiddenweb import defaults
from hiddenweb.lostsheep.text import analyze, query_stems
from hiddenweb.lostsheep.tsetlin import START_READINGS, TsetlinAutomaton, batch_durations

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
    sheep (``start``: ``"B"`` or ``"middle"``, :func:`~.tsetlin.start_state`; default the
    setting ``HIDDENWEB_LOSTSHEEP_START``'s); ``analyzer`` turns text into stems (defaults to
    :func:`~.text.analyze`).
    """

    query: str | Iterable[str]
    states: int = 100
    twofold: bool = True
    threshold: float = 0.75
    maxdepth: int = DEFAULT_MAXDEPTH
    start: str | int | None = defaults.HIDDENWEB_LOSTSHEEP_START
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
        if isinstance(self.start, str) and self.start not in START_READINGS:
            raise ValueError(f"start must be one of {START_READINGS}, got {self.start!r}")

    def query_flags(self, stems: list[str]) -> np.ndarray:
        """Which of ``stems`` are query stems (what the automaton reads, word by word)."""
        q = self.stems
        return np.fromiter((s in q for s in stems), dtype=bool, count=len(stems))

    def release(
        self, site: Site, page: Hashable, cache: dict[Hashable, np.ndarray]
    ) -> list[SheepOutcome]:
        """One round: a sheep per outgoing link of ``page``; downloads survivors into ``cache``.

        ``cache`` maps every downloaded page to its text's query flags. The sheep are run in
        one vectorised pass per stage (:func:`~.tsetlin.batch_durations`, pinned equal to
        :class:`TsetlinAutomaton` word by word): labels first (steps 3.1-3.5), then label and
        page text together for the survivors (3.6-3.10, ``t`` goes on from the label).
        A site may offer ``link_flags(page, stems)`` / ``text_flags(page, stems)``: the same
        flags without building and analysing strings (the generated graph does)."""
        fast_links = getattr(site, "link_flags", None)
        if fast_links is not None:
            targets, labels, lflags = fast_links(page, self.stems)
        else:
            links = site.out_links(page)
            targets = [t for t, _ in links]
            labels = [lab for _, lab in links]
            lflags = [self.query_flags(self.analyzer(lab)) for lab in labels]
        if not targets:
            return []
        quit_l, f_l = self._run(lflags)
        alive = np.flatnonzero(~quit_l).tolist()
        fast_text = getattr(site, "text_flags", None)
        for j in alive:
            target = targets[j]
            if target not in cache:
                site.download(target)
                cache[target] = (
                    fast_text(target, self.stems)
                    if fast_text is not None
                    else self.query_flags(self.analyzer(site.text(target)))
                )
        quit_p, f_p = self._run([np.concatenate((lflags[j], cache[targets[j]])) for j in alive])
        quit_ = quit_l.copy()
        f = f_l.copy()
        quit_[alive] = quit_p
        f[alive] = f_p
        return [
            SheepOutcome(targets[j], labels[j], int(f[j]), bool(quit_[j]), bool(quit_l[j]))
            for j in range(len(targets))
        ]

    def _run(self, texts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """``(quit, f)`` of a fresh sheep per flag array."""
        if not texts:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) for t in texts], out=offsets[1:])
        return batch_durations(
            np.concatenate(texts), offsets, self.states, self.twofold, self.start
        )

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
        cache: dict[Hashable, np.ndarray] = {start_page: np.zeros(0, dtype=bool)}
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
                fast_text = getattr(site, "text_flags", None)
                cache[current] = (
                    fast_text(current, self.stems)
                    if fast_text is not None
                    else self.query_flags(self.analyzer(site.text(current)))
                )
            stood.add(current)
            path.append(current)
        return HerdResult(best_page, "maxdepth", self.maxdepth, len(cache), path, best_f)
