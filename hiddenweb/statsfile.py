"""Write the crawl's final stats as JSON (for benchmarks, Scrapyd jobs and dashboards).

Enabled by ``HIDDENWEB_STATS_FILE`` (a path; off when empty). At ``spider_closed`` the whole
``crawler.stats`` dict, with the close reason, is written to it (datetimes as ISO strings).
"""

from __future__ import annotations

import json
from pathlib import Path

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from hiddenweb import defaults


class StatsFile:
    def __init__(self, crawler: Crawler, path: Path):
        self.crawler = crawler
        self.path = path

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFile:
        path = crawler.settings.get("HIDDENWEB_STATS_FILE", defaults.HIDDENWEB_STATS_FILE)
        if not path:
            raise NotConfigured("HIDDENWEB_STATS_FILE is not set")
        ext = cls(crawler, Path(path))
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_closed(self, spider: Spider, reason: str) -> None:
        stats = {**self.crawler.stats.get_stats(), "finish_reason": reason}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(stats, default=str, indent=1, sort_keys=True))
