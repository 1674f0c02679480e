"""Every request Chromium makes, routed: the crawl's scope, robots.txt, and the page's own
navigations (issues 26 and 31).

:meth:`Guard.install` puts one route on a page (``page.route("**")``, from the handler's
``playwright_page_init_callback``, so after scrapy-playwright's own route, which it replaces) and
answers every request of the page itself:

* **scope**: a request to a host other than the rendered request's (host names compared, not
  host:port) is aborted (stat ``hiddenweb/browser/offsite_aborted``), whatever asked for it: a
  script, an iframe, ``fetch`` or XHR (any method), a form, a navigation. The rest are fetched
  with ``route.fetch(max_redirects=0)``, and a redirect is followed here, hop by hop (at most
  :data:`MAX_REDIRECTS`), each hop held to the host and robots.txt like the first: Chromium never
  follows a redirect itself, since Playwright routes only the first URL of a redirect chain (a
  3xx fulfilled to Chromium sends every later hop out unrouted). The request is answered with
  the chain's last response; a navigation's document keeps the first URL, and the URL it
  landed on is kept in :attr:`Render.landed` (the handler answers with it).
* **writes**: a script's request that is not a navigation and not a GET, HEAD or OPTIONS (an
  XHR or ``fetch`` PUT, POST, DELETE, PATCH) is aborted (``hiddenweb/browser/writes_aborted``):
  rendering a page must not change the site. Form submissions are navigations. Before that,
  every document of the page refuses such a write before it is a request
  (:data:`~hiddenweb.browser.scripts.RECORD_WRITES_JS`: it fails as a network error does and
  is recorded; the handler counts and captures it as it reads the page): Playwright continues
  a request unrouted when it cannot tell which frame made it, and a page retrying a refused
  save got one out now and then. The exception is a POST that reads: the document asks the
  guard (a binding, :meth:`Guard._may_post`) with the request's method, URL and body, the
  safety policy judges it (:func:`~hiddenweb.safety.judge_script_request`: a GraphQL query, an
  API's ``…/search``), and only an allowed one becomes a request, which the route judges again
  from what Chromium sends (stat ``hiddenweb/browser/script_reads``;
  ``HIDDENWEB_BROWSER_SCRIPT_READS`` False: none). A single-page app that reads its lists
  by POST (an experiment tracker's ``runs/search``, a GraphQL client) otherwise shows none.
* **capture**: every same-host request a page's scripts make (``fetch``, XHR,
  ``EventSource``: :data:`CAPTURED`), GET or not, is recorded in :attr:`Render.captured`
  (the handler puts it in ``meta["hiddenweb_xhr"]``: the spider follows the GETs as requests
  of their own, source ``xhr``, and records the rest on the item, never sent); the 2xx
  reply of such a GET (no redirect) is sent to :class:`~hiddenweb.browser.replies.XhrReplies`,
  which answers the crawl's request of that URL with it instead of a second download.
* **fired events**: while :mod:`~hiddenweb.browser.events` fires the page's handlers
  (:attr:`Render.firing`), a request of the page that is not its main frame's navigation and
  whose URL the safety policy would not follow as a link (``/logout``, ``?action=delete``) is
  aborted (``hiddenweb/browser/events/unsafe_aborted``); main-frame navigations are aborted
  anyway (below) and their URLs judged by the spider as links.
* **robots.txt**: a request that the crawl's ``RobotsTxtMiddleware`` would refuse is aborted
  (``hiddenweb/browser/robots_aborted``).
* **headers**: navigations carry the Scrapy request's headers (scrapy-playwright's
  ``use_scrapy_headers``: ``Authorization``, cookies, the user agent), other requests the
  browser's own with Scrapy's user agent; as nothing off the host is let through, no header a
  user set for the crawl reaches another host.
* **navigations**: a render allows as many main-frame navigations as it started (the request's
  own, then one per submitting page action, :class:`Render`); any other navigation the page makes
  by itself (a timer, ``location.replace``, a form's script submit, a refresh) is aborted and its
  URL kept as a URL found (``hiddenweb/browser/self_navigations``), so the document stays put
  and its scripts' execution context is never destroyed under ``evaluate``/``content``.
* **the fetched body**: a rerender's own navigation is answered with ``meta["hiddenweb_body"]``
  (the page as plain HTTP fetched it), so the server is not asked twice.
* images (favicons too: a path ending in ``.ico``), media, fonts and styles are not loaded
  (they build no links). A stylesheet is answered with an empty one rather than failed: an app
  whose code is split loads each view's styles with its script and shows its error page when
  they fail (webpack's CSS chunks: MLflow's whole UI showed "Something went wrong").
* **scripts cached**: Playwright's routing turns Chromium's HTTP cache off, so every page a
  crawl renders fetched the site's scripts again (a tracker's 10 scripts on each of 77 renders:
  668 of its 893 requests). A same-host script GET answered 200 without redirect and without
  ``Cache-Control: no-store`` is kept (:class:`ScriptCache`, at most :data:`MAX_CACHED_SCRIPT`
  bytes each, :data:`SCRIPT_CACHE_BYTES` in all, least recently used out first) and answered
  from there to later pages (stat ``hiddenweb/browser/scripts_cached``), as Chromium's own
  cache would within one crawl; a page asking for a script another page's fetch is getting
  waits for that answer.
* a page between renders (idle in the pool) loads nothing.

Per page, once: its requests in flight are counted (:meth:`Guard.in_flight`: the page's
``request`` events less its ``requestfinished`` and ``requestfailed``); dialogs (``alert``,
``confirm``, ``prompt``) are dismissed and ``beforeunload`` accepted
(``hiddenweb/browser/dialogs``); ``window.open`` opens nothing and records its URL
(:data:`~hiddenweb.browser.scripts.RECORD_OPEN_JS`); a popup that opens anyway (a form's
``target=_blank``) is closed and its requests aborted by a context-wide route
(``hiddenweb/browser/popups``); a WebSocket connects only to the host being rendered. Service
workers are blocked by the handler (they would bypass page routes). With the lab knob
``browser_fresh_storage``, each document's ``localStorage`` and ``sessionStorage`` are its own,
empty at first (:data:`~hiddenweb.browser.scripts.FRESH_STORAGE_JS`): what one render stored is
not what the next render of the origin starts from.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy_playwright.headers import use_scrapy_headers

from hiddenweb.browser.config import CLOSE_TIMEOUT, IDLE_CAP
from hiddenweb.browser.replies import xhr_replied
from hiddenweb.browser.scripts import (
    FRESH_STORAGE_JS,
    MAY_POST,
    RECORD_EVENTS_JS,
    RECORD_OPEN_JS,
    RECORD_SHARED_WORKERS_JS,
    RECORD_TIMERS_JS,
    RECORD_WRITES_JS,
    SHARED_WORKERS,
)
from hiddenweb.config import lab
from hiddenweb.routepatterns import route_patterns
from hiddenweb.safety import SafetyPolicy

logger = logging.getLogger(__name__)

SKIPPED_RESOURCES = frozenset({"image", "media", "font", "stylesheet"})
MAX_FOUND = 100  # URLs found by one render's self-navigations, window.open and routes
MAX_CAPTURED = 100  # script requests (fetch, XHR) recorded by one render
#: a page's request in flight for longer than this is no longer waited for (:meth:`Guard.
#: in_flight`): a page action's whole wait for the network (IDLE_CAP) would not see it end
LONG_REQUEST = IDLE_CAP
#: the resource types of a script's own requests, recorded (:meth:`Render.capture`)
CAPTURED = frozenset({"fetch", "xhr", "eventsource"})
#: what a page sends once a form was submitted in it (:attr:`Render.sent`): a navigation, a
#: script's request, a beacon; not the images, styles and scripts an answer shown in the page
#: loads
SUBMIT_SENDS = CAPTURED | {"ping", "websocket"}
MAX_REDIRECTS = 10  # hops of one redirect chain followed by the guard; a longer one is aborted
MAX_DOCUMENT = 4 * 1024 * 1024  # bytes of a request's own HTML document kept to judge its render


#: headers of the wire's body, not of the decoded one kept: dropped from a kept script's
_BODY_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
# bytes of one script kept for later renders, at most: a single-page app's bundle is often a
# few MB (MLflow's main.js: 4.4 MB, fetched again by each of 42 renders under a 2 MB cap)
MAX_CACHED_SCRIPT = 8 * 1024 * 1024
SCRIPT_CACHE_BYTES = 32 * 1024 * 1024  # bytes of scripts kept in all


def skip_resource(request: Any) -> bool:
    """``PLAYWRIGHT_ABORT_REQUEST``-style predicate: no images (favicons too), media, fonts or
    styles."""
    return request.resource_type in SKIPPED_RESOURCES \
        or urlsplit(request.url).path.lower().endswith(".ico")


class ScriptCache:
    """Scripts answered to earlier renders, by URL: ``(status, headers, body)``, least
    recently used out first once over ``limit`` bytes."""

    def __init__(self, limit: int = SCRIPT_CACHE_BYTES) -> None:
        self.limit, self.size = limit, 0
        self.entries: OrderedDict[str, tuple[int, dict[str, str], bytes]] = OrderedDict()

    def get(self, url: str) -> tuple[int, dict[str, str], bytes] | None:
        entry = self.entries.get(url)
        if entry is not None:
            self.entries.move_to_end(url)
        return entry

    def put(self, url: str, status: int, headers: dict[str, str], body: bytes) -> bool:
        """Keep a script's answer; False when it may not be kept (too big, ``no-store``)."""
        if len(body) > MAX_CACHED_SCRIPT or url in self.entries \
                or "no-store" in headers.get("cache-control", "").lower():
            return False
        headers = {k: v for k, v in headers.items() if k.lower() not in _BODY_HEADERS}
        self.entries[url] = (status, headers, body)
        self.size += len(body)
        while self.size > self.limit:
            _, (_, _, old) = self.entries.popitem(last=False)
            self.size -= len(old)
        return True


