r"""The DLA scheduler's queues: a FIFO :class:`Bucket` per kind (or per page action without
transfer), :class:`Group`\s of buckets competing as one heap entry, and, with a ``JOBDIR``, a
disk queue per bucket (:class:`DiskQueues`: ``hiddenweb_dla.queue/<sha1 of the bucket key, 16
hex>/``, a ``scrapy.squeues.PickleFifoDiskQueue``; an unpicklable request falls back to the
bucket's memory deque, lost at close, as with Scrapy's ``Scheduler``)."""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.squeues import PickleFifoDiskQueue
from scrapy.utils.misc import build_from_crawler

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

QUEUE_DIR = "hiddenweb_dla.queue"


class Bucket:
    """FIFO requests of one bucket: a disk queue (JOBDIR) and a memory deque (fallback)."""

    __slots__ = ("key", "group", "page", "action", "seq", "version", "dq", "mq", "url")

    def __init__(self, key: str, group: str, page: str, action: str, seq: int) -> None:
        self.key, self.group, self.page, self.action, self.seq = key, group, page, action, seq
        self.version = 0
        self.dq: Any = None
        self.mq: deque[Request] | None = None
        self.url: str | None = None  # the URL of its first request (serve_first)

    @property
    def dir(self) -> str:
        return hashlib.sha1(self.key.encode("utf-8")).hexdigest()[:16]

    def __len__(self) -> int:
        return (len(self.dq) if self.dq is not None else 0) + (len(self.mq) if self.mq else 0)


class Group:
    """Buckets competing as one heap entry; ``heap`` orders them (best first)."""

    __slots__ = ("key", "seq", "version", "heap", "buckets", "epoch", "breadth")

    def __init__(self, key: str, seq: int, breadth: int) -> None:
        self.key, self.seq, self.version, self.epoch = key, seq, 0, 0
        self.breadth = breadth  # its first tie-break (GroupHeap._breadth): set once, as its key
        self.heap: list[tuple[float, int, int, str]] = []
        self.buckets: dict[str, Bucket] = {}


class DiskQueues:
    """The disk queues of a job directory's buckets."""

    def __init__(self, crawler: Crawler, jobdir: str, logunser: bool) -> None:
        self.crawler, self.jobdir, self.logunser = crawler, jobdir, logunser

    def open(self, bucket: Bucket) -> Any:
        path = Path(self.jobdir, QUEUE_DIR, bucket.dir)
        return build_from_crawler(PickleFifoDiskQueue, self.crawler, str(path))

    def push(self, bucket: Bucket, request: Request, spider: Spider | None) -> bool:
        """Push to the bucket's disk queue; False when the request cannot be pickled."""
        if bucket.dq is None:
            bucket.dq = self.open(bucket)
        try:
            bucket.dq.push(request)
        except ValueError as e:  # unpicklable request: memory fallback, as Scrapy does
            if self.logunser:
                logger.warning("Unable to serialize request: %(request)s - reason: %(reason)s"
                               " - no more unserializable requests will be logged",
                               {"request": request, "reason": e}, extra={"spider": spider})
                self.logunser = False
            self.crawler.stats.inc_value("hiddenweb/dla/unserializable")
            return False
        return True

    def drop(self, bucket: Bucket) -> None:
        bucket.dq.close()
        shutil.rmtree(Path(self.jobdir, QUEUE_DIR, bucket.dir), ignore_errors=True)
