"""Chromium through scrapy-playwright, only for the pages that need it (issue 5).

Settings (defaults in :mod:`hiddenweb.defaults`, documented in ``docs/settings.md``):
``HIDDENWEB_BROWSER`` (``"auto"`` | ``"always"`` | ``"never"``), ``HIDDENWEB_BROWSER_PATH``,
``HIDDENWEB_BROWSER_MAX_PAGES``, ``HIDDENWEB_BROWSER_TIMEOUT``, ``HIDDENWEB_BROWSER_PAGE_REUSE``,
``HIDDENWEB_BROWSER_REUSE_BODY``, ``HIDDENWEB_BROWSER_SAME_DOCUMENT``.

* :class:`BrowserAddon` (in ``ADDONS``) configures the download handler only when the mode is not
  ``never``: merely configuring scrapy-playwright's handler starts its node driver (≈ 250 MB).
* :class:`LazyPlaywrightHandler` starts that driver and Chromium at the first request that asks
  for the browser (``meta["playwright"]``), not at engine start: an ``auto`` crawl of a site
  whose pages need no script pays nothing. It reuses pages (opening and closing one costs more
  than loading it: ENVIRONMENT.md), at most ``HIDDENWEB_BROWSER_MAX_PAGES`` at a time, each for at
  most ``HIDDENWEB_BROWSER_PAGE_REUSE`` requests, and closes every page at the end.
* :func:`serve_fetched_body` (a ``playwright_page_init_callback``) answers a rerender's main
  document with the body already fetched over plain HTTP (``route.fulfill``, meta
  ``hiddenweb_body``): Chromium runs the page's scripts without downloading it again.
  With ``HIDDENWEB_BROWSER_SAME_DOCUMENT``, a pooled page already on the site's origin is not
  navigated at all: the body is written into it (:data:`WRITE_DOCUMENT_JS`), about a third of
  a navigation's Chromium CPU; the window (its script globals, timers) outlives the document.
* :func:`needs_browser` decides, from a page fetched over plain HTTP, whether scripts build its
  links or forms or submit its forms; :class:`BrowserPolicy` caches that per URL template so a
  template whose pages mostly need the browser goes straight to it.

Meta keys read: ``playwright`` (set by the spider), ``hiddenweb_body``,
``hiddenweb_body_headers`` (:func:`serve_fetched_body`). Stats: ``hiddenweb/browser/*``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass
from urllib.parse import urlsplit

from parsel import Selector
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, HtmlResponse
from scrapy.settings import BaseSettings

from hiddenweb import defaults
from hiddenweb.pagetext import template_key

logger = logging.getLogger(__name__)

MODES = ("auto", "always", "never")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
HANDLER = "hiddenweb.browser.LazyPlaywrightHandler"
BROWSER_SLOT = "hiddenweb-browser"
_SKIPPED_RESOURCES = frozenset({"image", "media", "font", "stylesheet"})


def skip_resource(request) -> bool:
    """``PLAYWRIGHT_ABORT_REQUEST``: no images, media, fonts or styles (they build no links)."""
    return request.resource_type in _SKIPPED_RESOURCES


@dataclass(frozen=True)
class BrowserConfig:
    mode: str
    path: str
    max_pages: int
    timeout: float
    page_reuse: int
    reuse_body: bool = True
    same_document: bool = True

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> BrowserConfig:
        mode = str(settings.get("HIDDENWEB_BROWSER", defaults.HIDDENWEB_BROWSER)).lower()
        if mode not in MODES:
            raise ValueError(f"HIDDENWEB_BROWSER={mode!r}: choose one of {', '.join(MODES)}")
        max_pages = settings.getint("HIDDENWEB_BROWSER_MAX_PAGES",
                                    defaults.HIDDENWEB_BROWSER_MAX_PAGES)
        if max_pages < 1:
            raise ValueError(f"HIDDENWEB_BROWSER_MAX_PAGES={max_pages}: must be at least 1")
        timeout = settings.getfloat("HIDDENWEB_BROWSER_TIMEOUT", defaults.HIDDENWEB_BROWSER_TIMEOUT)
        if timeout <= 0:
            raise ValueError(f"HIDDENWEB_BROWSER_TIMEOUT={timeout}: must be > 0 seconds")
        return cls(
            mode=mode,
            path=settings.get("HIDDENWEB_BROWSER_PATH", defaults.HIDDENWEB_BROWSER_PATH),
            max_pages=max_pages,
            timeout=timeout,
            page_reuse=max(1, settings.getint("HIDDENWEB_BROWSER_PAGE_REUSE",
                                              defaults.HIDDENWEB_BROWSER_PAGE_REUSE)),
            reuse_body=settings.getbool("HIDDENWEB_BROWSER_REUSE_BODY",
                                        defaults.HIDDENWEB_BROWSER_REUSE_BODY),
            same_document=settings.getbool("HIDDENWEB_BROWSER_SAME_DOCUMENT",
                                           defaults.HIDDENWEB_BROWSER_SAME_DOCUMENT),
        )


class BrowserAddon:
    """``ADDONS = {"hiddenweb.browser.BrowserAddon": 0}``: the handler and Playwright's settings,
    unless ``HIDDENWEB_BROWSER = "never"``."""

    def update_settings(self, settings: BaseSettings) -> None:
        config = BrowserConfig.from_settings(settings)
        if config.mode == "never":
            return
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        handlers.update({"http": HANDLER, "https": HANDLER})
        settings.set("DOWNLOAD_HANDLERS", handlers, "addon")
        settings.setdefault("PLAYWRIGHT_BROWSER_TYPE", "chromium")
        settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", {
            "executable_path": config.path, "headless": True, "args": CHROMIUM_ARGS,
            **settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")}, "addon")
        settings.set("PLAYWRIGHT_MAX_CONTEXTS", 1, "addon")
        # browser requests get their own download slot (BROWSER_SLOT, meta "download_slot")
        # and concurrency on top of the plain ones: waiting for a page never holds up plain HTTP
        slots = settings.getdict("DOWNLOAD_SLOTS")
        slots.setdefault(BROWSER_SLOT, {"concurrency": config.max_pages, "delay": 0})
        settings.set("DOWNLOAD_SLOTS", slots, "addon")
        settings.set("CONCURRENT_REQUESTS",
                     settings.getint("CONCURRENT_REQUESTS") + config.max_pages, "addon")
        settings.set("PLAYWRIGHT_ABORT_REQUEST", "hiddenweb.browser.skip_resource", "addon")
        settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", int(config.timeout * 1000), "addon")


# The handler is importable without Playwright only when the browser is never used.
try:
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
except ImportError:  # pragma: no cover
    ScrapyPlaywrightDownloadHandler = object  # type: ignore[misc,assignment]


class LazyPlaywrightHandler(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc,valid-type]
    """scrapy-playwright's handler, started at the first browser request, with a page pool."""

    def __init__(self, crawler) -> None:
        if ScrapyPlaywrightDownloadHandler is object:
            raise NotConfigured("scrapy-playwright is not installed")
        super().__init__(crawler)
        self.hw = BrowserConfig.from_settings(crawler.settings)
        self._launched = False
        self._launch_lock = asyncio.Lock()
        self._idle_pages: list = []  # idle pages
        # pages in use + idle pages <= max_pages: a permit is held from taking (or creating) a
        # page until it is back in the pool or closed (scrapy-playwright's own per-context
        # limit would deadlock here: idle pages would keep its slots)
        self._permits = asyncio.Semaphore(self.hw.max_pages)
        self._uses: dict[int, int] = {}

    async def _maybe_launch_in_thread(self) -> None:  # engine_started: do not launch yet
        return None

    def _engine_started(self):  # older Scrapy: same
        return None

    async def _ensure_launched(self) -> None:
        async with self._launch_lock:
            if not self._launched:
                self.stats.set_value("hiddenweb/browser/launched", 1)
                await self._launch()
                self._launched = True

    async def _download_request(self, request, spider=None):
        await self._ensure_launched()
        if request.meta.get("playwright_include_page"):  # a caller that manages its page
            return await super()._download_request(request, spider)
        async with self._permits:
            return await self._download_pooled(request, spider)

    async def _download_pooled(self, request, spider):
        page = None
        while self._idle_pages and page is None:
            candidate = self._idle_pages.pop()
            page = None if candidate.is_closed() else candidate
        if page is not None:
            self.stats.inc_value("hiddenweb/browser/pages_reused")
            if self.hw.same_document and _writable(page, request):
                ok = False
                try:
                    response = await asyncio.wait_for(self._write(page, request),
                                                      self.hw.timeout)
                    ok = True
                    return response
                finally:
                    await self._release(page, ok)
            request.meta["playwright_page"] = page
        request.meta["playwright_include_page"] = True
        ok = False
        try:
            response = await super()._download_request(request, spider)
            ok = True
            return response
        finally:
            request.meta.pop("playwright_include_page", None)
            page = request.meta.pop("playwright_page", None)
            if page is not None:
                await self._release(page, ok)

    async def _write(self, page, request):
        """Render ``meta["hiddenweb_body"]`` in ``page`` (already on the request's origin)
        without a navigation: :data:`WRITE_DOCUMENT_JS`; the response is the DOM after it."""
        started = time.monotonic()
        meta = request.meta
        html = meta["hiddenweb_body"].decode(meta.get("hiddenweb_body_encoding") or "utf-8",
                                             "replace")
        await page.evaluate(WRITE_DOCUMENT_JS, [request.url, html])
        content = await page.content()
        meta["download_latency"] = time.monotonic() - started
        self.stats.inc_value("hiddenweb/browser/same_document")
        return HtmlResponse(url=request.url, status=200, encoding="utf-8", request=request,
                            headers=Headers(meta.get("hiddenweb_body_headers") or {}),
                            body=content.encode("utf-8"), flags=["playwright"])

    async def _release(self, page, ok: bool) -> None:
        uses = self._uses.get(id(page), 0) + 1
        if ok and not page.is_closed() and uses < self.hw.page_reuse:
            self._uses[id(page)] = uses
            self._idle_pages.append(page)
            return
        self._uses.pop(id(page), None)
        if not page.is_closed():
            try:
                await page.close()
            except Exception:  # a crashed page or browser: nothing left to close
                pass
        self.stats.inc_value("hiddenweb/browser/pages_closed")

    async def _close(self) -> None:
        idle, self._idle_pages = self._idle_pages, []
        for page in idle:
            await self._release(page, False)
        if self._launched:
            await super()._close()


