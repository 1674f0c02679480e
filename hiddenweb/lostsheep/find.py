"""Find mode: the lost-sheep herder driving a real crawl, ended when the target is found.

    scrapy crawl hwdla -a seed=http://127.0.0.1:8000/ -a query="contact, phone, address" -a find=1

The herder's decisions are :class:`hiddenweb.lostsheep.herder.Herder`'s (one sheep per link,
label pre-filter, lost sheep, threshold, move, ``maxdepth``); this adapter gives it pages over
HTTP. The seed request is the only request scheduled; its ``async`` callback
:meth:`SheepFinder.herd` fetches the pages of the sheep that survive their labels with
``engine.download_async``
(downloader middlewares apply: robots.txt, the trap guard), all of one round concurrently, reads
their visible text, and finally yields one :class:`~hiddenweb.items.PageItem` for the page found,
with ``lostsheep = {"score", "ratio", "reason", "path", "rounds", "downloads"}``, then closes
the spider (reason ``lostsheep_found``, or ``lostsheep_<reason>`` when the threshold was never
reached and the best page seen is returned).

Strategies (``HIDDENWEB_FIND_STRATEGY``, the paper's section "Related work" / "Implementation
details" for the baselines, as in :mod:`hiddenweb.bench.lostsheep.baselines`):

- ``ls2f`` (default): the herder above (``lostsheep_twofold`` true: LS2F).
- ``sim``: download every child of the page stood on, score each by the cosine between the
  query's binary vector and the page's term frequencies; return the best child when
  ``best / sum >= threshold``, else move to the best child not stood on, at most ``maxdepth``
  rounds; at a dead end or ``maxdepth`` return the most query-similar page downloaded.
- ``bfs``: the same scores and stopping rule, but the pages are expanded in breadth-first order
  (a plain crawl's order) instead of greedily, at most ``maxdepth`` expansions.

``lostsheep["d"]`` is the paper's D: the pages downloaded to decide, the start page excluded (a
page returned without having been read, fetched only to yield its item, is not counted either);
``lostsheep["downloads"]`` counts every fetch, the start page and that last one included.

Settings: ``lostsheep_states``, ``lostsheep_twofold``, ``lostsheep_maxdepth`` (lab knobs),
``HIDDENWEB_LOSTSHEEP_THRESHOLD``, ``HIDDENWEB_LOSTSHEEP_START``, ``HIDDENWEB_FIND_STRATEGY``,
``HIDDENWEB_FIND_TEXT`` (what every strategy reads of a page, :func:`page_words`).
Stats: ``hiddenweb/lostsheep/find/downloads``, ``.../d``, ``.../prefiltered``, ``.../rounds``,
``.../download_errors``, and ``hiddenweb/downloads`` (every page fetched).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter, deque
from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response, TextResponse

from hiddenweb import defaults
from hiddenweb.lostsheep.herder import Herder, SheepOutcome
from hiddenweb.lostsheep.labels import context_for, link_contexts
from hiddenweb.lostsheep.middleware import SheepConfig
from hiddenweb.pagetext import content_text, visible_text
from hiddenweb.safety import link_markup

logger = logging.getLogger(__name__)

FIND_META = "hiddenweb_find"
FIND_STRATEGIES = ("ls2f", "sim", "bfs")
FIND_TEXTS = ("visible", "content")


def page_words(response: Response | None, analyzer: Any, text: str = "visible") -> list[str]:
    """The stems a strategy reads of a page: its visible text (``text="visible"``), or its own
    content without navigation, links, headings, labels or buttons (``"content"``,
    :func:`hiddenweb.pagetext.content_text`); the whole text when it is not markup."""
    if not isinstance(response, TextResponse):
        return []
    if text == "content":
        own = content_text(response)
        if own is not None:
            return analyzer(own)
    try:
        return analyzer(visible_text(response.selector))
    except (ValueError, AttributeError):  # not markup
        return analyzer(response.text)


def cosine(words: list[str], stems: frozenset[str]) -> float:
    """Cosine between the query's binary vector and the term frequencies of ``words``
    (the SIM baseline's similarity, :mod:`hiddenweb.bench.lostsheep.baselines`)."""
    if not words or not stems:
        return 0.0
    tf = Counter(words)
    hits = sum(tf[s] for s in stems)
    if not hits:
        return 0.0
    return hits / (math.sqrt(sum(c * c for c in tf.values())) * math.sqrt(len(stems)))


def find_links(spider: scrapy.Spider, response: Response) -> list[tuple[str, str]]:
    """``(url, label text)`` of the in-scope links of a page the safety policy lets ``spider``
    follow: anchor text then context (:func:`~hiddenweb.lostsheep.labels.link_contexts`)."""
    if not isinstance(response, TextResponse):
        return []
    try:
        extracted = spider.link_extractor.extract_links(response)
    except (ValueError, AttributeError):
        return []
    contexts = link_contexts(response)
    markup = link_markup(response.selector, response.url)
    return [(link.url, f"{link.text} {context_for(contexts, link.url)}".strip())
            for link in extracted if spider.in_scope(link.url)
            and spider.link_allowed(link.url, link.text, markup)]  # SAFETY: a link


class SheepFinder:
    """Runs the herder (or a baseline, ``strategy``) for ``spider`` (an ``hwdla`` spider with
    ``query`` and ``find=1``)."""

    def __init__(self, spider: scrapy.Spider, config: SheepConfig, query: str,
                 strategy: str = defaults.HIDDENWEB_FIND_STRATEGY,
                 text: str = defaults.HIDDENWEB_FIND_TEXT) -> None:
        self.spider = spider
        self.crawler = spider.crawler
        if strategy not in FIND_STRATEGIES:
            raise ValueError(f"HIDDENWEB_FIND_STRATEGY must be one of {FIND_STRATEGIES}, "
                             f"got {strategy!r}")
        self.strategy = strategy
        if text not in FIND_TEXTS:
            raise ValueError(f"HIDDENWEB_FIND_TEXT must be one of {FIND_TEXTS}, got {text!r}")
        self.text = text
        self.herder = Herder(
            query,
            states=config.states,
            twofold=config.twofold,
            threshold=config.threshold,
            maxdepth=config.maxdepth,
            start=config.start,
        )
        if not self.herder.stems:
            raise ValueError(f"hwdla find mode: query {query!r} has no content words")
        self.searching = True  # fetches made to decide (the paper's D) vs to yield the item

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    def start_request(self, seed: str) -> scrapy.Request:
        meta = {"hiddenweb_reached_by": {"kind": "seed", "form": None},
                "hiddenweb_form_only": False, FIND_META: True}
        return scrapy.Request(seed, callback=self.herd, errback=self.spider.on_error,
                              meta=meta, dont_filter=True)

    def links(self, response: Response) -> list[tuple[str, str]]:
        """``(url, label text)`` of the in-scope links of a page: anchor text then context."""
        return find_links(self.spider, response)

    async def fetch(self, url: str, referer: str) -> Response | None:
        request = scrapy.Request(url, dont_filter=True, headers={"Referer": referer},
                                 meta={"hiddenweb_reached_by": {"kind": "link", "form": None},
                                       "hiddenweb_form_only": False, FIND_META: True})
        self.stats.inc_value("hiddenweb/downloads")
        self.stats.inc_value("hiddenweb/lostsheep/find/downloads")
        if self.searching:
            self.stats.inc_value("hiddenweb/lostsheep/find/d")
        try:
            return await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001  (a failed page is a page with no text)
            self.stats.inc_value("hiddenweb/lostsheep/find/download_errors")
            logger.warning("Find mode: download failed: %s (%s)", url, exc,
                           extra={"spider": self.spider})
            return None

    async def herd(self, response: Response) -> AsyncIterator[Any]:
        """The seed's callback: run the strategy from the start page, yield the page found."""
        self.stats.inc_value("hiddenweb/downloads")
        self.stats.inc_value("hiddenweb/lostsheep/find/downloads")
        self.stats.set_value("hiddenweb/lostsheep/find/d", 0)
        run = {"ls2f": self._ls2f, "sim": self._sim, "bfs": self._bfs}[self.strategy]
        pages: dict[str, Response | None] = {response.url: response}
        best, score, ratio, reason, path, rounds = await run(response, pages)
        self.stats.set_value("hiddenweb/lostsheep/find/rounds", rounds)
        self.searching = False
        found = pages.get(best)
        if found is None:
            found = await self.fetch(best, path[-1])
        if found is not None:
            item = self.spider.page_item(found)
            item["lostsheep"] = {
                "score": score, "ratio": round(ratio, 4), "reason": reason,
                "path": path, "rounds": rounds, "strategy": self.strategy,
                "d": self.stats.get_value("hiddenweb/lostsheep/find/d", 0),
                "downloads": self.stats.get_value("hiddenweb/lostsheep/find/downloads", 0),
            }
            logger.info("Find mode (%s): %s (score %s, ratio %.3f, %s after %d rounds, D %d, "
                        "%d downloads)", self.strategy, best, score, ratio, reason, rounds,
                        item["lostsheep"]["d"], item["lostsheep"]["downloads"],
                        extra={"spider": self.spider})
            yield item
        raise CloseSpider("lostsheep_found" if reason == "threshold" else f"lostsheep_{reason}")

    async def _ls2f(self, response: Response, pages: dict[str, Response | None]
                    ) -> tuple[str, Any, float, str, list[str], int]:
        """The herder's walk (steps 1-6 of the paper's algorithm)."""
        herder = self.herder
        words: dict[str, list[str]] = {response.url: []}
        stood, path = {response.url}, [response.url]
        current, best, best_f, reason = response, response.url, -1, "maxdepth"
        lost_ratio, rounds = 0.0, 0
        for rounds in range(1, herder.maxdepth + 1):  # noqa: B007
            links = self.links(current)
            released = []
            for url, label in links:
                sheep = herder.sheep()
                released.append((url, label, sheep, sheep.read(herder.analyzer(label),
                                                               herder.stems)))
            todo = sorted({u for u, _, _, quit_ in released if not quit_ and u not in pages})
            for url, got in zip(todo, await asyncio.gather(
                    *(self.fetch(u, current.url) for u in todo)), strict=True):
                pages[url] = got
            for url in todo:
                got = pages[url]
                words[url] = page_words(got, herder.analyzer, self.text)
            outcomes = []
            for url, label, sheep, quit_ in released:
                if quit_:
                    self.stats.inc_value("hiddenweb/lostsheep/find/prefiltered")
                else:
                    sheep.read(words.get(url, []), herder.stems)
                outcomes.append(SheepOutcome(url, label, sheep.f, sheep.quit, quit_))
            lost, ratio, move = herder.decide(outcomes, stood)
            if lost is None or move is None:
                reason = "stuck"
                break
            if lost.f > best_f:
                best, best_f, lost_ratio = lost.page, lost.f, ratio
            if ratio > 0 and ratio >= herder.threshold:
                best, best_f, lost_ratio, reason = lost.page, lost.f, ratio, "threshold"
                break
            if move.page not in pages:
                pages[move.page] = await self.fetch(move.page, current.url)
            if pages[move.page] is None:
                reason = "stuck"
                break
            stood.add(move.page)
            path.append(move.page)
            current = pages[move.page]
        return best, max(best_f, 0), lost_ratio, reason, path, rounds

    async def _scored(self, current: Response, pages: dict[str, Response | None],
                      scores: dict[str, float]) -> list[str]:
        """Download the children of ``current`` not downloaded yet and score them (cosine);
        return the children, in page order, without repeats."""
        kids = list(dict.fromkeys(u for u, _ in self.links(current)))
        todo = [u for u in kids if u not in pages]
        for url, got in zip(todo, await asyncio.gather(
                *(self.fetch(u, current.url) for u in todo)), strict=True):
            pages[url] = got
            scores[url] = cosine(page_words(got, self.herder.analyzer, self.text),
                                 self.herder.stems)
        return kids

    def _threshold(self, kids: list[str], scores: dict[str, float]) -> tuple[str | None, float]:
        """The best child and its share of the children's similarity (0 when all are 0)."""
        if not kids:
            return None, 0.0
        vals = [scores.get(u, 0.0) for u in kids]
        top = max(range(len(kids)), key=lambda i: (vals[i], -i))
        total = sum(vals)
        return kids[top], (vals[top] / total if total > 0 else 0.0)

    @staticmethod
    def _most_similar(scores: dict[str, float], fallback: str) -> tuple[str, float]:
        best = max(scores, key=lambda u: scores[u], default=fallback)
        return (best, scores[best]) if best in scores and scores[best] > 0 else (fallback, 0.0)

    async def _sim(self, response: Response, pages: dict[str, Response | None]
                   ) -> tuple[str, Any, float, str, list[str], int]:
        """SIM: greedy, to the most query-similar child (paper, "Related work")."""
        herder = self.herder
        scores = {response.url: cosine(page_words(response, herder.analyzer, self.text),
                                       herder.stems)}
        stood, path, current = {response.url}, [response.url], response
        last_best, reason, rounds = response.url, "maxdepth", 0
        for rounds in range(1, herder.maxdepth + 1):  # noqa: B007
            kids = await self._scored(current, pages, scores)
            top, ratio = self._threshold(kids, scores)
            if top is None:
                reason = "stuck"
                break
            last_best = top
            if ratio > 0 and ratio >= herder.threshold:
                return top, round(scores[top], 4), ratio, "threshold", path, rounds
            order = sorted(range(len(kids)), key=lambda i: -scores.get(kids[i], 0.0))
            nxt = next((kids[i] for i in order
                        if kids[i] not in stood and pages.get(kids[i]) is not None), None)
            if nxt is None:
                reason = "stuck"
                break
            stood.add(nxt)
            path.append(nxt)
            current = pages[nxt]
        best, sim = self._most_similar(scores, last_best)
        return best, round(sim, 4), 0.0, reason, path, rounds

    async def _bfs(self, response: Response, pages: dict[str, Response | None]
                   ) -> tuple[str, Any, float, str, list[str], int]:
        """BFS: SIM's scores and stopping rule, pages expanded in breadth-first order."""
        herder = self.herder
        scores = {response.url: cosine(page_words(response, herder.analyzer, self.text),
                                       herder.stems)}
        queue, queued = deque([response.url]), {response.url}
        path, rounds, last_best = [], 0, response.url
        while queue and rounds < herder.maxdepth:
            url = queue.popleft()
            current = pages.get(url)
            if current is None:
                continue
            rounds += 1
            path.append(url)
            kids = await self._scored(current, pages, scores)
            top, ratio = self._threshold(kids, scores)
            if top is not None:
                last_best = top
                if ratio > 0 and ratio >= herder.threshold:
                    return top, round(scores[top], 4), ratio, "threshold", path, rounds
            for kid in kids:
                if kid not in queued:
                    queued.add(kid)
                    queue.append(kid)
        best, sim = self._most_similar(scores, last_best)
        return best, round(sim, 4), 0.0, "maxdepth" if queue else "stuck", path, rounds
