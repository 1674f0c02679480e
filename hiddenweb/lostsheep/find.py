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

Settings: ``lostsheep_states``, ``lostsheep_twofold``, ``lostsheep_maxdepth`` (lab knobs),
``HIDDENWEB_LOSTSHEEP_THRESHOLD``, ``HIDDENWEB_LOSTSHEEP_START``.
Stats: ``hiddenweb/lostsheep/find/downloads``, ``.../prefiltered``, ``.../rounds``,
``.../download_errors``, and ``hiddenweb/downloads`` (every page fetched).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response, TextResponse

from hiddenweb.lostsheep.herder import Herder, SheepOutcome
from hiddenweb.lostsheep.labels import context_for, link_contexts
from hiddenweb.lostsheep.middleware import SheepConfig
from hiddenweb.pagetext import visible_text
from hiddenweb.safety import link_markup

logger = logging.getLogger(__name__)

FIND_META = "hiddenweb_find"


def page_words(response: Response, analyzer: Any) -> list[str]:
    if not isinstance(response, TextResponse):
        return []
    try:
        return analyzer(visible_text(response.selector))
    except (ValueError, AttributeError):  # not markup
        return analyzer(response.text)


class SheepFinder:
    """Runs the herder for ``spider`` (an ``hwdla`` spider with ``query`` and ``find=1``)."""

    def __init__(self, spider: scrapy.Spider, config: SheepConfig, query: str) -> None:
        self.spider = spider
        self.crawler = spider.crawler
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
        if not isinstance(response, TextResponse):
            return []
        try:
            extracted = self.spider.link_extractor.extract_links(response)
        except (ValueError, AttributeError):
            return []
        contexts = link_contexts(response)
        markup = link_markup(response.selector, response.url)
        return [(link.url, f"{link.text} {context_for(contexts, link.url)}".strip())
                for link in extracted if self.spider.in_scope(link.url)
                and self.spider.link_allowed(link.url, link.text, markup)]  # SAFETY: a link

    async def fetch(self, url: str, referer: str) -> Response | None:
        request = scrapy.Request(url, dont_filter=True, headers={"Referer": referer},
                                 meta={"hiddenweb_reached_by": {"kind": "link", "form": None},
                                       "hiddenweb_form_only": False, FIND_META: True})
        self.stats.inc_value("hiddenweb/downloads")
        self.stats.inc_value("hiddenweb/lostsheep/find/downloads")
        try:
            return await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001  (a failed page is a page with no text)
            self.stats.inc_value("hiddenweb/lostsheep/find/download_errors")
            logger.warning("Find mode: download failed: %s (%s)", url, exc,
                           extra={"spider": self.spider})
            return None

    async def herd(self, response: Response) -> AsyncIterator[Any]:
        herder = self.herder
        self.stats.inc_value("hiddenweb/downloads")
        self.stats.inc_value("hiddenweb/lostsheep/find/downloads")
        pages: dict[str, Response | None] = {response.url: response}
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
                words[url] = page_words(got, herder.analyzer) if got is not None else []
            outcomes = []
            for url, label, sheep, quit_ in released:
                if quit_:
                    self.stats.inc_value("hiddenweb/lostsheep/find/prefiltered")
                else:
                    sheep.read(words[url], herder.stems)
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
            if pages.get(move.page) is None and move.page not in pages:
                pages[move.page] = await self.fetch(move.page, current.url)
            if pages[move.page] is None:
                reason = "stuck"
                break
            stood.add(move.page)
            path.append(move.page)
            current = pages[move.page]
        self.stats.set_value("hiddenweb/lostsheep/find/rounds", rounds)
        found = pages.get(best)
        if found is None:
            found = await self.fetch(best, path[-1])
        if found is not None:
            item = self.spider.page_item(found)
            item["lostsheep"] = {
                "score": max(best_f, 0), "ratio": round(lost_ratio, 4), "reason": reason,
                "path": path, "rounds": rounds,
                "downloads": self.stats.get_value("hiddenweb/lostsheep/find/downloads", 0),
            }
            logger.info("Find mode: %s (f=%d, ratio %.3f, %s after %d rounds, %d downloads)",
                        best, max(best_f, 0), lost_ratio, reason, rounds,
                        item["lostsheep"]["downloads"], extra={"spider": self.spider})
            yield item
        raise CloseSpider("lostsheep_found" if reason == "threshold" else f"lostsheep_{reason}")
