"""The browser handler's pool of pages and its watch on Chromium itself.

Mixed into :class:`~hiddenweb.browser.handler.BrowserHandler`. Contract:

* a page is reused for at most ``browser_page_reuse`` renders (a lab knob,
  docs/design-notes.md), and only after a render that went well (:meth:`PagePool._release`);
  any other page is closed within ``CLOSE_TIMEOUT``, failing that its whole context
  (``hiddenweb/browser/pages_closed``, ``…/close_timeouts``);
* a page's document is unloaded (``about:blank``, within ``CLOSE_TIMEOUT``) before the page
  waits idle for reuse and before it is closed, while the guard still aborts its requests
  (:meth:`PagePool._blank`): the document's scripts keep running otherwise (a syncer retrying
  a save the guard refused), and a request one of them made while scrapy-playwright swapped
  the page's routes for its next navigation, or while the page closed, went out unguarded
  (a TiddlyWiki crawl sent its syncer's PUT as it closed; ``hiddenweb/browser/pages_blanked``).
  A page whose document did not unload (a timeout on a loaded machine) is closed, not pooled
  (``…/blank_failed``). With the lab knob ``browser_same_document`` a page waits idle with its
  document (a later render may write into it) and is unloaded before a navigation reuses it
  instead (one that does not unload is closed and a new page opened). With the lab knob
  ``browser_route_hop`` a page whose render ended well on a hash-routed document waits idle
  with it (:func:`~hiddenweb.browser.hop.keeps_document`), and :meth:`PagePool._take` gives it
  to a later route of that document (:mod:`hiddenweb.browser.hop`); a navigation that takes
  a page still on a document unloads it first;
* every Chromium a page lives in is noted once: the first is ``hiddenweb/browser/launched``,
  every later one a relaunch (``…/relaunches``, logged); a disconnect is logged with the
  browser requests in flight (the handler tries each again on the relaunched one), and
  :meth:`PagePool._browser_settled` waits, within ``CLOSE_TIMEOUT``, until scrapy-playwright
  has let a dead browser go.

The handler provides ``hw``, ``stats``, ``watchdog``, ``_idle``, ``_uses``, ``_browsers`` and
``_closing``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from scrapy import Request

from hiddenweb.browser.config import CLOSE_TIMEOUT
from hiddenweb.browser.hop import hoppable

logger = logging.getLogger(__name__)


class PagePool:
    """Pages kept for reuse and the Chromium they live in (see the module docstring)."""

    def _take(self, request: Request | None = None) -> Any:
        """An idle page: with ``browser_route_hop``, one showing ``request``'s document if
        any (:func:`~hiddenweb.browser.hop.hoppable`), else an unloaded one if any, else the
        last released."""
        self._idle = [page for page in self._idle if not page.is_closed()]
        if not self._idle:
            return None
        if self.hw.route_hop and request is not None:
            for fits in (lambda url: hoppable(url, request), lambda url: url == "about:blank"):
                for i in reversed(range(len(self._idle))):
                    if fits(self._idle[i].url):
                        return self._idle.pop(i)
        return self._idle.pop()

    async def _release(self, page: Any, ok: bool, keep: bool = False) -> None:
        """Pool ``page`` after a render (``ok``: it went well), with its document when
        ``keep`` (a route may hop there), else unloaded; or close it."""
        uses = self._uses.get(page, 0) + 1
        if ok and not page.is_closed() and uses < self.hw.page_reuse:
            # (with same_document it may be written into, document and all: unloaded later)
            if self.hw.same_document or keep or await self._blank(page):
                self._uses[page] = uses
                self._idle.append(page)
                return
            # its document did not unload: its scripts would run on while scrapy-playwright
            # swaps the page's routes for the next navigation, unguarded
            self.stats.inc_value("hiddenweb/browser/blank_failed")
            self._uses.pop(page, None)
            await self._close_page(page, blank=False)  # (not tried twice)
            return
        self._uses.pop(page, None)
        await self._close_page(page)

    async def _close_page(self, page: Any, blank: bool = True) -> None:
        """Close ``page`` within CLOSE_TIMEOUT, its document unloaded first (``blank``);
        failing that, its whole context."""
        if page.is_closed():
            return
        if blank:
            await self._blank(page)
        try:
            await asyncio.wait_for(page.close(), CLOSE_TIMEOUT)
            self.stats.inc_value("hiddenweb/browser/pages_closed")
            return
        except PlaywrightError:
            return  # already gone with its browser
        except TimeoutError:
            self.stats.inc_value("hiddenweb/browser/close_timeouts")
            logger.warning("A page did not close within %.0f s (%s): closing its context",
                           CLOSE_TIMEOUT, page.url)
        try:
            await asyncio.wait_for(page.context.close(), CLOSE_TIMEOUT)
        except (TimeoutError, PlaywrightError):
            logger.warning("The browser context did not close either: left to the browser")

    async def _blank(self, page: Any) -> bool:
        """Unload ``page``'s document (``about:blank``) while the guard aborts what it asks
        (no render is on the page): no script of it runs on after this (the module
        docstring). Bounded by ``CLOSE_TIMEOUT``; whether the document is gone (a page whose
        document stays is closed, never pooled: ``hiddenweb/browser/blank_failed``)."""
        if page.is_closed() or page.url == "about:blank":
            return True
        try:
            await asyncio.wait_for(page.goto("about:blank"), CLOSE_TIMEOUT)
        except (TimeoutError, PlaywrightError) as exc:
            logger.debug("A page's document did not unload (%s): %s", page.url,
                         str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
            return False
        self.stats.inc_value("hiddenweb/browser/pages_blanked")
        return page.is_closed() or page.url == "about:blank"

    # -- the browser ------------------------------------------------------------------------
    def _note_browser(self, page: Any) -> None:
        browser = page.context.browser
        if browser is None or browser in self._browsers:
            return
        self._browsers.add(browser)
        if self.stats.get_value("hiddenweb/browser/launched"):
            self.stats.inc_value("hiddenweb/browser/relaunches")
            logger.warning("Chromium relaunched")
        else:
            self.stats.set_value("hiddenweb/browser/launched", 1)
        browser.on("disconnected", self._disconnected)

    def _disconnected(self, browser: Any) -> None:
        if self._closing:
            return
        logger.warning("Chromium disconnected (%d browser requests in flight: each is tried "
                       "again on the relaunched one)", len(self.watchdog.jobs))

    async def _browser_settled(self) -> None:
        """After a death: wait (a little) until scrapy-playwright has let the dead browser go,
        so that the retry launches a new one instead of failing on the old."""
        deadline = time.monotonic() + CLOSE_TIMEOUT
        while time.monotonic() < deadline:
            browser = getattr(self, "browser", None)
            if browser is None or browser.is_connected():
                return
            await asyncio.sleep(0.05)


def browser_of(page: Any) -> Any:
    """The Chromium a page was in (None: no page yet)."""
    try:
        return page.context.browser if page is not None else None
    except PlaywrightError:
        return None
