"""The download handler for browser requests: every one ends, a failure costs one page.

:class:`BrowserHandler` is scrapy-playwright's handler with one public method overridden,
``download_request`` (Scrapy's download-handler interface), and uses only scrapy-playwright's
public surface beneath it: the meta keys ``playwright_page``, ``playwright_include_page``,
``playwright_page_init_callback`` and ``playwright_context_kwargs``, the settings the add-on sets
(:mod:`hiddenweb.browser.addon`), the ``PLAYWRIGHT_BROWSER_PROVIDER`` (Chromium starts at the
first browser request: :mod:`hiddenweb.browser.provider`). ``tests/browser/test_upstream.py``
fails when those change.

A browser request (``meta["playwright"]``):

1. waits for one of ``HIDDENWEB_BROWSER_MAX_PAGES`` permits and takes an idle page of the pool
   (each serves ``lab knob browser_page_reuse`` requests) or lets scrapy-playwright open one;
2. is rendered within the download timeout (meta ``download_timeout``, Scrapy's
   ``DOWNLOAD_TIMEOUT``): a rerender whose page is already on the site's origin is written into
   it (``lab knob browser_same_document``), a hash route of the document a pooled page shows is
   taken there by a hash change (lab knob ``browser_route_hop``, :mod:`~hiddenweb.browser.hop`;
   one that changes nothing shown is loaded), anything else is scrapy-playwright's navigation with
   the page routed by :class:`~hiddenweb.browser.guard.Guard` (scope, robots.txt, the page's own
   navigations kept as URLs found); then the page settles (``load``, at most
   :data:`~hiddenweb.browser.config.SETTLE_LOAD` s, then
   :data:`~hiddenweb.browser.config.SETTLE` s; a hash route, :mod:`hiddenweb.routes`, is then
   taken again as a hash change, for a router of hash changes alone,
   :data:`~hiddenweb.browser.scripts.ROUTE_AGAIN_JS`), the request's page actions
   (``playwright_page_methods``) run here, not in scrapy-playwright, on the form
   ``meta["hiddenweb_form_target"]`` describes, found again on the page
   (:mod:`~hiddenweb.browser.formtarget`; each action on a control waits at most
   :data:`~hiddenweb.browser.config.ACTION_TIMEOUT` s for it; a submitting action, a
   ``click`` or a script ``submit``, allows one more navigation; a ``wait_for_load_state`` gives
   up quietly after :data:`~hiddenweb.browser.config.IDLE_CAP` s, and its ``networkidle`` is
   the page's own requests all answered, :meth:`BrowserHandler._network_idle`), the page's
   events are fired (:mod:`~hiddenweb.browser.events`, ``HIDDENWEB_BROWSER_EVENTS``: what they
   bring is added to the DOM), the page is scrolled and its load-more controls clicked
   (:mod:`~hiddenweb.browser.scroll`, ``HIDDENWEB_BROWSER_SCROLL_STEPS``), and the DOM is read
   with the page's open shadow roots and frame documents (:mod:`~hiddenweb.browser.embedded`);
3. URLs the page tried to reach by itself (navigations, ``window.open``) are added to the
   returned DOM as ``<a href=… data-hiddenweb-found>`` links, so the spider queues them as any
   link (they are also in ``meta["hiddenweb_found"]``); the requests its scripts made (fetch,
   XHR) are in ``meta["hiddenweb_xhr"]`` (``[method, URL]`` pairs, the guard's capture);
4. gives its page back to the pool, or closes it within
   :data:`~hiddenweb.browser.config.CLOSE_TIMEOUT` s (then closes the page's whole context:
   scrapy-playwright opens a new one), and always frees its permit.

A request whose page crashed, or that timed out before it even had a page, is tried once more
(``…/retries``); one whose Chromium died under it is tried again on the relaunched one (Chromium
is relaunched by scrapy-playwright, counted in ``…/relaunches``), up to
:data:`~hiddenweb.browser.config.RELAUNCH_RETRIES` times besides; one that timed out on its page
(``…/timeouts``) fails at once, and the spider falls back to plain HTTP. A
:class:`~hiddenweb.browser.watchdog.Watchdog` cancels and retries (once) a request stuck beyond
every bound. The worst case for one request is thus about twice the download timeout plus two
page closes (and one more attempt for each Chromium that died under it).

Stats (``hiddenweb/browser/``): ``launched``, ``relaunches``, ``timeouts``, ``retries``,
``crashes``, ``self_navigations``, ``found_urls``, ``stuck_cancelled``, ``offsite_aborted``,
``robots_aborted``, ``dialogs``, ``popups``, ``pages_reused``, ``pages_closed``, ``xhr_captured``,
``close_timeouts``, ``same_document``, ``route_hops``, ``route_hops_unchanged``,
``forms_revealed``, ``forms_gone``.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
import weakref
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Headers, HtmlResponse, Response, TextResponse
from scrapy.utils.misc import load_object
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
from scrapy_playwright.page import PageMethod

from hiddenweb.browser.config import (
    ACTION_TIMEOUT,
    CLOSE_TIMEOUT,
    IDLE_CAP,
    IDLE_QUIET,
    RELAUNCH_RETRIES,
    RETRIES,
    SETTLE,
    SETTLE_LOAD,
    BrowserConfig,
)
from hiddenweb.browser.embedded import embedded_html
from hiddenweb.browser.events import PageEvents
from hiddenweb.browser.fetched import SERVE_FETCHED_BODY, writable
from hiddenweb.browser.formtarget import (
    FORM_MARK_ATTR,
    FORM_TARGET_META,
    LOCATE_FORM_JS,
    FormGone,
)
from hiddenweb.browser.guard import Guard, Render
from hiddenweb.browser.hop import HOP_JS, SHOWN_JS, hop_target, hoppable, keeps_document
from hiddenweb.browser.pool import PagePool, browser_of
from hiddenweb.browser.requests import DOCUMENT_META, SUBMIT_SENT_META
from hiddenweb.browser.scripts import (
    FOUND_JS,
    HOLD_SUBMIT_JS,
    RELEASE_SUBMIT_JS,
    ROUTE_AGAIN_JS,
    SCRIPTED_FORMS_JS,
    WRITE_DOCUMENT_JS,
    WRITES_JS,
)
from hiddenweb.browser.scroll import PageScroll
from hiddenweb.browser.timers import PageTimers
from hiddenweb.browser.watchdog import BrowserStuck, Job, Watchdog
from hiddenweb.framedocs import append_html
from hiddenweb.routes import is_route

logger = logging.getLogger(__name__)

# a new context: service workers blocked (their requests would bypass the pages' routes)
CONTEXT_KWARGS = {"service_workers": "block"}
# errors after which the same request may well succeed on a fresh page or browser
_DIED = re.compile(r"crash|closed|disconnected|context was destroyed", re.IGNORECASE)
_META_KEYS = ("playwright_page_methods", "playwright_page_init_callback",
              "playwright_include_page", "playwright_page", "playwright_page_goto_kwargs")


class BrowserTimeout(Exception):
    """A browser request that did not end within its download timeout (``opening``: before it
    even had a page, a browser problem rather than the page's: tried once more)."""

    def __init__(self, message: str, opening: bool = False) -> None:
        super().__init__(message)
        self.opening = opening


class BrowserHandler(PagePool, ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler, bounded, with a page pool and a routed page."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.crawler = crawler
        self.hw = BrowserConfig.from_settings(crawler.settings)
        if self.hw.mode == "never":
            raise NotConfigured("HIDDENWEB_BROWSER is never")
        self.download_timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT") or 180.0
        self.guard = Guard(crawler, self.hw.timeout, script_reads=self.hw.script_reads)
        self.events = PageEvents(crawler, self.guard, self.hw, self.download_timeout) \
            if self.hw.events else None
        self.timers = PageTimers(crawler, self.guard, self.hw) if self.hw.events else None
        self.scroll = PageScroll(crawler, self.guard, self.hw, self.download_timeout) \
            if self.hw.scroll_steps else None
        self.watchdog = Watchdog(crawler.stats,
                                 stuck_after=self.download_timeout + 2 * CLOSE_TIMEOUT + 1,
                                 closing=self._crawl_closing)
        self._permits: asyncio.Semaphore | None = None
        self._idle: list[Any] = []
        self._uses: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        #: per page, the status, headers, HTML (the guard's ``Render.document``) and scripts
        #: of its document's load: what a route hopping into it answers
        self._documents: weakref.WeakKeyDictionary[
            Any, tuple[int, Headers, bytes | None, tuple[str, ...]]] = \
            weakref.WeakKeyDictionary()
        self._browsers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._closing = False

    # -- Scrapy's download-handler interface ------------------------------------------------
    async def download_request(self, request: Request, spider: Any = None) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        bound = float(request.meta.get("download_timeout") or self.download_timeout)
        charged = relaunched = 0  # retries charged to the request; those after a dead Chromium
        while True:
            job = self.watchdog.start(request.url)
            job.task = asyncio.ensure_future(self._attempt(request, job, bound))
            try:
                return await job.task
            except asyncio.CancelledError:
                if job.closed:  # the watchdog: the crawl is closing
                    raise IgnoreRequest(f"the crawl is closing: {request.url}") from None
                if not job.stuck:  # the crawl itself cancelled us
                    job.task.cancel()
                    raise
                if charged == RETRIES:
                    raise BrowserStuck(f"stuck twice at {job.stage!r}: {request.url}") from None
                charged += 1
            except (PlaywrightError, BrowserTimeout) as exc:
                if job.closed:  # cancelled at close, and its page's clean-up raised this
                    raise IgnoreRequest(f"the crawl is closing: {request.url}") from None
                retry = exc.opening if isinstance(exc, BrowserTimeout) else _DIED.search(str(exc))
                if not retry:
                    raise
                browser = browser_of(job.page)
                await self._browser_settled()
                if browser is not None and not browser.is_connected() \
                        and relaunched < RELAUNCH_RETRIES:
                    relaunched += 1  # its Chromium died under it: not the page's doing
                elif charged < RETRIES:
                    charged += 1
                else:
                    raise
                self.stats.inc_value("hiddenweb/browser/retries")
                logger.info("Page or browser died under %s (%s): trying once more",
                            request.url, str(exc).splitlines()[0][:120])
            finally:
                self.watchdog.done(job)

    def _crawl_closing(self) -> bool:
        """Whether the engine is closing the spider: it then waits for every request in
        progress (Scrapy has no public flag for it: its slot's ``closing``, set by
        ``close_spider``)."""
        slot = getattr(getattr(self.crawler, "engine", None), "_slot", None)
        return getattr(slot, "closing", None) is not None

    async def close(self) -> None:  # type: ignore[override]
        self._closing = True
        self.watchdog.stop()
        idle, self._idle = self._idle, []
        for page in idle:
            await self._close_page(page)
        try:
            await asyncio.wait_for(super().close(), 4 * CLOSE_TIMEOUT)
        except TimeoutError:
            logger.warning("Chromium did not close within %.0f s; left to exit with the crawl",
                           4 * CLOSE_TIMEOUT)

    # -- one attempt ------------------------------------------------------------------------
    async def _attempt(self, request: Request, job: Job, bound: float) -> Response:
        if self._permits is None:
            self._permits = asyncio.Semaphore(self.hw.max_pages)
        own_page = bool(request.meta.get("playwright_include_page"))  # the caller closes it
        async with self._permits:
            # decided again now that it would start (the render gate's at_dispatch): a render
            # queued before its template was judged idle is withdrawn or read over plain HTTP
            gate = getattr(self.crawler.spider, "renders", None)  # the hwdla spider's
            decision = gate.at_dispatch(request) if gate is not None else "render"
            if decision == "withdraw":
                raise IgnoreRequest(f"its template's renders add nothing now: {request.url}")
            if decision == "plain":
                return await super().download_request(request)
            page = None if own_page else self._take(request)
            job.stage = "rendering"
            ok = False
            try:
                response = await asyncio.wait_for(self._render(request, page, job), bound)
                ok = True
                return response
            except FormGone:
                ok = True  # the page is fine: its form is not on it
                raise
            except TimeoutError:
                self.stats.inc_value("hiddenweb/browser/timeouts")
                raise BrowserTimeout(f"no answer within {bound:.0f} s (at {job.stage!r}, page "
                                     f"{job.page_url}): {request.url}",
                                     opening=job.page is None) from None
            except PlaywrightError as exc:
                if "Timeout" in type(exc).__name__:
                    self.stats.inc_value("hiddenweb/browser/timeouts")
                elif "crash" in str(exc).lower():
                    self.stats.inc_value("hiddenweb/browser/crashes")
                raise
            finally:
                job.stage = "closing"
                used = job.page if job.page is not None else page
                if used is not None:
                    self.guard.end(used)
                    if own_page and ok:
                        request.meta["playwright_page"] = used
                    else:
                        keep = self.hw.route_hop and ok and not used.is_closed() \
                            and keeps_document(used.url, request)
                        await self._release(used, ok, keep)

    async def _render(self, request: Request, page: Any, job: Job) -> Response:
        started = time.monotonic()
        in_page = None  # a render in the pooled page's own document, with no navigation
        if page is not None and self.hw.same_document and writable(page, request):
            in_page = self._write
        elif page is not None and self.hw.route_hop and hoppable(page.url, request):
            in_page = self._hop
        if in_page is not None:
            job.page, job.page_url = page, page.url
            job.render = Render(request, navigations=0)
            self.guard.begin(page, job.render)
            response = await in_page(page, request, job.render, job)
        else:
            response = await self._navigate(request, page, job)
        request.meta["download_latency"] = time.monotonic() - started
        return response

    async def _navigate(self, request: Request, page: Any, job: Job) -> Response:
        """scrapy-playwright's navigation, then the settle, the page actions and the DOM."""
        meta = request.meta
        saved = {k: meta[k] for k in _META_KEYS if k in meta}
        methods = meta.pop("playwright_page_methods", None) or []
        meta["playwright_page_init_callback"] = partial(
            self._init_page, job, saved.get("playwright_page_init_callback"))
        meta["playwright_include_page"] = True
        # the navigation returns once committed; the settle waits for the document, bounded,
        # and stops waiting when the page's own navigation stopped its parser
        meta["playwright_page_goto_kwargs"] = {
            **(saved.get("playwright_page_goto_kwargs") or {}), "wait_until": "commit"}
        if page is not None and (self.hw.same_document or self.hw.route_hop) \
                and not await self._blank(page):  # idle with its document: unloaded first
            self.stats.inc_value("hiddenweb/browser/blank_failed")
            await self._close_page(page, blank=False)
            page = None
        if page is not None:
            meta["playwright_page"] = page
            self.stats.inc_value("hiddenweb/browser/pages_reused")
        meta.setdefault("playwright_context_kwargs", CONTEXT_KWARGS)
        job.stage = "opening a page" if page is None else "navigating"
        meta.pop("playwright_suggested_filename", None)
        try:
            response = await super().download_request(request)
        finally:
            for key in _META_KEYS:
                meta.pop(key, None)
            meta.update(saved)
        page, render = job.page, job.render
        if "playwright_suggested_filename" in meta or not isinstance(response, TextResponse) \
                or page is None:
            return response  # a download (scrapy-playwright's response of the file)
        job.stage, job.page_url = "settling", page.url
        await self._wait(page, "domcontentloaded", self.hw.timeout, render)
        await self._settle(page, render)
        if self.hw.hash_routes and not methods and is_route(request.url):
            job.stage = "routing"
            if await page.evaluate(ROUTE_AGAIN_JS):  # a router of hash changes alone
                await self._network_idle(page, min(self.hw.timeout, IDLE_CAP), render)
        if methods:
            if (target := meta.get(FORM_TARGET_META)) is not None:
                await self._locate(page, target, render, job)
            job.stage = "page actions"
            await self._actions(page, methods, render)
            await self._settle(page, render)
            if render.submitted:  # what the submission sent (hiddenweb.forms.crawl)
                request.meta[SUBMIT_SENT_META] = render.sent
        # where a redirect chain ended (guard); before the events, whose routes change page.url
        url = render.landed.get(page.url, page.url)
        # a form submitted by page actions: its answer is read as it came, no event fired
        content, found = await self._read(page, render, job, events=not methods)
        if render.document is not None and not methods:  # (page actions: another document)
            request.meta[DOCUMENT_META] = render.document
        if self.hw.route_hop:  # what a route hopping into this document will answer
            self._documents[page] = (response.status, Headers(response.headers),
                                     render.document if not methods else None,
                                     tuple(render.scripts))
        return self._response(request, url, response.status, response.headers, content,
                              found, response.flags, getattr(response, "ip_address", None))

    async def _init_page(self, job: Job, original: Any, page: Any, request: Request) -> None:
        """``playwright_page_init_callback``: route the page (before its navigation). Called
        again with a new page when scrapy-playwright retries on a closed one: a new render."""
        job.page, job.stage, job.render = page, "navigating", Render(request)
        try:
            self._note_browser(page)
            await self.guard.install(page, job.render)
            if original and original != SERVE_FETCHED_BODY:  # the guard serves the body
                await load_object(original)(page, request)
        except Exception:
            # scrapy-playwright logs and goes on: an unrouted page must not navigate
            await self._close_page(page)
            raise

    async def _write(self, page: Any, request: Request, render: Render, job: Job) -> Response:
        """Render ``meta["hiddenweb_body"]`` in ``page`` (already on the request's origin)
        without a navigation: :data:`WRITE_DOCUMENT_JS`; the response is the DOM after it."""
        meta = request.meta
        body = meta["hiddenweb_body"].decode(meta.get("hiddenweb_body_encoding") or "utf-8",
                                             "replace")
        job.stage = "writing the document"
        await page.evaluate(WRITE_DOCUMENT_JS, [request.url, body])
        job.stage = "settling"
        await self._settle(page, render)
        content, found = await self._read(page, render, job)
        self.stats.inc_value("hiddenweb/browser/same_document")
        self.stats.inc_value("hiddenweb/browser/pages_reused")
        return self._response(request, request.url, 200,
                              Headers(meta.get("hiddenweb_body_headers") or {}), content, found,
                              ["playwright"], None)

    async def _hop(self, page: Any, request: Request, render: Render, job: Job) -> Response:
        """Render the hash route ``request`` in ``page``, which shows its document, by a hash
        change (:mod:`hiddenweb.browser.hop`); the response is the DOM after it, with the
        status and headers of the document's own load, and that load's HTML as the document
        a direct render is judged against (the same bytes plain HTTP reads for every route of
        the document). A hop that changed nothing the document shows is loaded instead."""
        job.stage = "hopping"
        logger.debug("Route hop to %s in the page at %s", request.url, page.url)
        status, headers, document, scripts = self._documents.get(page) \
            or (200, Headers({}), None, ())
        render.scripts = list(scripts)  # (the document's, for its router's patterns)
        before = await page.evaluate(SHOWN_JS)
        await page.evaluate(HOP_JS, hop_target(request))
        await self._network_idle(page, min(self.hw.timeout, IDLE_CAP), render)
        await self._settle(page, render)
        if await page.evaluate(SHOWN_JS) == before:  # a router that reads the hash on load
            self.stats.inc_value("hiddenweb/browser/route_hops_unchanged")
            self.guard.end(page)
            return await self._navigate(request, page, job)
        content, found = await self._read(page, render, job)
        self.stats.inc_value("hiddenweb/browser/route_hops")
        self.stats.inc_value("hiddenweb/browser/pages_reused")
        if document is not None:
            request.meta[DOCUMENT_META] = document
        return self._response(request, request.url, status, headers, content, found,
                              ["playwright"], None)

    async def _read(self, page: Any, render: Render, job: Job,
                    events: bool = True) -> tuple[str, list[str]]:
        """A settled page read: its events fired (unless not ``events``), its shadow roots and
        frames, its own records (:meth:`_found`) and its DOM; the HTML with what the events and
        embedded documents added, and the same-host URLs found."""
        extra = await self._events(page, render, job) if events else ""
        extra += await self._embedded(page, render, job)
        job.stage, job.page_url = "reading the DOM", page.url
        found = await self._found(page, render)
        return append_html(await page.content(), extra), found

    async def _settle(self, page: Any, render: Render) -> None:
        """Wait for ``load`` (bounded: a page may never finish loading), then a little more, so
        that a page navigating itself shortly after load does it while we watch."""
        await self._wait(page, "load", SETTLE_LOAD, render)
        await asyncio.sleep(SETTLE)

    async def _wait(self, page: Any, state: str, seconds: float, render: Render) -> None:
        """``page.wait_for_load_state(state)`` for at most ``seconds``, and no longer once a
        self-navigation stopped the document's parser (the state will never come)."""
        if render.stopped.is_set():
            return
        waiter = asyncio.ensure_future(page.wait_for_load_state(state, timeout=seconds * 1000))
        stopped = asyncio.ensure_future(render.stopped.wait())
        try:
            await asyncio.wait({waiter, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not waiter.done():
                waiter.cancel()
                waiter.add_done_callback(_retrieve)
        if waiter.done() and not waiter.cancelled() and waiter.exception() is not None:
            exc = waiter.exception()
            if "Timeout" not in type(exc).__name__:
                raise exc  # type: ignore[misc]

    async def _network_idle(self, page: Any, seconds: float, render: Render) -> None:
        """Until no request of the page has been in flight for IDLE_QUIET s (at most
        ``seconds``). Not Playwright's ``networkidle``: that state is reached once per document,
        so once a page sat idle for half a second before the crawler's click, waiting for it
        returns at once, while the request the click started (a script's ``fetch`` of the
        results, shown in the page) is still in flight: the DOM read then has no results."""
        await self.guard.quiet(page, seconds, IDLE_QUIET, 0.05, render.stopped)

    async def _locate(self, page: Any, target: dict, render: Render, job: Job) -> None:
        """Find and mark the form a submission acts on (:mod:`~hiddenweb.browser.formtarget`);
        not on the fresh page, fire the page's events as its render did, looking again after
        each, and stop at the one that shows it; not there after all, :class:`FormGone`."""
        job.stage = "finding the form"
        if await page.evaluate(LOCATE_FORM_JS, [target, FORM_MARK_ATTR]) >= 0:
            return
        if self.events is not None and not page.is_closed():
            job.stage = "revealing the form"  # event by event, until it is there
            await self.events.fire(page, render,
                                   until=(LOCATE_FORM_JS, [target, FORM_MARK_ATTR]))
            if not page.is_closed() \
                    and await page.evaluate(LOCATE_FORM_JS, [target, FORM_MARK_ATTR]) >= 0:
                self.stats.inc_value("hiddenweb/browser/forms_revealed")
                return
        self.stats.inc_value("hiddenweb/browser/forms_gone")
        raise FormGone(f"the form it submits ({target.get('method', 'get').upper()} "
                       f"{target.get('action') or '(no action)'}, fields "
                       f"{', '.join(target.get('names') or ()) or 'none'}) is not on a fresh "
                       f"render of {render.request.url}")

    async def _actions(self, page: Any, methods: list[Any], render: Render) -> None:
        """The request's page actions, the page's own submits held until the crawler's."""
        await page.evaluate(HOLD_SUBMIT_JS)
        try:
            for pm in methods:
                if not isinstance(pm, PageMethod):
                    logger.warning("Ignoring %r: not a PageMethod", pm)
                    continue
                if _submits(pm):  # the crawler's own submission navigates: allowed
                    await page.evaluate(RELEASE_SUBMIT_JS)
                    render.navigations += 1
                    render.submitted = True
                    sends = (render.request.meta.get(FORM_TARGET_META) or {}).get("sends")
                    if sends:  # and so does its script's request of the form's action
                        render.form_send = (str(sends[0]).upper(), str(sends[1]))
                if pm.method == "wait_for_load_state":
                    state = pm.args[0] if pm.args else pm.kwargs.get("state", "load")
                    cap = min(self.hw.timeout, IDLE_CAP)
                    if state == "networkidle":
                        await self._network_idle(page, cap, render)
                    else:
                        await self._wait(page, state, cap, render)
                    continue
                method = partial(pm.method, page) if callable(pm.method) \
                    else getattr(page, pm.method)
                kwargs = pm.kwargs
                if pm.method in _ACTS and "timeout" not in kwargs:
                    # the page has settled and its form was found: a control that is still
                    # not there, or not usable, will not be (not the guard's page timeout)
                    kwargs = {**kwargs, "timeout": ACTION_TIMEOUT * 1000}
                result = method(*pm.args, **kwargs)
                pm.result = await result if asyncio.iscoroutine(result) else result
        finally:
            if not page.is_closed():
                try:
                    await page.evaluate(RELEASE_SUBMIT_JS)
                except PlaywrightError:  # navigated meanwhile: a new window, nothing held
                    pass

    async def _events(self, page: Any, render: Render, job: Job) -> str:
        """The page's timers due soon run (:mod:`~hiddenweb.browser.timers`), its events fired
        (:mod:`~hiddenweb.browser.events`), then the page scrolled and its load-more controls
        clicked (:mod:`~hiddenweb.browser.scroll`); HTML to append."""
        extra = ""
        if self.timers is not None and not page.is_closed():
            job.stage = "running timers"
            await self.timers.run(page, render)
        if self.events is not None and not page.is_closed():
            job.stage = "firing events"
            extra = await self.events.fire(page, render)
        if self.scroll is not None and not page.is_closed():
            job.stage = "scrolling"
            extra += await self.scroll.run(page, render)
        return extra

    async def _embedded(self, page: Any, render: Render, job: Job) -> str:
        """The page's open shadow roots and frame documents (:mod:`~hiddenweb.browser.
        embedded`), a form's answer's too; HTML to append."""
        if page.is_closed():
            return ""
        job.stage = "reading shadow roots and frames"
        return await embedded_html(page, render.host, self.stats)

    async def _found(self, page: Any, render: Render) -> list[str]:
        """What the page's own records hold, read before its DOM: the URLs it tried to reach
        (``window.open``, navigations: :data:`FOUND_JS`), its forms a script submits, marked
        (:data:`SCRIPTED_FORMS_JS`), and the writes its documents refused
        (:data:`WRITES_JS`), captured; returns the same-host URLs found."""
        for url in await self._record(page, FOUND_JS, "URLs found") or ():
            render.find(url)
        if self.hw.scripted_forms \
                and (scripted := await self._record(page, SCRIPTED_FORMS_JS, "scripted forms")):
            self.stats.inc_value("hiddenweb/browser/forms_scripted", scripted)
        refused: list[list[str]] = []  # what its documents refused (RECORD_WRITES_JS), frames too
        for frame in page.frames:
            try:
                refused += await frame.evaluate(WRITES_JS)
            except PlaywrightError as exc:
                if frame is page.main_frame and _DIED.search(str(exc)):
                    raise
        for method, url in refused:
            render.capture(method, url)
        if refused:
            self.stats.inc_value("hiddenweb/browser/writes_aborted", len(refused))
        found = [u for u in render.found
                 if urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname == render.host]
        if found:
            self.stats.inc_value("hiddenweb/browser/found_urls", len(found))
            logger.debug("URLs found by the render of %s: %s", render.request.url, found)
        if self.guard.route_patterns:  # the router patterns of the scripts it loaded
            patterns = list(dict.fromkeys(p for u in render.scripts
                                          for p in self.guard.route_patterns.get(u, ())))
            if patterns:
                render.request.meta["hiddenweb_route_patterns"] = patterns
        if render.captured:  # the page's script requests (guard: capture)
            render.request.meta["hiddenweb_xhr"] = [list(c) for c in render.captured]
            self.stats.inc_value("hiddenweb/browser/xhr_captured", len(render.captured))
        return found

    @staticmethod
    async def _record(page: Any, script: str, name: str) -> Any:
        """``script``'s result in ``page`` (one of the page's own records, ``name`` for the
        log); None when it could not be read, but a crashed page raises."""
        try:
            return await page.evaluate(script)
        except PlaywrightError as exc:
            if _DIED.search(str(exc)):
                raise
            logger.debug("The page's %s not read on %s: %s", name, page.url, exc)
            return None

    def _response(self, request: Request, url: str, status: int, headers: Headers,
                  content: str, found: list[str], flags: list[str] | None,
                  ip_address: Any) -> HtmlResponse:
        if found:
            request.meta["hiddenweb_found"] = found
            content = _with_links(content, found)
        headers = Headers(headers)
        headers.pop("Content-Encoding", None)
        return HtmlResponse(url=url, status=status, headers=headers,
                            body=content.encode("utf-8"), encoding="utf-8", request=request,
                            flags=list(flags or ["playwright"]), ip_address=ip_address)


#: page actions on a control, bounded by ACTION_TIMEOUT unless the request gives a timeout
_ACTS = frozenset({"fill", "click", "check", "uncheck", "select_option", "type", "press"})


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # a cancelled wait's late error: nobody waits for it


def _submits(pm: PageMethod) -> bool:
    if pm.method == "click":
        return True
    return pm.method == "evaluate" and bool(pm.args) and "submit" in str(pm.args[0]).lower()


def _with_links(content: str, urls: list[str]) -> str:
    return append_html(content, "".join(
        f'<a href="{html.escape(u, quote=True)}" data-hiddenweb-found></a>' for u in urls))
