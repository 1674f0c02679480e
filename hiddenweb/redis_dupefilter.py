"""Shared mode's request dupefilter: fingerprints in the Redis set ``hw:{KEY}:dupefilter``.

scrapy-redis's ``RFPDupeFilter`` with Scrapy's own request fingerprints
(``REQUEST_FINGERPRINTER_CLASS``, as one process uses), never cleared at close (the other
workers of the crawl still read it). Set by :class:`hiddenweb.Addon` as ``DUPEFILTER_CLASS`` when
``HIDDENWEB_REDIS_URL`` is set (``NotConfigured`` without it); the shared scheduler adds a
request's fingerprint in the same script that queues it
(:mod:`hiddenweb.dla.redis_frontier`). Needs the ``redis`` extra (``scrapy-redis``, ``redis``).
Stats: ``hiddenweb/redis/dupefilter/filtered``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_redis.dupefilter import RFPDupeFilter

from hiddenweb.redis_shared import connection

if TYPE_CHECKING:
    from typing import Self

    import redis
    from scrapy import Request
    from scrapy.crawler import Crawler


class RedisDupeFilter(RFPDupeFilter):
    """Request fingerprints in the Redis set ``hw:{KEY}:dupefilter`` (scrapy-redis)."""

    def __init__(self, server: redis.Redis, key: str, crawler: Crawler,
                 debug: bool = False) -> None:
        super().__init__(server, key, debug)
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config, client = connection(crawler)
        return cls(client, config.prefix + "dupefilter", crawler,
                   debug=crawler.settings.getbool("DUPEFILTER_DEBUG"))

    def request_fingerprint(self, request: Request) -> str:
        """Scrapy's fingerprint (``REQUEST_FINGERPRINTER_CLASS``), as one process uses."""
        return self.crawler.request_fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        seen = super().request_seen(request)
        if seen:
            self.crawler.stats.inc_value("hiddenweb/redis/dupefilter/filtered")
        return seen

    def close(self, reason: str = "") -> None:
        """Keep the fingerprints: the other workers of the crawl still read them."""