# A page already showing the request's origin renders the next body in place: the URL becomes
# the request's (history.replaceState: relative links, fetches and pushState resolve as after a
# navigation), then document.open/write/close parse the body and run its scripts, up to
# DOMContentLoaded — Playwright's page.set_content does the same write, keeping the old URL.
WRITE_DOCUMENT_JS = """([url, html]) => {
  history.replaceState(null, "", url);
  document.open();
  document.write(html);
  document.close();
}"""


def _writable(page, request) -> bool:
    """A rerender (its body in meta, no page actions) of a URL on the page's own origin."""
    meta = request.meta
    if meta.get("hiddenweb_body") is None or meta.get("playwright_page_methods") \
            or request.method != "GET":
        return False
    here, there = urlsplit(page.url), urlsplit(request.url)
    return (here.scheme, here.netloc) == (there.scheme, there.netloc)


async def serve_fetched_body(page, request) -> None:
    """``playwright_page_init_callback`` of a rerender: the navigation to ``request.url`` is
    answered (``route.fulfill``, once) with ``meta["hiddenweb_body"]``, the page as it came
    over plain HTTP, so the server is not asked twice; the document keeps its URL, so relative
    links and the scripts' requests work as after a download. Other requests go on as usual."""
    body = request.meta.get("hiddenweb_body")
    if body is None:
        return
    url = request.url
    headers = request.meta.get("hiddenweb_body_headers") or {"Content-Type": "text/html"}

    async def fulfil(route, pw_request) -> None:
        if pw_request.is_navigation_request() and pw_request.method == "GET":
            await route.fulfill(status=200, headers=headers, body=body)
        else:
            await route.fallback()

    await page.route(lambda u: u == url, fulfil, times=1)


