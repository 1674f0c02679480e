"""Item pipeline: record every page item as a visit in the visit store (paper 002, §5).

Each item becomes one :class:`hiddenweb.store.Visit` (see :func:`hiddenweb.store.visit_from_item`;
the optional item keys ``cache_control`` and ``expires`` give HTTP freshness). Visits are buffered
and written by one writer path, :meth:`VisitStorePipeline.flush`: every
``store_batch_size`` items, every ``store_flush_interval`` seconds and at
close, each batch in one ``BEGIN IMMEDIATE`` transaction that holds the visit rows and the aggregate
updates together. Visit ids are ``<crawl id>:<sequence>`` with a fresh crawl id per run, so two
crawls can share a store and a batch written twice counts once.

Shared mode (``HIDDENWEB_REDIS_URL``, docs/scaling.md): the N workers of one crawl write one store
(through SQLite's lock, each batch one transaction) and name a visit by the crawl and the page,
``<shared crawl id>:<sha1 of the page key>`` (:func:`hiddenweb.redis_shared.shared_crawl_id`):
the crawl visits a page once, whichever worker and however many times wrote it (a page handed
back after its worker died is emitted again; its second visit is a duplicate, counted in
``hiddenweb/store/duplicates``), so the store's figures are a single process's. The buffer is
also written whenever the scheduler ends leases (:data:`hiddenweb.dla.journal.flush_items_signal`,
:meth:`VisitStorePipeline.write_now`): a worker killed after its requests were done has written
their visits (the others never download those pages again).

Failures fail: a store another process keeps locked is retried without freezing the crawl (each
try waits at most :data:`TRY_WAIT` seconds, tries are spaced by :data:`RETRY_EVERY`, the visits stay
buffered), for at most ``HIDDENWEB_STORE_TIMEOUT`` seconds; past that, or at the first error that
is not a lock (a corrupt file, a missing column, a read-only disk), the crawl stops with one
error line naming the store, finish reason ``store_failed``, stat ``hiddenweb/failed`` (``scrapy
crawl`` then exits 1) and the visits not written counted in ``hiddenweb/store/lost``. A store that
cannot even be opened stops the crawl the same way. At close the last batch waits the whole
timeout for a lock.

Settings: ``HIDDENWEB_STORE_ENABLED``, ``HIDDENWEB_STORE_PATH``, ``store_batch_size``,
``store_flush_interval``, ``HIDDENWEB_STORE_TIMEOUT`` (``docs/settings.md``).
Stats: ``hiddenweb/store/visits``, ``…/pages_new``, ``…/pages_updated``, ``…/duplicates``,
``…/batches``, ``…/errors``, ``…/skipped``, ``…/lost``, ``…/locked_retries``, and in shared mode
``…/shared_crawl`` (the crawl id the workers share).
Items are returned unchanged; the pipeline never drops one.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro

from hiddenweb import defaults
from hiddenweb.config import lab
from hiddenweb.dla.journal import flush_items_signal
from hiddenweb.redis_shared import shared_crawl_id
from hiddenweb.store import (
    StoreError,
    Visit,
    VisitStore,
    resolve_store_path,
    transient,
    visit_from_item,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

TRY_WAIT = 0.05  # seconds one write waits for another process's lock during the crawl
RETRY_EVERY = 1.0  # seconds between two tries while the store is locked


@dataclass(frozen=True, slots=True)
class StoreConfig:
    path: str
    batch_size: int
    flush_interval: float
    timeout: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> StoreConfig:
        config = cls(
            path=settings.get("HIDDENWEB_STORE_PATH", defaults.HIDDENWEB_STORE_PATH),
            batch_size=lab(settings, "store_batch_size"),
            flush_interval=lab(settings, "store_flush_interval"),
            timeout=settings.getfloat("HIDDENWEB_STORE_TIMEOUT", defaults.HIDDENWEB_STORE_TIMEOUT),
        )
        if not config.path:
            raise ValueError("HIDDENWEB_STORE_PATH is empty: give a file name or path")
        if config.batch_size < 1:
            raise ValueError(f"store_batch_size (HIDDENWEB_LAB) must be >= 1, not "
                             f"{config.batch_size}")
        if config.flush_interval < 0 or config.timeout < 0:
            raise ValueError("store_flush_interval (HIDDENWEB_LAB) and HIDDENWEB_STORE_TIMEOUT "
                             "are >= 0")
        return config


class VisitStorePipeline:
    def __init__(self, crawler: Crawler, config: StoreConfig) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.crawl_id = uuid.uuid4().hex
        self.per_page = False  # shared mode: one visit per page of the crawl (module docstring)
        self.store: VisitStore | None = None
        self._buffer: list[Visit] = []
        self._seq = 0
        self._last_flush = time.monotonic()
        self._error_logged = False
        self._timer: Any = None
        self._locked_since: float | None = None  # first failed try of the current lock
        self._retry_at = 0.0
        self.failed: str | None = None  # why the store gave up: the crawl is stopping

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> VisitStorePipeline:
        settings = crawler.settings
        if not settings.getbool("HIDDENWEB_STORE_ENABLED", defaults.HIDDENWEB_STORE_ENABLED):
            raise NotConfigured("visit store disabled (HIDDENWEB_STORE_ENABLED is False)")
        pipeline = cls(crawler, StoreConfig.from_settings(settings))
        crawler.signals.connect(pipeline.write_now, signal=flush_items_signal)
        return pipeline

    def open_spider(self) -> None:
        path = resolve_store_path(self.config.path)
        try:
            self.store = VisitStore(path, timeout=self.config.timeout)
        except StoreError as exc:
            self._fail(str(exc))
            return
        self.store.conn.execute(f"PRAGMA busy_timeout = {int(TRY_WAIT * 1000)}")
        shared = shared_crawl_id(self.crawler)
        if shared is not None:
            self.crawl_id, self.per_page = shared, True
            self.stats.set_value("hiddenweb/store/shared_crawl", shared)
        self._last_flush = time.monotonic()
        if self.config.flush_interval > 0:
            self._timer = create_looping_call(self._flush_if_due)
            self._timer.start(self.config.flush_interval, now=False)
        logger.info("Visit store %s open (crawl id %s)", path, self.crawl_id)

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        if not adapter.get("url"):
            self.stats.inc_value("hiddenweb/store/skipped")
            return item
        self._seq += 1
        if self.failed is not None:
            self.stats.inc_value("hiddenweb/store/lost")
            return item
        visit = visit_from_item(adapter, f"{self.crawl_id}:{self._seq}")
        if self.per_page:
            digest = hashlib.sha1(visit.key.encode()).hexdigest()
            visit = replace(visit, visit_id=f"{self.crawl_id}:{digest}")
        self._buffer.append(visit)
        if len(self._buffer) >= self.config.batch_size and time.monotonic() >= self._retry_at:
            self.flush()
        else:
            self._flush_if_due()
        return item

    def _flush_if_due(self) -> None:
        interval, now = self.config.flush_interval, time.monotonic()
        if interval > 0 and now - self._last_flush >= interval and now >= self._retry_at:
            self.flush()

    def flush(self) -> bool:
        """Write the buffered visits in one transaction; on failure keep them for the next try."""
        now = self._last_flush = time.monotonic()
        if not self._buffer or self.store is None or self.failed is not None:
            return not self._buffer
        try:
            result = self.store.record(self._buffer)
        except sqlite3.Error as exc:
            self.stats.inc_value("hiddenweb/store/errors")
            if not transient(exc):
                self._fail(f"{self.store.path}: {exc}")
                return False
            self.stats.inc_value("hiddenweb/store/locked_retries")
            self._retry_at = now + RETRY_EVERY
            if self._locked_since is None:
                self._locked_since = now
            if not self._error_logged:
                self._error_logged = True
                logger.warning(
                    "Visit store %s is locked by another process: %d visits kept, retried every "
                    "%.0f s for up to HIDDENWEB_STORE_TIMEOUT=%g s (the crawl goes on)",
                    self.store.path, len(self._buffer), RETRY_EVERY, self.config.timeout,
                    extra={"spider": self.crawler.spider},
                )
            if now - self._locked_since > self.config.timeout:
                self._fail(f"{self.store.path}: still locked after {self.config.timeout:g} s "
                           f"(HIDDENWEB_STORE_TIMEOUT)")
            return False
        self._locked_since = None
        self._error_logged = False
        self._buffer.clear()
        self.stats.inc_value("hiddenweb/store/batches")
        self.stats.inc_value("hiddenweb/store/visits", result.written)
        self.stats.inc_value("hiddenweb/store/pages_new", result.new_pages)
        self.stats.inc_value("hiddenweb/store/pages_updated", result.updated_pages)
        if result.duplicates:
            self.stats.inc_value("hiddenweb/store/duplicates", result.duplicates)
        return True

    def write_now(self) -> bool:
        """Write the buffered visits now (:data:`~hiddenweb.dla.journal.flush_items_signal`:
        the scheduler is about to mark their requests done); False while the store is locked
        (tried again no sooner than a retry is due). A store that failed or is closed has
        nothing more to write."""
        if not self._buffer or self.store is None or self.failed is not None:
            return True
        if time.monotonic() < self._retry_at:
            return False
        return self.flush() or self.failed is not None

    def _fail(self, why: str) -> None:
        """Stop the crawl: the store cannot be written (one error line, finish reason
        ``store_failed``, stat ``hiddenweb/failed``; ``scrapy crawl`` exits 1)."""
        self.failed = why
        lost = len(self._buffer)
        self._buffer.clear()
        self.stats.inc_value("hiddenweb/store/lost", lost)
        self.stats.set_value("hiddenweb/failed", "store_failed")
        logger.error(
            "Visit store cannot be written, stopping the crawl: %s (%d visits lost; fix or move "
            "the store, or crawl with -s HIDDENWEB_STORE_ENABLED=0)", why, lost,
            extra={"spider": self.crawler.spider},
        )
        try:
            engine = self.crawler.engine
        except RuntimeError:  # not crawling (a pipeline driven by hand: store_bench, tests)
            engine = None
        if engine is not None:
            from twisted.internet import reactor

            def close() -> None:
                if engine.spider is not None:
                    deferred_from_coro(engine.close_spider_async(reason="store_failed"))

            reactor.callLater(0, close)  # not from inside the engine's own call

    def close_spider(self) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self.store is None:
            return
        if self.failed is None:  # the last batch may wait the whole timeout for a lock
            self.store.conn.execute(f"PRAGMA busy_timeout = {int(self.config.timeout * 1000)}")
            if not self.flush() and self.failed is None:
                self._fail(f"{self.store.path}: still locked at close after "
                           f"{self.config.timeout:g} s (HIDDENWEB_STORE_TIMEOUT)")
        self.store.close()
        self.store = None
