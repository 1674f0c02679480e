"""Lost-sheep pre-filter: a spider middleware that judges every outgoing link on its label.

    scrapy crawl hwdla -a seed=http://127.0.0.1:8000/ -a query="contact, phone, address"

Goodwin, "A solution to the exact match on rare item searches", steps 3.1-3.5: one sheep (a
Tsetlin automaton, :mod:`hiddenweb.lostsheep.tsetlin`) per link reads the link's label; a sheep
that reaches ``Q`` on the label alone means the page is not worth downloading. Off
(``NotConfigured``) when the spider has no ``query``.

For each link request the spider yields (``hiddenweb_action["kind"] == "link"``) the sheep reads
the anchor text (``hiddenweb_action["label"]``) and then ``hiddenweb_label_context`` (title,
image alt text and the words right around the link, set by the spider when it has a query).

- A sheep that quits: the request is dropped (``HIDDENWEB_LOSTSHEEP_ON_QUIT = "drop"``; it never
  reaches the scheduler) or demoted (``"demote"``: priority lowered by :data:`DEMOTE_PRIORITY`,
  fetched after everything else).
- A sheep that survives: ``request.meta["hiddenweb_sheep_f"]`` = its ``f`` (words read while
  surviving) and the priority is raised by ``f``. Priority only matters to priority-queue
  schedulers; the DLA scheduler orders by its automata and ignores it.

Form submissions, seed and recrawl requests and items pass untouched.

Settings: ``lostsheep_states``, ``lostsheep_twofold``, ``HIDDENWEB_LOSTSHEEP_START`` (where a
sheep starts: ``"B"`` or ``"middle"``, :mod:`~hiddenweb.lostsheep.tsetlin`),
``HIDDENWEB_LOSTSHEEP_ON_QUIT`` (``HIDDENWEB_LOSTSHEEP_THRESHOLD`` and
``lostsheep_maxdepth`` are read by find mode, :mod:`hiddenweb.lostsheep.find`).
Stats: ``hiddenweb/lostsheep/links``, ``.../kept``, ``.../dropped``, ``.../demoted``.
Meta read: ``hiddenweb_action``, ``hiddenweb_label_context``; written: ``hiddenweb_sheep_f``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from hiddenweb import defaults
from hiddenweb.config import lab
from hiddenweb.lostsheep.text import analyze, query_stems
from hiddenweb.lostsheep.tsetlin import START_READINGS, TsetlinAutomaton

logger = logging.getLogger(__name__)

DEMOTE_PRIORITY = 1000
ON_QUIT = ("drop", "demote")
SHEEP_F_META = "hiddenweb_sheep_f"
CONTEXT_META = "hiddenweb_label_context"


@dataclass(frozen=True)
class SheepConfig:
    """The lost-sheep settings (``lostsheep_states`` ...), parsed and checked once."""

    states: int
    twofold: bool
    threshold: float
    maxdepth: int
    on_quit: str
    start: str = defaults.HIDDENWEB_LOSTSHEEP_START

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SheepConfig:
        cfg = cls(
            states=lab(s, "lostsheep_states"),
            twofold=lab(s, "lostsheep_twofold"),
            threshold=s.getfloat(
                "HIDDENWEB_LOSTSHEEP_THRESHOLD", defaults.HIDDENWEB_LOSTSHEEP_THRESHOLD
            ),
            maxdepth=lab(s, "lostsheep_maxdepth"),
            on_quit=str(
                s.get("HIDDENWEB_LOSTSHEEP_ON_QUIT", defaults.HIDDENWEB_LOSTSHEEP_ON_QUIT)
            ).lower(),
            start=str(s.get("HIDDENWEB_LOSTSHEEP_START", defaults.HIDDENWEB_LOSTSHEEP_START)),
        )
        if cfg.states < 2:
            raise ValueError(f"HIDDENWEB_LAB lostsheep_states must be >= 2, got {cfg.states}")
        if not 0.0 <= cfg.threshold <= 1.0:
            raise ValueError(
                f"HIDDENWEB_LOSTSHEEP_THRESHOLD must be in [0, 1], got {cfg.threshold}"
            )
        if cfg.maxdepth < 1:
            raise ValueError(f"HIDDENWEB_LAB lostsheep_maxdepth must be >= 1, got {cfg.maxdepth}")
        if cfg.on_quit not in ON_QUIT:
            raise ValueError(
                f"HIDDENWEB_LOSTSHEEP_ON_QUIT must be one of {ON_QUIT}, got {cfg.on_quit!r}"
            )
        if cfg.start not in START_READINGS:
            raise ValueError(
                f"HIDDENWEB_LOSTSHEEP_START must be one of {START_READINGS}, got {cfg.start!r}"
            )
        return cfg

    def sheep(self) -> TsetlinAutomaton:
        return TsetlinAutomaton(self.states, self.twofold, self.start)


def label_words(request: Request) -> list[str]:
    """The stems a link's sheep reads: anchor text, then title / alt / surrounding words."""
    action = request.meta.get("hiddenweb_action") or {}
    text = f"{action.get('label') or ''} {request.meta.get(CONTEXT_META) or ''}"
    return analyze(text)


class LostSheepMiddleware(BaseSpiderMiddleware):
    """Drop or demote link requests whose sheep quits on the label; boost the others."""

    def __init__(self, crawler: Crawler, config: SheepConfig, query: frozenset[str]) -> None:
        super().__init__(crawler)
        self.config = config
        self.query = query
        self._logged_drop = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LostSheepMiddleware:
        query = getattr(crawler.spider, "query", None)
        if not query:
            raise NotConfigured("lost-sheep pre-filter: the spider has no query (-a query=...)")
        stems = query_stems(str(query))
        if not stems:
            raise NotConfigured(f"lost-sheep pre-filter: query {query!r} has no content words")
        return cls(crawler, SheepConfig.from_settings(crawler.settings), stems)

    def get_processed_request(self, request: Request, response: Response | None) -> Any:
        action = request.meta.get("hiddenweb_action")
        if response is None or not action or action.get("kind") != "link":
            return request
        self.crawler.stats.inc_value("hiddenweb/lostsheep/links")
        sheep = self.config.sheep()
        if not sheep.read(label_words(request), self.query):
            self.crawler.stats.inc_value("hiddenweb/lostsheep/kept")
            request.meta[SHEEP_F_META] = sheep.f
            request.priority += sheep.f
            return request
        if self.config.on_quit == "demote":
            self.crawler.stats.inc_value("hiddenweb/lostsheep/demoted")
            request.priority -= DEMOTE_PRIORITY
            return request
        self.crawler.stats.inc_value("hiddenweb/lostsheep/dropped")
        if not self._logged_drop:
            self._logged_drop = True
            logger.info(
                "Lost sheep: dropping %s (label %r quits the automaton; further drops are only "
                "counted in hiddenweb/lostsheep/dropped)",
                request.url,
                action.get("label"),
                extra={"spider": self.crawler.spider},
            )
        return None
