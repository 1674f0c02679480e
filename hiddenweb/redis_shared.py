"""Shared mode: what N crawler processes on one Redis share besides the frontier.

On when ``HIDDENWEB_REDIS_URL`` is set (docs/settings.md, docs/scaling.md); every component here
raises ``NotConfigured`` when it is empty, and the crawl is the single-process one.

* :class:`RedisConfig` — the settings, read once: ``HIDDENWEB_REDIS_URL``, ``HIDDENWEB_REDIS_KEY``
  (the crawl's name in Redis; every key is ``hw:{KEY}:...``, one hash tag, so a crawl's keys live
  on one Redis Cluster slot) and ``HIDDENWEB_REDIS_LEASE`` (seconds a dead worker's requests stay
  leased). ``JOBDIR`` is refused with it: Redis is the crawl's state.
* the request dupefilter on a Redis set: :mod:`hiddenweb.redis_dupefilter` (scrapy-redis's,
  imported only in shared mode: ``scrapy-redis`` and ``redis`` are the ``redis`` extra).
* :class:`SharedSeenContent` — :class:`hiddenweb.pagetext.SeenContent` ("is this page new?") on
  a Redis set: a page one worker read is a repeat for all.
* :class:`SharedShownText` — :class:`hiddenweb.pagetext.ShownText` ("does it show anything
  new?", what the learning rewards) on two Redis sets.
* :class:`FormClaims` — which worker explores a form (hash ``hw:{KEY}:forms``, form signature
  -> worker): the first to meet it; the others leave it alone (two explorers of one form send
  two different orders of its values), unless its worker died (no ``alive`` key): then the
  next worker to meet it takes it over, with an explorer of its own (what the dead one had
  tried is in the shared dupefilter).
* :func:`worker_id` — this process's name in the crawl (host, pid, a random suffix).
* :func:`shared_crawl_id` — the crawl's id in the visit store (``hw:{KEY}:crawl``), the same for
  all its workers.

Stats: ``hiddenweb/redis/dupefilter/filtered``, ``hiddenweb/redis/forms/{claimed,
taken_over,left_to_others}``.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from hiddenweb import defaults
from hiddenweb.pagetext import SeenContent, ShownText

if TYPE_CHECKING:
    from typing import Self

    import redis
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RedisConfig:
    """The shared mode's settings (module docstring)."""

    url: str
    key: str
    lease: float

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """The settings of ``crawler``; ``NotConfigured`` when ``HIDDENWEB_REDIS_URL`` is empty."""
        settings = crawler.settings
        url = settings.get("HIDDENWEB_REDIS_URL") or ""
        if not url:
            raise NotConfigured("HIDDENWEB_REDIS_URL is not set: one process, no Redis")
        if settings.get("JOBDIR"):
            raise ValueError("HIDDENWEB_REDIS_URL and JOBDIR are set: in shared mode the crawl's "
                             "state is in Redis; unset JOBDIR")
        lease = settings.getfloat("HIDDENWEB_REDIS_LEASE", defaults.HIDDENWEB_REDIS_LEASE)
        if lease <= 0:
            raise ValueError(f"HIDDENWEB_REDIS_LEASE must be > 0 seconds, got {lease}")
        key = settings.get("HIDDENWEB_REDIS_KEY") or getattr(crawler.spidercls, "name", None) \
            or "crawl"
        return cls(url=url, key=key, lease=lease)

    @property
    def prefix(self) -> str:
        """Every key of the crawl starts so: ``{KEY}`` is a Redis Cluster hash tag."""
        return f"hw:{{{self.key}}}:"

    def connect(self) -> redis.Redis:
        import redis

        return redis.Redis.from_url(self.url)


def connection(crawler: Crawler) -> tuple[RedisConfig, redis.Redis]:
    """The crawler's shared-mode config and one Redis client per crawler (kept on the crawler's
    settings-independent attribute so the scheduler, dupefilter and spider share a pool)."""
    config = RedisConfig.from_crawler(crawler)
    client = getattr(crawler, "_hiddenweb_redis", None)
    if client is None:
        client = config.connect()
        crawler._hiddenweb_redis = client  # type: ignore[attr-defined]
    return config, client


