"""The handler's retries and the watchdog, without a browser: a request stuck beyond every bound
is logged with where it is, cancelled and tried once more; a request whose page or browser died,
or that got no page in time, is tried once more; a timeout on its page is not; once the crawl
is closing, the requests in flight are cancelled and ignored."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import pytest_twisted
from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro

from hiddenweb.browser.handler import BrowserHandler, BrowserTimeout
from hiddenweb.browser.watchdog import BrowserStuck, Watchdog


class Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] += count


def run(coro):
    """The coroutine as an asyncio task on the test session's reactor (pytest --reactor=asyncio),
    as Scrapy runs a download handler's."""
    return deferred_from_coro(coro)


def fails(deferred, error):
    """A Deferred that fires with ``error`` (raised) when ``deferred`` fails with it."""
    def check(failure):
        failure.trap(error)
        return failure.value

    def passed(result):
        raise AssertionError(f"no {error.__name__}: {result!r}")

    return deferred.addCallbacks(passed, check)


def handler_with(attempt) -> tuple[BrowserHandler, Stats]:
    stats = Stats()
    handler = BrowserHandler.__new__(BrowserHandler)  # no crawler, no Playwright
    handler.stats = stats
    handler.download_timeout = 10.0
    handler.watchdog = Watchdog(stats, stuck_after=0.2, interval=0.05)
    handler._attempt = attempt

    async def settled() -> None:
        return None

    handler._browser_settled = settled
    return handler, stats


def request() -> Request:
    return Request("http://127.0.0.1:1/page", meta={"playwright": True})


@pytest_twisted.inlineCallbacks
def test_a_stuck_request_is_logged_cancelled_and_tried_once_more(caplog):
    calls = []

    async def attempt(req, job, bound):
        calls.append(job)
        job.stage, job.page_url = "page actions", "http://127.0.0.1:1/form"
        if len(calls) == 1:
            await asyncio.Event().wait()  # never set: stuck
        return "response"

    handler, stats = handler_with(attempt)
    caplog.set_level(logging.WARNING, logger="hiddenweb.browser.watchdog")
    assert (yield run(handler.download_request(request()))) == "response"
    assert len(calls) == 2 and stats.values["hiddenweb/browser/stuck_cancelled"] == 1
    assert "stuck" in caplog.text and "'page actions'" in caplog.text
    assert "http://127.0.0.1:1/form" in caplog.text and "http://127.0.0.1:1/page" in caplog.text
    assert not handler.watchdog.jobs


@pytest_twisted.inlineCallbacks
def test_stuck_twice_fails():
    async def attempt(req, job, bound):
        await asyncio.Event().wait()

    handler, stats = handler_with(attempt)
    yield fails(run(handler.download_request(request())), BrowserStuck)
    assert stats.values["hiddenweb/browser/stuck_cancelled"] == 2


@pytest_twisted.inlineCallbacks
def test_a_dead_page_is_retried_once_a_timeout_is_not():
    calls = []

    async def crashed_once(req, job, bound):
        calls.append(1)
        if len(calls) == 1:
            raise PlaywrightError("Page.content: Target crashed")
        return "response"

    handler, stats = handler_with(crashed_once)
    assert (yield run(handler.download_request(request()))) == "response"
    assert stats.values["hiddenweb/browser/retries"] == 1

    async def times_out(req, job, bound):
        calls.append(2)
        raise BrowserTimeout("no answer")

    handler, stats = handler_with(times_out)
    calls.clear()
    yield fails(run(handler.download_request(request())), BrowserTimeout)
    assert calls == [2] and not stats.values["hiddenweb/browser/retries"]

    async def no_page(req, job, bound):
        calls.append(4)
        raise BrowserTimeout("no page within the bound", opening=True)

    handler, stats = handler_with(no_page)
    calls.clear()
    yield fails(run(handler.download_request(request())), BrowserTimeout)
    assert calls == [4, 4]

    async def crashes(req, job, bound):
        calls.append(3)
        raise PlaywrightError("Target page, context or browser has been closed")

    handler, stats = handler_with(crashes)
    calls.clear()
    yield fails(run(handler.download_request(request())), PlaywrightError)
    assert calls == [3, 3]


@pytest_twisted.inlineCallbacks
def test_requests_in_flight_are_cancelled_once_the_crawl_is_closing():
    """A page that would take its whole bound (events firing, a navigation that never ends)
    does not hold a closing crawl open: it is cancelled at the next look, ignored, not retried."""
    calls = []
    closing = []

    async def slow(req, job, bound):
        calls.append(job)
        await asyncio.sleep(30)
        return "response"

    handler, stats = handler_with(slow)
    handler.watchdog = Watchdog(stats, stuck_after=60, closing=lambda: bool(closing))
    asyncio.get_event_loop().call_later(0.3, closing.append, True)
    started = asyncio.get_event_loop().time()
    yield fails(run(handler.download_request(request())), IgnoreRequest)
    assert asyncio.get_event_loop().time() - started < 5
    assert len(calls) == 1 and stats.values["hiddenweb/browser/cancelled_at_close"] == 1
    assert not handler.watchdog.jobs

    async def closed_under_it(req, job, bound):  # its page's clean-up raises on the cancel
        calls.append(job)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise PlaywrightError("Target page, context or browser has been closed") from None
        return "response"

    calls.clear()
    closing.clear()
    handler, stats = handler_with(closed_under_it)
    handler.watchdog = Watchdog(stats, stuck_after=60, closing=lambda: bool(closing))
    asyncio.get_event_loop().call_later(0.3, closing.append, True)
    yield fails(run(handler.download_request(request())), IgnoreRequest)
    assert len(calls) == 1 and stats.values["hiddenweb/browser/cancelled_at_close"] == 1