# A dependent select (issue 5): in the page, choose each value of the parent select in turn
# (input + change events, as a user's choice fires) and read the child's options once they
# changed, or once the request the choice started has been answered (a resource entry) and the
# page has stayed unchanged for 0.5 s, or after ``timeout`` ms. Returns {parent: [child values]}.
DEPENDENT_PROBE_JS = """async ([i, parent, child, limit, timeout]) => {
  const f = document.forms[i], p = f.elements[parent], out = {};
  const values = () => Array.from(f.elements[child].options, o => o.value).filter(v => v);
  const vals = Array.from(p.options, o => o.value).filter(v => v).slice(0, limit);
  for (const v of vals) {
    const before = performance.getEntriesByType("resource").length;
    const old = values().join("\\n");
    p.value = v;
    p.dispatchEvent(new Event("input", {bubbles: true}));
    p.dispatchEvent(new Event("change", {bubbles: true}));
    const t0 = performance.now();
    let answered = null;
    while (performance.now() - t0 < timeout) {
      await new Promise(r => setTimeout(r, 15));
      const now = values();
      if (now.length && now.join("\\n") !== old) break;
      if (performance.getEntriesByType("resource").length > before) {
        if (answered === null) answered = performance.now();
        else if (performance.now() - answered > 500) break;
      }
    }
    out[v] = values();
  }
  return out;
}"""


