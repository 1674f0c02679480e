"""A rerender's body, fetched over plain HTTP, given to Chromium instead of a second download.

Meta keys: ``hiddenweb_body`` (bytes), ``hiddenweb_body_encoding``, ``hiddenweb_body_headers``.
The handler's route (:mod:`hiddenweb.browser.guard`) answers the request's own navigation with
the body; :func:`writable` says when a pooled page may render it without navigating at all.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy import Request

SERVE_FETCHED_BODY = "hiddenweb.browser.serve_fetched_body"


def writable(page: Any, request: Request) -> bool:
    """A rerender (its body in meta, no page actions) of a URL on the page's own origin."""
    meta = request.meta
    if meta.get("hiddenweb_body") is None or meta.get("playwright_page_methods") \
            or request.method != "GET":
        return False
    here, there = urlsplit(page.url), urlsplit(request.url)
    return (here.scheme, here.netloc) == (there.scheme, there.netloc)


async def serve_fetched_body(page: Any, request: Request) -> None:
    """``playwright_page_init_callback`` of a rerender, for scrapy-playwright's own handler: the
    navigation to ``request.url`` is answered (``route.fulfill``, once) with
    ``meta["hiddenweb_body"]``. :class:`~hiddenweb.browser.handler.BrowserHandler` does the same
    in its route (and skips this callback), under the crawl's scope."""
    body = request.meta.get("hiddenweb_body")
    if body is None:
        return
    url = request.url
    headers = request.meta.get("hiddenweb_body_headers") or {"Content-Type": "text/html"}

    async def fulfil(route: Any, pw_request: Any) -> None:
        if pw_request.is_navigation_request() and pw_request.method == "GET":
            await route.fulfill(status=200, headers=headers, body=body)
        else:
            await route.fallback()

    await page.route(lambda u: u == url, fulfil, times=1)