@dataclass(eq=False)
class Render:
    """One request being rendered in a page."""

    request: Request
    navigations: int = 1  # main-frame navigations still allowed: the request's own first
    found: list[str] = field(default_factory=list)
    own_done: bool = False  # the request's own navigation was seen (method/body applied)
    # a main-frame navigation's URL -> the URL its redirect chain (followed here) ended at
    landed: dict[str, str] = field(default_factory=dict)
    # set when a self-navigation was aborted: a navigation started while the document was being
    # parsed stops the parser, and DOMContentLoaded / load never come
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    # (method, URL) of the same-host requests the page's scripts made (:data:`CAPTURED`)
    captured: list[tuple[str, str]] = field(default_factory=list)
    # while the crawler fires the page's events (hiddenweb.browser.events): a request the
    # safety policy would not follow as a link is aborted
    firing: bool = False
    # the HTML document (200) Chromium received for the request's own navigation, unless a
    # re-render (judged against its plain copy): what plain HTTP reads of it, against which a
    # direct render is judged (browser/renders.py)
    document: bytes | None = None
    dialogs: int = 0  # the dialogs (alert, confirm, prompt) its page opened
    # (METHOD, URL) of the form the crawler submits by page actions, once its submitting
    # action ran: the form's script sending it there is the submission the policy allowed
    form_send: tuple[str, str] | None = None
    # set by the crawler's submitting page action; then the requests the page sent: its
    # navigations and its scripts' requests (SUBMIT_SENDS), any host (submit_sent, the handler)
    submitted: bool = False
    sent: int = 0
    scripts: list[str] = field(default_factory=list)  # the script URLs its page loaded

    @property
    def host(self) -> str | None:
        return urlsplit(self.request.url).hostname

    def find(self, url: str) -> None:
        if url not in self.found and len(self.found) < MAX_FOUND:
            self.found.append(url)

    def capture(self, method: str, url: str) -> None:
        """A request the page's scripts made (``fetch``, XHR, ``EventSource``)."""
        entry = (method.upper(), url.split("#", 1)[0])
        if entry not in self.captured and len(self.captured) < MAX_CAPTURED:
            self.captured.append(entry)


