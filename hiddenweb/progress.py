"""Readable progress for long crawls, in the units used everywhere (the final summary, the
stats, the report, the benchmarks):

* *downloads* — every response the crawl received, plain HTTP and browser (``hiddenweb/downloads``);
* *pages* — responses with content not seen before (``hiddenweb/pages``);
* *hidden pages* — pages reached only through forms (``hiddenweb/pages_form_only``), with the
  estimate of those not yet found (``hiddenweb/estimate/hidden_left_low`` .. ``_high``,
  :mod:`hiddenweb.estimate`) and, when it allows one, the time left at the current rate;
* *form submissions* (``hiddenweb/forms/submissions``).

Logs every ``LOGSTATS_INTERVAL`` seconds (Scrapy's own periodic-stats setting), beside Scrapy's
``LogStats`` line::

    hiddenweb: 1,204 downloads (602/min), 911 pages, 311 hidden pages (155/min; Chao1 est. left
    4-30, ~1 min), 96 form submissions

Off when ``LOGSTATS_INTERVAL`` is 0.
"""

from __future__ import annotations

import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector
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
        logger.info("hiddenweb: %s", self.line())

    def line(self) -> str:
        stats = self.crawler.stats
        downloads = stats.get_value("hiddenweb/downloads", 0)
        hidden = stats.get_value("hiddenweb/pages_form_only", 0)
        per_min = 60.0 / self.interval
        hidden_rate = (hidden - self.last[1]) * per_min
        text = (f"{downloads:,} downloads ({(downloads - self.last[0]) * per_min:,.0f}/min), "
                f"{stats.get_value('hiddenweb/pages', 0):,} pages, "
                f"{hidden:,} hidden pages ({hidden_rate:,.0f}/min{left(stats, hidden_rate)}), "
                f"{stats.get_value('hiddenweb/forms/submissions', 0):,} form submissions")
        self.last = (downloads, hidden)
        return text

    def spider_closed(self) -> None:
        if self.task and self.task.running:
            self.task.stop()
        self.log()


def left(stats: StatsCollector, per_min: float) -> str:
    """``; est. left LOW-HIGH`` (and ``, ~N min`` at ``per_min``) when the crawl estimated
    what is left (:class:`hiddenweb.estimate.HiddenMass`); empty before."""
    low = stats.get_value("hiddenweb/estimate/hidden_left_low")
    high = stats.get_value("hiddenweb/estimate/hidden_left_high")
    if low is None or high is None:
        return ""
    text = f"; Chao1 est. left {low:,}-{high:,}"
    mid = stats.get_value("hiddenweb/estimate/hidden_left", high)
    if per_min > 0 and mid > 0:
        text += f", ~{max(1, round(mid / per_min)):,} min"
    return text
