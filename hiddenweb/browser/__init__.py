"""Chromium through scrapy-playwright, only for the pages that need it (issues 5, 26, 31).

One module per concern:

* :mod:`~hiddenweb.browser.config` — :class:`BrowserConfig` (the ``HIDDENWEB_BROWSER*``
  settings) and the fixed bounds;
* :mod:`~hiddenweb.browser.addon` — :class:`BrowserAddon` (in ``ADDONS``) configures
  scrapy-playwright only when ``HIDDENWEB_BROWSER`` is not ``never``;
* :mod:`~hiddenweb.browser.provider` — Playwright and Chromium start at the first browser
  request, not at engine start;
* :mod:`~hiddenweb.browser.handler` — the download handler: every browser request ends within
  its download timeout, a failure costs one page, a dead Chromium is relaunched and its requests
  retried, a watchdog (:mod:`~hiddenweb.browser.watchdog`), a page pool
  (:mod:`~hiddenweb.browser.pool`);
* :mod:`~hiddenweb.browser.guard` — every request Chromium makes is routed through the crawl's
  scope and robots.txt; a page's own navigations become URLs found;
* :mod:`~hiddenweb.browser.replies` — the downloader middleware that answers the crawl's
  request of a script's GET with the reply Chromium got for it;
* :mod:`~hiddenweb.browser.events` — a rendered page's event handlers fired, bounded, each
  control judged by the safety policy first;
* :mod:`~hiddenweb.browser.formtarget` — the form a submission in Chromium acts on, found
  again on the fresh page (never by its position), revealed by the page's events if need be;
* :mod:`~hiddenweb.browser.detect` — which pages need the browser (:func:`needs_browser`,
  :func:`submitted_by_script`, :class:`BrowserPolicy`);
* :mod:`~hiddenweb.browser.fetched` and :mod:`~hiddenweb.browser.scripts` — a rerender's body
  given to Chromium, and the scripts run in pages (:data:`DEPENDENT_PROBE_JS`).

Meta keys read: ``playwright`` (set by the spider), ``playwright_page_methods``,
``hiddenweb_form_target``, ``hiddenweb_body``, ``hiddenweb_body_encoding``,
``hiddenweb_body_headers``; written: ``hiddenweb_found`` (URLs a rendered page tried to reach
by itself). Stats: ``hiddenweb/browser/*``.
This package imports no Playwright until the handler is loaded.
"""

from hiddenweb.browser.addon import BrowserAddon
from hiddenweb.browser.config import BROWSER_SLOT, BrowserConfig
from hiddenweb.browser.detect import BrowserPolicy, needs_browser, submitted_by_script
from hiddenweb.browser.fetched import serve_fetched_body
from hiddenweb.browser.scripts import DEPENDENT_PROBE_JS

__all__ = [
    "BROWSER_SLOT", "DEPENDENT_PROBE_JS", "BrowserAddon", "BrowserConfig", "BrowserPolicy",
    "needs_browser", "serve_fetched_body", "submitted_by_script",
]