# --- deciding which pages need the browser ---------------------------------------------------
_BUILDS = re.compile(r"createElement|appendChild|insertAdjacentHTML|innerHTML|document\.write"
                     r"|fetch\s*\(|XMLHttpRequest|\.submit\s*\(|requestSubmit|addEventListener")
_SUBMITS = re.compile(r"fetch\s*\(|XMLHttpRequest|preventDefault")


def needs_browser(page: Selector) -> bool:
    """True when scripts on the page build links or forms, or submit forms (any inline script
    doing DOM work or requests, any external script, any ``on*`` handler on a form or link)."""
    for script in page.xpath("//script"):
        kind = (script.attrib.get("type") or "text/javascript").lower()
        if "json" in kind or "template" in kind:
            continue
        if script.attrib.get("src") or _BUILDS.search(script.xpath("string(.)").get() or ""):
            return True
    return bool(page.xpath("//form[@onsubmit] | //a[@onclick] | //*[@onclick][ancestor::form]"))


_BY_ID = re.compile(r"""getElementById\(\s*["']([^"']+)["']|querySelector\(\s*["']#([\w-]+)""")
_ANY_FORM = re.compile(r"""document\.forms|querySelectorAll\(|getElementsByTagName\(\s*["']form""")


def submitted_by_script(page: Selector, form: Selector | None) -> bool:
    """True when a script (not the browser's navigation) submits ``form``: an ``onsubmit``
    handler, or a page script that intercepts submissions and sends them by fetch / XHR.

    A page script that names the forms it hooks by id (``getElementById("form-2")``) is taken
    to hook only those: the page's other forms are submitted by the browser's navigation, and
    plain HTTP does for them. A script that reaches forms in general (``document.forms``,
    ``querySelectorAll``), or names none, is taken to hook every form of the page."""
    if form is not None and (form.attrib.get("onsubmit") or form.attrib.get("data-xhr")):
        return True
    hooks = [code for code in page.xpath("//script[not(@src)]/text()").getall()
             if "submit" in code and _SUBMITS.search(code)]
    if not hooks:
        return False
    form_id = form.attrib.get("id") if form is not None else None
    for code in hooks:
        named = {a or b for a, b in _BY_ID.findall(code)}
        if form_id is None or not named or _ANY_FORM.search(code) or form_id in named:
            return True
    return False


class BrowserPolicy:
    """Per URL template: how many pages were checked over plain HTTP and how many needed the
    browser. Once ``min_seen`` pages of a template were checked and at least ``share`` of them
    needed it, the template's pages go straight to the browser (one download instead of two)."""

    def __init__(self, mode: str, min_seen: int = 4, share: float = 0.5) -> None:
        self.mode, self.min_seen, self.share = mode, min_seen, share
        self.seen: dict[str, int] = defaultdict(int)
        self.needed: dict[str, int] = defaultdict(int)

    def record(self, url: str, needed: bool) -> None:
        key = template_key(url)
        self.seen[key] += 1
        self.needed[key] += int(needed)

    def direct(self, url: str) -> bool:
        if self.mode == "always":
            return True
        if self.mode == "never":
            return False
        key = template_key(url)
        seen = self.seen.get(key, 0)
        return seen >= self.min_seen and self.needed.get(key, 0) >= self.share * seen
