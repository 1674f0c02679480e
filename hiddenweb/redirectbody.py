"""Redirect bodies: the links a redirect's own HTML shows, crawled.

A ``3xx`` reply may carry a whole page besides its ``Location`` ("This page has moved to
<a>here</a>", or a page a script went on rendering after it sent the header: *execution after
redirect*). Scrapy's ``RedirectMiddleware`` follows the ``Location`` and drops that body, so its
links are never seen. This downloader middleware sits before it (its ``process_response`` runs
first) and reads the same-host ``<a>``/``<area>`` URLs of an HTML redirect body (gzip and deflate
decompressed here: Scrapy's ``HttpCompressionMiddleware`` runs after the redirect), but the
``Location`` itself. The spider makes their requests (``redirect_body_requests(response,
urls)`` of :class:`hiddenweb.spiders.hwdla.HwdlaSpider`: source ``redirect-body``, judged by
the safety policy like every link) and this middleware schedules them at once: the redirect's
own target may be a page already seen, which the dupefilter drops with whatever it carried.
A spider without that method gets nothing from here. Hosts are compared without ports.

Setting: ``HIDDENWEB_URL_SOURCES`` (off: ``NotConfigured``). Stats:
``hiddenweb/redirectbody/replies`` (redirects whose body had such links), and
``hiddenweb/sources/redirect-body`` (the spider's, each URL it asked for).
"""

from __future__ import annotations

import gzip
import io
import logging
import zlib
from urllib.parse import urldefrag, urljoin, urlsplit

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.linkextractors import LinkExtractor

from hiddenweb import defaults

logger = logging.getLogger(__name__)

MAX_LINKS = 100  # of one redirect body
HTML_TYPES = (b"text/html", b"application/xhtml+xml")
MAX_BODY = 1 << 20  # bytes of a redirect body read, once decompressed


class RedirectBodyLinks:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.extractor = LinkExtractor(tags=("a", "area"), attrs=("href",), deny_extensions=())

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedirectBodyLinks:
        if not crawler.settings.getbool("HIDDENWEB_URL_SOURCES",
                                        defaults.HIDDENWEB_URL_SOURCES):
            raise NotConfigured("HIDDENWEB_URL_SOURCES is off")
        return cls(crawler)

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Response:
        if not 300 <= response.status < 400 or not response.body:
            return response
        ctype = response.headers.get(b"Content-Type", b"").split(b";")[0].strip().lower()
        if ctype not in HTML_TYPES:
            return response
        location = response.headers.get(b"Location")
        if not location:
            return response
        target = urldefrag(urljoin(response.url, location.decode("latin-1")))[0]
        host = urlsplit(request.url).hostname
        try:
            page = _decoded(response, request)
            links = self.extractor.extract_links(page)
        except (ValueError, AttributeError, OSError, zlib.error):  # not HTML, bad compression
            return response
        urls: list[str] = []
        for link in links:
            url = urldefrag(link.url)[0]
            if urlsplit(url).hostname == host and url != target and url not in urls:
                urls.append(url)
        make = getattr(spider or self.crawler.spider, "redirect_body_requests", None)
        if urls and make is not None:
            self.stats.inc_value("hiddenweb/redirectbody/replies")
            logger.debug("Redirect %s -> %s shows %d other links", response.url, target,
                         len(urls))
            for follow in make(page, urls[:MAX_LINKS]):
                self.crawler.engine.crawl(follow)
        return response


def _decoded(response: Response, request: Request) -> HtmlResponse:
    """``response`` as an HTML page tied to ``request`` (the engine ties a response only after
    the middlewares), its body decompressed (``gzip``/``deflate``): this middleware runs before
    Scrapy's ``HttpCompressionMiddleware`` (590) has decompressed anything, as it must run before
    ``RedirectMiddleware`` (600). Other encodings raise ``ValueError``."""
    encoding = response.headers.get(b"Content-Encoding", b"").strip().lower()
    body = response.body
    if encoding in (b"gzip", b"x-gzip"):
        body = gzip.GzipFile(fileobj=io.BytesIO(body)).read(MAX_BODY)
    elif encoding == b"deflate":
        try:
            body = zlib.decompressobj().decompress(body, MAX_BODY)
        except zlib.error:  # raw deflate, as some servers send it
            body = zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, MAX_BODY)
    elif encoding not in (b"", b"identity"):
        raise ValueError(f"redirect body encoded {encoding!r}")
    return HtmlResponse(response.url, status=response.status, headers=response.headers,
                        body=body[:MAX_BODY], request=request)