class SharedSeenContent(SeenContent):
    """Content fingerprints in the Redis set ``hw:{KEY}:seen``; same verdicts as
    :class:`SeenContent`, for all workers of one crawl."""

    def __init__(self, client: redis.Redis, key: str) -> None:
        super().__init__()
        self.client, self.key = client, key

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config, client = connection(crawler)
        return cls(client, config.prefix + "seen")

    def is_new(self, fp: str | None) -> bool:
        if fp is None:
            return True
        return bool(self.client.sadd(self.key, fp))


def worker_id(crawler: Crawler) -> str:
    """This process's name in the shared crawl, one per crawler."""
    worker = getattr(crawler, "_hiddenweb_worker", None)
    if worker is None:
        worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        crawler._hiddenweb_worker = worker  # type: ignore[attr-defined]
    return worker


_CLAIM = """
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner == ARGV[2] then return 1 end
local got = 2
if owner then
  if redis.call('EXISTS', KEYS[2] .. owner) == 1 then return 0 end
  got = 3
elseif redis.call('SADD', KEYS[5], ARGV[1]) == 0 then
  got = 3  -- explored by a worker gone since (its claim ended with it)
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[3] .. ARGV[2], ARGV[1])
if ARGV[3] ~= '' and redis.call('HSETNX', KEYS[4], ARGV[1], ARGV[3]) == 1 then
  return got + 10  -- the page is this claim's to keep
end
return got
"""


#: :meth:`FormClaims.claim`'s answers
LEFT_TO_OTHERS, OWN, CLAIMED, TAKEN_OVER = 0, 1, 2, 3