class Guard:
    def __init__(self, crawler: Crawler, timeout: float, script_reads: bool = True) -> None:
        self.crawler = crawler
        self.script_reads = script_reads  # HIDDENWEB_BROWSER_SCRIPT_READS
        self.stats = crawler.stats
        self.timeout_ms = timeout * 1000
        self.renders: weakref.WeakKeyDictionary[Any, Render] = weakref.WeakKeyDictionary()
        #: per page, its requests in flight and when each was asked (loop time)
        self._flying: weakref.WeakKeyDictionary[Any, dict[Any, float]] = \
            weakref.WeakKeyDictionary()
        self._long: weakref.WeakSet[Any] = weakref.WeakSet()  # counted in long_requests
        #: per page, the script URLs of the shared workers its document started (quiet)
        self._workers: weakref.WeakKeyDictionary[Any, frozenset[str]] = \
            weakref.WeakKeyDictionary()
        #: lab knob browser_long_requests: requests long in flight are not waited for
        self.skip_long = bool(lab(crawler.settings, "browser_long_requests"))
        # lab knob browser_fresh_storage: each document's Web Storage its own (scripts.py)
        self.fresh_storage = bool(lab(crawler.settings, "browser_fresh_storage"))
        self._pages: weakref.WeakSet[Any] = weakref.WeakSet()
        self._contexts: weakref.WeakSet[Any] = weakref.WeakSet()
        self._robots: RobotsTxtMiddleware | None | bool = None
        self._user_agent = crawler.settings.get("USER_AGENT") or "Scrapy"
        self._warned_offsite = False
        self.safety = SafetyPolicy.from_settings(crawler.settings)
        self.scripts = ScriptCache()
        #: lab knob route_patterns: script URL -> the router patterns its text quotes, read once
        #: (hiddenweb.routepatterns), put on the meta of each render that loaded it
        self.route_patterns: dict[str, list[str]] | None = \
            {} if lab(crawler.settings, "route_patterns") else None
        self._loading: dict[str, asyncio.Future[None]] = {}  # script URLs being fetched

    # -- set-up ------------------------------------------------------------------------------
    async def install(self, page: Any, render: Render) -> None:
        """Route ``page``'s requests for ``render`` (again at each render: scrapy-playwright
        removes every ``**`` route of a page it is given back)."""
        self.renders[page] = render
        self._flying[page] = {}  # a new document: what the last one asked is over
        self._workers.pop(page, None)
        if page not in self._pages:
            self._pages.add(page)
            page.set_default_timeout(self.timeout_ms)
            page.on("request", lambda request: self._asked(page, request))
            for event in ("requestfinished", "requestfailed"):
                page.on(event, lambda request: self._flying.get(page, {}).pop(request, None))
            page.on("dialog", lambda dialog: self._dialog(page, dialog))
            page.on("popup", self._popup)
            # asked by RECORD_WRITES_JS, in every frame of the page (a read, a form's send)
            await page.expose_binding(MAY_POST, self._may_post)
            await page.add_init_script(RECORD_WRITES_JS)  # SAFETY: before any page script
            await page.add_init_script(RECORD_OPEN_JS)
            await page.add_init_script(RECORD_EVENTS_JS)
            await page.add_init_script(RECORD_TIMERS_JS)
            if self.skip_long:
                await page.add_init_script(RECORD_SHARED_WORKERS_JS)
            if self.fresh_storage:
                await page.add_init_script(FRESH_STORAGE_JS)
        context = page.context
        if context not in self._contexts:
            self._contexts.add(context)
            await context.route("**", self._context_route)
            await context.route_web_socket("**", self._web_socket)
        await page.route("**", lambda route, request: self._route(page, route, request))

    def begin(self, page: Any, render: Render) -> None:
        """A render on a page already routed (the same-document write)."""
        self.renders[page] = render

    def end(self, page: Any) -> None:
        self.renders.pop(page, None)

    def _asked(self, page: Any, request: Any) -> None:
        """A request of ``page`` (the ``request`` event): in flight from now."""
        self._flying.setdefault(page, {})[request] = asyncio.get_running_loop().time()

    def in_flight(self, page: Any) -> int:
        """The page's requests asked and neither answered nor failed yet; with the lab knob
        ``browser_long_requests`` (on), not those that may never end as the page sees them,
        for which every wait for the page's network ran to its cap (each fired event's, each
        scroll step's, a route's): a shared worker's script, which Chromium reports as the
        page's request and finishes in the worker's own target (Debian's Chromium 156,
        Playwright 1.65; its URL is recorded by :data:`~hiddenweb.browser.scripts.
        RECORD_SHARED_WORKERS_JS` and read at each :meth:`quiet`), and any request in flight
        for :data:`LONG_REQUEST` s or more (a long poll). (An ``EventSource``'s stream is
        answered at once: :meth:`_decide`.)
        An MLflow page starts a shared worker at load, and each render on a page of a new
        browser context waited out every wait (later pages of the context connect to the
        worker already running). Stat ``hiddenweb/browser/long_requests``: requests no
        longer waited for."""
        flying = self._flying.get(page)
        if not flying:
            return 0
        if not self.skip_long:
            return len(flying)
        since = asyncio.get_running_loop().time() - LONG_REQUEST
        workers = self._workers.get(page, frozenset())
        n = 0
        for request, asked in list(flying.items()):
            if asked > since and request.url not in workers:
                n += 1
            elif request not in self._long:
                self._long.add(request)
                self.stats.inc_value("hiddenweb/browser/long_requests")
                logger.debug("Not waiting for %s %s (%s)", request.method, request.url,
                             "a shared worker's script" if request.url in workers
                             else f"in flight for {LONG_REQUEST:.0f} s")
        return n

    async def _read_workers(self, page: Any) -> None:
        """The shared workers' script URLs the page's document recorded (:meth:`in_flight`),
        read only while a script request of the page whose URL is not among them is in flight
        (a worker's script is a ``script`` request): not a round trip to the page before every
        wait of every fired event."""
        if not self.skip_long:
            return
        known = self._workers.get(page, frozenset())
        if not any(r.resource_type == "script" and r.url not in known
                   for r in self._flying.get(page, ())):
            return
        try:
            urls = await page.evaluate(f"() => window.{SHARED_WORKERS} || []")
        except PlaywrightError:  # navigating, or closed: the next wait reads them
            return
        if isinstance(urls, list) and urls:
            self._workers[page] = frozenset(u for u in urls if isinstance(u, str))

    async def quiet(self, page: Any, seconds: float, quiet: float, poll: float,
                    stopped: asyncio.Event | None = None) -> None:
        """Until none of ``page``'s requests was in flight for ``quiet`` s (looked at every
        ``poll`` s), at most ``seconds``; sooner once ``stopped`` is set or the page closed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        await self._read_workers(page)
        quiet_since = loop.time()
        while not (stopped is not None and stopped.is_set()) and not page.is_closed():
            now = loop.time()
            if self.in_flight(page):
                quiet_since = now
            elif now - quiet_since >= quiet:
                return
            if now >= deadline:
                return
            await asyncio.sleep(poll)

    def _reads(self, method: str, url: str, body: str | None) -> bool:
        """Whether a script's non-GET request may be sent: a POST that reads, by the safety
        policy (:func:`~hiddenweb.safety.judge_script_request`), unless
        ``HIDDENWEB_BROWSER_SCRIPT_READS`` is off."""
        return self.script_reads and self.safety.script_request(method, url, body).allowed

    def _form_sends(self, render: Render, method: str, url: str) -> bool:
        """Whether a script's non-GET request is the submission of the form the crawler is
        submitting by page actions (:attr:`Render.form_send`, set by its submitting action):
        its method, to its own action (its button's ``formaction``). That form was judged by
        the safety policy, and a page whose script sends it with ``fetch`` (a form handled in
        the page) sent nothing before: its POST was refused as the page's own write."""
        sent = render.form_send
        if sent is None or method.upper() != sent[0] or not _same(url, sent[1]):
            return False
        self.stats.inc_value("hiddenweb/browser/form_sends")
        logger.debug("A script's %s %s sends the form being submitted: sent", method, url)
        return True

    def _may_post(self, source: dict[str, Any], method: Any, url: Any, body: Any) -> bool:
        """The binding :data:`~hiddenweb.browser.scripts.MAY_POST` that a document's write
        guard asks before a script's non-GET request becomes one: only for a page being
        rendered, to its own host, and the submission of the form being submitted
        (:meth:`_form_sends`) or a request that reads (:meth:`_reads`)."""
        render = self.renders.get(source.get("page"))
        url = str(url)
        if render is None or urlsplit(url).hostname != render.host:
            return False
        if self._form_sends(render, str(method), url):
            return True
        if not self._reads(str(method), url, body if isinstance(body, str) else None):
            return False
        self.stats.inc_value("hiddenweb/browser/script_reads")
        logger.debug("A script's %s %s reads: sent", method, url)
        return True

    # -- routing -----------------------------------------------------------------------------
    async def _route(self, page: Any, route: Any, request: Any) -> None:
        try:
            await self._decide(page, route, request)
        except PlaywrightError as exc:  # the page or browser went away meanwhile
            logger.debug("Route of %s not completed: %s", request.url, exc)

    async def _decide(self, page: Any, route: Any, request: Any) -> None:
        render = self.renders.get(page)
        url = request.url
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            await route.fallback()
            return
        navigation = request.is_navigation_request()
        if render is None:  # idle in the pool: a leftover timer or poll
            await route.abort("aborted")
            return
        if render.submitted and (navigation or request.resource_type in SUBMIT_SENDS):
            render.sent += 1  # the submission talked to a server (hiddenweb.forms.crawl)
        if parts.hostname != render.host:
            self._offsite(url, render)
            await route.abort("aborted" if navigation else "blockedbyclient")
            return
        main = navigation and _frame_is_main(request, page)
        if main:
            if render.navigations <= 0:
                self.stats.inc_value("hiddenweb/browser/self_navigations")
                logger.debug("Self-navigation of %s to %s kept as a URL found",
                             render.request.url, url)
                if request.method == "GET":
                    render.find(url)
                await route.abort("aborted")
                render.stopped.set()
                return
            render.navigations -= 1
        if skip_resource(request):
            if request.resource_type == "stylesheet":  # answered empty, not failed (below)
                await route.fulfill(status=200, content_type="text/css", body="")
                return
            await route.abort("blockedbyclient")
            return
        if render.firing and not main and not self.safety.link(url).allowed:
            # SAFETY: a fired event's request (fetch, XHR, a frame) judged as a link
            self.stats.inc_value("hiddenweb/browser/events/unsafe_aborted")
            await route.abort("aborted" if navigation else "blockedbyclient")
            return
        if not navigation and request.resource_type in CAPTURED:
            render.capture(request.method, url)
        if self.skip_long and request.resource_type == "eventsource":
            # a server-sent event stream never ends: fetched here (route.fetch reads a body
            # whole) it was held until the guard's timeout, the page's every wait for the
            # network ran to its cap, and its route was still pending when the page closed.
            # Answered 204 instead, which tells an EventSource to stop, not to reconnect (the
            # HTML standard's server-sent events); the page's URL is still recorded
            self.stats.inc_value("hiddenweb/browser/streams_closed")
            await route.fulfill(status=204, body="")
            return
        if not navigation and request.method not in ("GET", "HEAD", "OPTIONS") \
                and not self._form_sends(render, request.method, url) \
                and not self._reads(request.method, url, _post_text(request)):
            # SAFETY: a page's own script writing (an XHR or fetch PUT, POST, DELETE: a sync, a
            # "seen" marker, an autosave) while the crawler renders it: the crawler would be
            # the writer
            self.stats.inc_value("hiddenweb/browser/writes_aborted")
            logger.debug("Chromium's %s %s (a script's write) aborted", request.method, url)
            await route.abort("blockedbyclient")
            return
        if not await self._robots_allow(url, render):
            self.stats.inc_value("hiddenweb/browser/robots_aborted")
            await route.abort("aborted" if navigation else "blockedbyclient")
            return
        own = main and not render.own_done and _same(url, render.request.url)
        if own:
            render.own_done = True
            body = render.request.meta.get("hiddenweb_body")
            if body is not None and request.method == "GET":
                headers = render.request.meta.get("hiddenweb_body_headers") \
                    or {"Content-Type": "text/html"}
                await route.fulfill(status=200, headers=headers, body=body)
                return
        script = not navigation and request.method == "GET" \
            and request.resource_type == "script"
        if script:
            if url not in render.scripts and len(render.scripts) < MAX_CAPTURED:
                render.scripts.append(url)
            loading = self._loading.get(url)
            if loading is not None:  # another page's fetch of it is out: its answer first
                await asyncio.shield(loading)
            cached = self.scripts.get(url)
            if cached is not None:
                self.stats.inc_value("hiddenweb/browser/scripts_cached")
                status, headers, body = cached
                await route.fulfill(status=status, headers=headers, body=body)
                return
            if loading is None:
                self._loading[url] = asyncio.get_running_loop().create_future()
                try:
                    await self._forward(page, route, request, render, main, own, keep=True)
                finally:
                    self._loading.pop(url).set_result(None)
                return
        reply = not navigation and request.method == "GET" \
            and request.resource_type in CAPTURED
        await self._forward(page, route, request, render, main, own, reply=reply)

    async def _forward(self, page: Any, route: Any, request: Any, render: Render, main: bool,
                       own: bool, keep: bool = False, reply: bool = False) -> None:
        """Fetch ``request`` for the page (redirects followed here) and answer it; ``keep``: a
        script GET, kept in :attr:`scripts` when answered 200 without a redirect; ``reply``: a
        captured script GET, whose 2xx reply without a redirect is sent to the crawl
        (:data:`~hiddenweb.browser.replies.xhr_replied`: its own request of the URL is answered
        with it, not downloaded again)."""
        scrapy_request = render.request
        headers = await use_scrapy_headers(
            browser_type_name="chromium", playwright_request=request,
            scrapy_request_data={"method": scrapy_request.method, "url": scrapy_request.url,
                                 "headers": scrapy_request.headers, "body": scrapy_request.body,
                                 "encoding": scrapy_request.encoding})
        kwargs: dict[str, Any] = {}
        navigation = request.is_navigation_request()
        if navigation:  # a form's POST keeps its own content type
            headers = {**await request.all_headers(), **headers}
        if own:
            if scrapy_request.method.upper() != request.method.upper():
                kwargs["method"] = scrapy_request.method
            if scrapy_request.body:
                kwargs["post_data"] = scrapy_request.body
        response = await route.fetch(headers=headers, max_redirects=0,
                                     timeout=self.timeout_ms, **kwargs)
        url, method = request.url, (kwargs.get("method") or request.method).upper()
        data = kwargs.get("post_data", request.post_data_buffer)
        hops = 0
        while 300 <= response.status < 400 and response.headers.get("location"):
            target = urljoin(url, response.headers["location"])
            refused = None
            if urlsplit(target).scheme not in ("http", "https") \
                    or urlsplit(target).hostname != render.host:
                self._offsite(target, render)
                refused = "offsite"
            elif hops == MAX_REDIRECTS:
                refused = "too many redirects"
            elif not await self._robots_allow(target, render):
                self.stats.inc_value("hiddenweb/browser/robots_aborted")
                refused = "robots.txt"
            if refused:
                logger.debug("Redirect of %s to %s not followed (%s)", request.url, target,
                             refused)
                await route.abort("aborted" if navigation else "blockedbyclient")
                return
            if response.status == 303 or (response.status in (301, 302)
                                          and method not in ("GET", "HEAD")):
                method, data = "GET", None  # as a browser does
                headers = {k: v for k, v in headers.items()
                           if k.lower() not in ("content-type", "content-length")}
            await response.dispose()
            response = await page.request.fetch(target, method=method, headers=headers,
                                                data=data, max_redirects=0,
                                                timeout=self.timeout_ms)
            url, hops = target, hops + 1
        if main and url != request.url:
            render.landed[request.url] = url
        if own and main and response.status == 200 \
                and not render.request.meta.get("hiddenweb_rerender") \
                and "html" in (response.headers.get("content-type") or ""):
            body = await _body(response)
            if body is not None and len(body) <= MAX_DOCUMENT:
                render.document = body
        keep = keep and response.status == 200 and not hops
        reply = reply and 200 <= response.status < 300 and not hops
        body = await _body(response) if keep or reply else None
        if body is None:
            await route.fulfill(response=response)
            return
        if keep:
            self.scripts.put(request.url, response.status, response.headers, body)
            if self.route_patterns is not None and request.url not in self.route_patterns:
                self.route_patterns[request.url] = route_patterns(
                    body.decode("utf-8", "replace"))
        if reply:
            self.crawler.signals.send_catch_log(
                xhr_replied, url=request.url, status=response.status,
                headers=dict(response.headers), body=body)
        await route.fulfill(response=response, body=body)

    def _offsite(self, url: str, render: Render) -> None:
        self.stats.inc_value("hiddenweb/browser/offsite_aborted")
        if not self._warned_offsite:
            self._warned_offsite = True
            logger.info("Chromium asked for %s, off the crawl's host %s: aborted (this and all "
                        "others: stat hiddenweb/browser/offsite_aborted)", url, render.host)

    async def _robots_allow(self, url: str, render: Render) -> bool:
        if self._robots is None:
            self._robots = False
            if self.crawler.settings.getbool("ROBOTSTXT_OBEY") and self.crawler.engine:
                for mw in self.crawler.engine.downloader.middleware.middlewares:
                    if isinstance(mw, RobotsTxtMiddleware):
                        self._robots = mw
        if not self._robots:
            return True
        parser = await self._robots.robot_parser(Request(url))  # type: ignore[union-attr]
        if parser is None:
            return True
        agent = render.request.headers.get(b"User-Agent")
        return parser.allowed(url, agent.decode() if agent else self._user_agent)

    # -- what a page does besides requests -------------------------------------------------
    async def _dialog(self, page: Any, dialog: Any) -> None:
        self.stats.inc_value("hiddenweb/browser/dialogs")
        render = self.renders.get(page)
        if render is not None:
            render.dialogs += 1
        try:
            if dialog.type == "beforeunload":
                await dialog.accept()
            else:
                await dialog.dismiss()
        except PlaywrightError:
            pass

    async def _popup(self, popup: Any) -> None:
        self.stats.inc_value("hiddenweb/browser/popups")
        try:
            await asyncio.wait_for(popup.close(), CLOSE_TIMEOUT)
        except (TimeoutError, PlaywrightError):
            pass

    async def _web_socket(self, ws: Any) -> None:
        """A WebSocket connects only to a host a page is being rendered for."""
        if urlsplit(ws.url).hostname in {r.host for r in list(self.renders.values())}:
            ws.connect_to_server()
            return
        self.stats.inc_value("hiddenweb/browser/offsite_aborted")
        try:
            await ws.close()
        except PlaywrightError:
            pass

    async def _context_route(self, route: Any, request: Any) -> None:
        """Requests of pages that are not the pool's (popups): none goes out."""
        try:
            await route.abort("blockedbyclient")
        except PlaywrightError:
            pass


def _post_text(request: Any) -> str | None:
    """A request's body as text (empty when it has none), None when it is not UTF-8 text."""
    try:
        data = request.post_data_buffer
    except PlaywrightError:
        return None
    if not data:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


async def _body(response: Any) -> bytes | None:
    """The body of a fetched ``response``, or None when it cannot be read (the page or its
    browser went away)."""
    try:
        return await response.body()
    except PlaywrightError:
        return None


def _frame_is_main(request: Any, page: Any) -> bool:
    try:
        return request.frame == page.main_frame
    except PlaywrightError:  # a service worker's request
        return False


def _same(a: str, b: str) -> bool:
    """The same URL, fragments aside (Chromium's request of ``/#/runs/7`` is ``/``)."""
    return a.split("#", 1)[0].rstrip("/") == b.split("#", 1)[0].rstrip("/")
