"""A watchdog over browser requests: none stays in flight unnoticed.

Every browser request is a :class:`Job` (its request, when it started, the stage it is at and
the page's URL) while the handler works on it. Every ``interval`` seconds the watchdog looks: when
requests are in flight and none has completed for longer than ``stuck_after`` seconds, each job
older than that is *stuck*: the log says which request, for how long, at which stage and on which
page, its task is cancelled (stat ``hiddenweb/browser/stuck_cancelled``) and the handler tries it
once more (then it fails, and the spider falls back to plain HTTP). The handler bounds each
step by itself, so the watchdog acts only when a bound did not hold (a Playwright call that
ignores cancellation, a bug of ours): the last line of defence, not the timeout.

And once the crawl is closing (``closing()``, looked at every :data:`CLOSE_TICK` seconds), every
job in flight is cancelled (stat ``hiddenweb/browser/cancelled_at_close``): Scrapy's engine waits
for every request in progress before it closes, and a page firing its events or waiting out a
navigation's bound held a closing crawl open for up to 24 s (the real-site benchmark's Trac).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

CLOSE_TICK = 0.25  # seconds between looks at whether the crawl is closing


class BrowserStuck(Exception):
    """A browser request that the watchdog cancelled (twice: once retried)."""


@dataclass(eq=False)
class Job:
    url: str
    started: float = field(default_factory=time.monotonic)
    stage: str = "waiting for a page"
    page: Any = None  # the Playwright page, once there is one
    render: Any = None  # what the page's route knows of the request (guard.Render)
    page_url: str | None = None
    task: asyncio.Task[Any] | None = None
    stuck: bool = False
    closed: bool = False  # cancelled because the crawl is closing


class Watchdog:
    def __init__(self, stats: Any, stuck_after: float, interval: float | None = None,
                 closing: Callable[[], bool] | None = None) -> None:
        self.stats = stats
        self.closing = closing
        self.stuck_after = stuck_after
        self.interval = interval if interval is not None else max(0.5, stuck_after / 4)
        self.jobs: set[Job] = set()
        self.last_done = time.monotonic()
        self._loop_task: asyncio.Task[None] | None = None

    def start(self, url: str) -> Job:
        if not self.jobs:  # nothing was in flight: the quiet time starts now
            self.last_done = time.monotonic()
        job = Job(url)
        self.jobs.add(job)
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.ensure_future(self._watch())
        return job

    def done(self, job: Job) -> None:
        self.jobs.discard(job)
        self.last_done = time.monotonic()

    def check(self, now: float | None = None) -> list[Job]:
        """Cancel and return the stuck jobs (called every ``interval`` seconds)."""
        now = time.monotonic() if now is None else now
        if not self.jobs or now - self.last_done <= self.stuck_after:
            return []
        stuck = [j for j in self.jobs if now - j.started > self.stuck_after and not j.stuck]
        for job in stuck:
            job.stuck = True
            self.stats.inc_value("hiddenweb/browser/stuck_cancelled")
            logger.warning("Browser request stuck for %.0f s (nothing completed for %.0f s) at "
                           "%r on page %s: %s; cancelled", now - job.started,
                           now - self.last_done, job.stage, job.page_url, job.url)
            if job.task is not None:
                job.task.cancel()
        return stuck

    def cancel_all(self) -> list[Job]:
        """The crawl is closing: cancel every job in flight and return them."""
        jobs = [j for j in self.jobs if not j.closed and not j.stuck]
        for job in jobs:
            job.closed = True
            self.stats.inc_value("hiddenweb/browser/cancelled_at_close")
            if job.task is not None:
                job.task.cancel()
        if jobs:
            logger.info("The crawl is closing: %d browser requests in flight cancelled",
                        len(jobs))
        return jobs

    async def _watch(self) -> None:
        tick = min(self.interval, CLOSE_TICK)
        waited = 0.0
        while self.jobs:
            await asyncio.sleep(tick)
            if self.closing is not None and self.closing():
                self.cancel_all()
            waited += tick
            if waited >= self.interval:
                waited = 0.0
                self.check()

    def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
