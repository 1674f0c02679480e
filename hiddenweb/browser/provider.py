"""A scrapy-playwright browser provider (``PLAYWRIGHT_BROWSER_PROVIDER``) that starts nothing
until a request asks for the browser.

scrapy-playwright asks its provider to ``start()`` when the engine starts; the default provider
starts Playwright's node driver there (≈ 250 MB) whether or not any page will need a browser.
:class:`LazyProvider` starts the driver in ``launch_browser()``, which scrapy-playwright calls
(behind its own lock) when the first page is created, and again after Chromium died
(``PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER``, on by default): an ``auto`` crawl of a site whose
pages need no script pays nothing. It implements scrapy-playwright's public ``BrowserProvider``
protocol (``scrapy_playwright.provider``) and nothing else.
"""

from __future__ import annotations

import logging

from scrapy_playwright.provider import PlaywrightBrowserProvider

logger = logging.getLogger(__name__)


class LazyProvider(PlaywrightBrowserProvider):
    """scrapy-playwright's own provider, with ``start()`` deferred to the first launch."""

    async def start(self) -> None:  # at engine start: nothing yet
        return None

    async def launch_browser(self):  # type: ignore[no-untyped-def]
        if self.browser_type is None:
            logger.info("Starting Playwright for the first page that needs a browser")
            await super().start()
        return await super().launch_browser()