class FormClaims:
    """Which worker explores each form (module docstring). A claim also keeps the page the
    form was met on (``hw:{KEY}:formpage``: the group it was served from, the key of the
    stored response and the pickled request; ``hw:{KEY}:formbody:<worker>:<fingerprint>``:
    the response, as :mod:`hiddenweb.dla.relay` stores one): when the worker dies, the reaper
    queues that page again, marked handed back, and the live worker that serves it reads the
    stored response (the request carries ``hiddenweb_relay``) instead of downloading the page
    again; it reads the form and takes it over (:mod:`hiddenweb.dla.redis_frontier`). A worker
    that retires deletes its stored pages."""

    def __init__(self, crawler: Crawler, client: redis.Redis, prefix: str) -> None:
        self.crawler, self.client, self.prefix = crawler, client, prefix
        self.worker = worker_id(crawler)
        self._claim = client.register_script(_CLAIM)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config, client = connection(crawler)
        return cls(crawler, client, config.prefix)

    def claim(self, signature: str, page: Response | None = None) -> int:
        """Whether this worker explores the form ``signature`` (it may: it is the first, or
        the form's worker died): :data:`LEFT_TO_OTHERS` (0, false), :data:`OWN` (already
        this worker's), :data:`CLAIMED` (first claim) or :data:`TAKEN_OVER` (a worker that
        died explored it: what it sent is in the shared dupefilter and was read there, not
        here; ``hw:{KEY}:explored`` keeps every signature ever claimed). ``page``: the
        response of the page it is on, sent to Redis only when this claim keeps the page (not
        for a form another worker explores, met on page after page)."""
        entry, body_key = self._page(page)
        got = int(self._claim(keys=[self.prefix + "forms", self.prefix + "alive:",
                                    self.prefix + "claims:", self.prefix + "formpage",
                                    self.prefix + "explored"],
                              args=[signature, self.worker, entry]))
        if got > 10:
            got -= 10
            self._keep(page, body_key)
        stat = {LEFT_TO_OTHERS: "left_to_others", CLAIMED: "claimed",
                TAKEN_OVER: "taken_over"}.get(got)
        if stat:
            self.crawler.stats.inc_value(f"hiddenweb/redis/forms/{stat}")
        return got

    def _page(self, page: Response | None) -> tuple[bytes | str, str]:
        """The ``formpage`` entry of ``page`` (group, body key, request) and its body key;
        empty strings when it cannot be kept."""
        from hiddenweb.dla.relay import RELAY_META, RELAY_READ_META

        request = page.request if page is not None else None
        group = request.meta.get("hiddenweb_dla_group") if request is not None else None
        if not group:
            return "", ""
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request).hex()
        body_key = f"{self.prefix}formbody:{self.worker}:{fingerprint}"
        meta = {k: v for k, v in request.meta.items()
                if k not in (RELAY_META, RELAY_READ_META)}
        try:
            payload = pickle.dumps(request.replace(meta={**meta, RELAY_META: body_key})
                                   .to_dict(spider=self.crawler.spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError):
            return "", ""
        return b"\t".join([group.encode(), body_key.encode(), payload]), body_key

    def _keep(self, page: Response | None, body_key: str) -> None:
        """Store ``page``'s response at ``body_key`` (once per page: several forms share it).
        A worker killed between the claim and this has its page downloaded again for the
        takeover (:mod:`hiddenweb.dla.relay`: a missing stored response is downloaded)."""
        from hiddenweb.dla.relay import stored_response

        if page is not None and body_key:
            self.client.set(body_key, stored_response(page), nx=True)


def form_claims(crawler: Crawler) -> FormClaims | None:
    """The crawl's form claims in shared mode, else None (every form is this process's)."""
    try:
        return FormClaims.from_crawler(crawler)
    except NotConfigured:
        return None


class SharedShownText(ShownText):
    """:class:`hiddenweb.pagetext.ShownText` ("does this page show anything new?", what the
    learning rewards) on two Redis sets, ``hw:{KEY}:shown:blocks`` and ``hw:{KEY}:shown:sets``:
    a set of texts one worker showed is no longer novel on another."""

    def __init__(self, enabled: bool, client: redis.Redis, prefix: str) -> None:
        super().__init__(enabled)
        self.client, self.prefix = client, prefix

    def _known(self, keys: list[bytes]) -> list[bool]:
        return [bool(seen) for seen in self.client.smismember(self.prefix + "shown:blocks", keys)]

    def _add_blocks(self, keys: list[bytes]) -> None:
        self.client.sadd(self.prefix + "shown:blocks", *keys)

    def _add_set(self, whole: bytes) -> bool:
        return bool(self.client.sadd(self.prefix + "shown:sets", whole))


def shown_text(crawler: Crawler, enabled: bool) -> ShownText:
    """The crawl's "does it show anything new?": shared in Redis in shared mode."""
    try:
        config, client = connection(crawler)
    except NotConfigured:
        return ShownText(enabled)
    return SharedShownText(enabled, client, config.prefix)


def seen_content(crawler: Crawler) -> SeenContent:
    """The crawl's "is this page new?": shared in Redis in shared mode, else in memory."""
    try:
        return SharedSeenContent.from_crawler(crawler)
    except NotConfigured:
        return SeenContent()


def shared_crawl_id(crawler: Crawler) -> str | None:
    """The id of the shared crawl (``hw:{KEY}:crawl``, a random hex set by its first worker; it
    lives as long as the crawl's other keys), or None outside shared mode. The visit store names
    a visit by it and the page, so a page of the crawl is one visit whichever worker, and however
    many times, wrote it (:mod:`hiddenweb.pipelines.visitstore`)."""
    try:
        config, client = connection(crawler)
    except NotConfigured:
        return None
    key = config.prefix + "crawl"
    client.set(key, uuid.uuid4().hex, nx=True)
    return client.get(key).decode()


def is_shared(settings: Any) -> bool:
    """Whether shared mode is on (``HIDDENWEB_REDIS_URL`` set)."""
    return bool(settings.get("HIDDENWEB_REDIS_URL"))
