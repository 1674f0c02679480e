"""Shared mode: a form's answers are downloaded by any worker and read by the one that explores it.

A form's explorer (the values it tried, its wave, its endpoint's blind budget) lives in the memory
of the worker that claimed the form (:class:`hiddenweb.redis_shared.FormClaims`). Its submissions
and the answers its endpoint waits for carry that worker's id (meta ``hiddenweb_owner``, set by
:class:`~hiddenweb.dla.redis_scheduler.RedisDLAScheduler`) and wait in the shared frontier like
any request, so any worker may download them: the download (the network, the politeness cap) is
shared. The worker that downloads another's request hands its raw response to the owner: this
downloader middleware (enabled by the add-on in shared mode, ``NotConfigured`` otherwise; order
950, next to the download handler, so that the owner's own middlewares — redirects, retries,
cookies, decompression — see the response as if it had downloaded it) stores the response in
Redis (``hw:{KEY}:relay:<n>``, expiring after a day), queues a copy of the
request in the owner's lane (meta ``hiddenweb_relay``: the stored response's key; served before
any other group: its download is done) and drops the request here (``IgnoreRequest``). On the
owner the copy is answered from Redis without the network, and the spider reads it there: the
explorer gets its feedback, the endpoint its answers. The stored response is deleted when the
copy's lease ends (:meth:`~hiddenweb.dla.redis_scheduler.RedisDLAScheduler.sweep`), not when it
is read: an owner killed after reading it and before its lease ended has the copy handed back,
and the worker that serves it then reads the same stored response instead of downloading the
answer again (a duplicate download). A redirect or retry of a relayed copy (it carries the meta
too) is downloaded (meta ``hiddenweb_relay_read``: the stored response was served once here).

A download that fails is not handed over (retried here as usual; the owner's explorer counts the
answer as missing until it is idle). An owner that died has nobody to hand to: its requests are
read where they are downloaded (their explorer is gone; the form is taken over by the next worker
that meets it). Stats: ``hiddenweb/redis/relay/{sent,received,missing}``.
"""

from __future__ import annotations

import logging
import pickle
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.misc import load_object

from hiddenweb.redis_shared import connection, worker_id

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

OWNER_META = "hiddenweb_owner"
RELAY_META = "hiddenweb_relay"
RELAY_READ_META = "hiddenweb_relay_read"
#: seconds a stored response waits for its owner
RELAY_TTL = 86_400


class AnswerRelay:
    """Downloader middleware: hand a form's answers to the worker exploring the form."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config, self.client = connection(crawler)  # NotConfigured without the URL
        self.worker = worker_id(crawler)
        self.prefix = self.config.prefix

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request, spider: Spider | None = None) -> Response | None:
        key = request.meta.get(RELAY_META)
        if not key:
            return None
        if request.meta.get(RELAY_READ_META) == key:  # a redirect or retry of the copy
            del request.meta[RELAY_META]
            return None
        data = self.client.get(key)  # deleted when the copy's lease ends (module docstring)
        if data is None:  # expired or its lease ended: download it after all
            self.crawler.stats.inc_value("hiddenweb/redis/relay/missing")
            del request.meta[RELAY_META]
            return None
        self.crawler.stats.inc_value("hiddenweb/redis/relay/received")
        request.meta[RELAY_READ_META] = key
        stored = pickle.loads(data)
        cls = load_object(stored.pop("cls"))
        return cls(request=request, **stored)

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Response:
        owner = request.meta.get(OWNER_META)
        if not owner or owner == self.worker or request.meta.get(RELAY_META) \
                or not self.client.exists(self.prefix + "alive:" + owner):
            return response
        scheduler = getattr(getattr(self.crawler.engine, "_slot", None), "scheduler", None)
        relay = getattr(scheduler, "relay", None)
        if relay is None:
            return response
        key = f"{self.prefix}relay:{self.client.incr(self.prefix + 'nextrelay')}"
        self.client.set(key, stored_response(response), ex=RELAY_TTL)
        relay(request, owner, key)
        self.crawler.stats.inc_value("hiddenweb/redis/relay/sent")
        raise IgnoreRequest(f"answer handed to {owner}, which explores its form")


def stored_response(response: Response) -> bytes:
    """``response`` as :meth:`AnswerRelay.process_request` reads it back from Redis."""
    return pickle.dumps({"cls": f"{type(response).__module__}.{type(response).__qualname__}",
                         "url": response.url, "status": response.status,
                         "headers": dict(response.headers), "body": response.body,
                         "flags": list(response.flags), "protocol": response.protocol},
                        protocol=4)
