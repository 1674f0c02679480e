"""A script's GET that Chromium already received is not downloaded again: :class:`XhrReplies`.

When a page is rendered, its scripts' same-host requests (``fetch``, XHR) go through the
crawl's guard (:mod:`hiddenweb.browser.guard`), which fetches them for Chromium; the GETs among
them join the frontier as requests of their own (source ``xhr``, the spider's
``xhr_requests``), their replies read by type (issue 24: request capture). Without this
component each such URL was fetched twice, once for the page and once for the crawl: on a
documentation site whose pages are Markdown fetched by script, 27 of a crawl's 112 requests.

The guard sends :data:`xhr_replied` with the 2xx reply of each such GET that came without a
redirect (its status, headers and body; at most :data:`MAX_REPLY` bytes each). This
downloader middleware keeps them, at most :data:`MAX_KEPT_BYTES` in all (the oldest out first:
a reply not in the store is simply downloaded), and answers the crawl's own request of that URL
with the kept reply (one answer each, then forgotten) when the request is one the spider made
from the capture (meta ``hiddenweb_source`` ``"xhr"``) and is a GET: the reply is what the
site sent to the page's script, with the page's cookies and headers, so it is what the crawl
would have read. Answered after the other middlewares' ``process_request`` (robots.txt, scope,
the trap guard, Scrapy's ``DownloaderStats``: the request is counted, as Scrapy's
``HttpCacheMiddleware`` counts a cached one), and before the download handler; every
``process_response`` runs on the answer as on a download's (its flags carry
``"xhr-reply"``).

Setting: ``HIDDENWEB_BROWSER_XHR_REPLIES`` (default on; off, or ``HIDDENWEB_BROWSER=never``:
``NotConfigured``). Stats: ``hiddenweb/browser/xhr_replies_kept`` (replies the guard gave),
``hiddenweb/browser/xhr_replies_used`` (requests answered from them: downloads saved).
"""

from __future__ import annotations

from collections import OrderedDict

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes
from w3lib.url import canonicalize_url

from hiddenweb import defaults
from hiddenweb.browser.config import BrowserConfig

#: sent by the guard with ``url``, ``status``, ``headers`` (a dict) and ``body`` (bytes, as
#: Chromium got it: decoded)
xhr_replied = object()
MAX_REPLY = 1 << 20  # bytes of one reply kept, at most
MAX_KEPT_BYTES = 32 << 20  # bytes of replies kept at once, at most
#: headers that described the bytes on the wire, not the decoded body that is kept
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
XHR_SOURCE = "xhr"


def reply_key(url: str) -> str:
    """The key of ``url`` in the store: canonical (query sorted, escapes normalised), no
    fragment, so that Chromium's and Scrapy's spellings of one URL meet."""
    return canonicalize_url(url, keep_fragments=False)


class XhrReplies:
    """Downloader middleware (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        self.kept: OrderedDict[str, tuple[int, dict[str, str], bytes]] = OrderedDict()
        self.size = 0
        crawler.signals.connect(self.replied, signal=xhr_replied)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> XhrReplies:
        settings = crawler.settings
        if BrowserConfig.from_settings(settings).mode == "never":
            raise NotConfigured("HIDDENWEB_BROWSER is never: no page is rendered")
        if not settings.getbool("HIDDENWEB_BROWSER_XHR_REPLIES",
                                defaults.HIDDENWEB_BROWSER_XHR_REPLIES):
            raise NotConfigured("HIDDENWEB_BROWSER_XHR_REPLIES is off")
        return cls(crawler)

    def replied(self, url: str, status: int, headers: dict[str, str], body: bytes) -> None:
        """:data:`xhr_replied`: keep a 2xx reply of a script's GET (not a bigger one than
        :data:`MAX_REPLY`)."""
        if not 200 <= status < 300 or len(body) > MAX_REPLY:
            return
        key = reply_key(url)
        old = self.kept.pop(key, None)
        if old is not None:
            self.size -= len(old[2])
        clean = {k: v for k, v in headers.items() if k.lower() not in _WIRE_HEADERS}
        self.kept[key] = (status, clean, body)
        self.size += len(body)
        while self.size > MAX_KEPT_BYTES and self.kept:
            _, (_, _, dropped) = self.kept.popitem(last=False)
            self.size -= len(dropped)
        self.stats.inc_value("hiddenweb/browser/xhr_replies_kept")

    def process_request(self, request: Request, spider: Spider | None = None) -> Response | None:
        if request.meta.get("hiddenweb_source") != XHR_SOURCE or request.method != "GET" \
                or request.meta.get("playwright") or not self.kept:
            return None
        kept = self.kept.pop(reply_key(request.url), None)
        if kept is None:
            return None
        status, headers, body = kept
        self.size -= len(body)
        self.stats.inc_value("hiddenweb/browser/xhr_replies_used")
        scrapy_headers = Headers(headers)
        cls = responsetypes.from_args(headers=scrapy_headers, url=request.url, body=body)
        return cls(url=request.url, status=status, headers=scrapy_headers, body=body,
                   request=request, flags=["xhr-reply"])
