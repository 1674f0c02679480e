"""Readable progress for long crawls: pages, form-only (hidden) pages, and their rates.

Logs every ``LOGSTATS_INTERVAL`` seconds (Scrapy's own periodic-stats setting), beside Scrapy's
``LogStats`` line::

    hiddenweb: 1,204 pages (602/min), 311 reached only through forms (155/min), 96 submissions

Reads the spider's stats ``hiddenweb/pages``, ``hiddenweb/pages_form_only`` and
``hiddenweb/forms/submissions``. Off when ``LOGSTATS_INTERVAL`` is 0.
"""

from __future__ import annotations

import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

logger = logging.getLogger(__name__)


class HiddenProgress:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self.task: task.LoopingCall | None = None
        self.last = (0, 0)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HiddenProgress:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured("LOGSTATS_INTERVAL is 0")
        ext = cls(crawler, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self) -> None:
        self.task = task.LoopingCall(self.log)
        self.task.start(self.interval, now=False)

    def log(self) -> None:
        stats = self.crawler.stats
        pages = stats.get_value("hiddenweb/pages", 0)
        hidden = stats.get_value("hiddenweb/pages_form_only", 0)
        per_min = 60.0 / self.interval
        logger.info(
            "hiddenweb: %d pages (%d/min), %d reached only through forms (%d/min), "
            "%d submissions",
            pages, (pages - self.last[0]) * per_min, hidden, (hidden - self.last[1]) * per_min,
            stats.get_value("hiddenweb/forms/submissions", 0),
        )
        self.last = (pages, hidden)

    def spider_closed(self) -> None:
        if self.task and self.task.running:
            self.task.stop()
        self.log()
