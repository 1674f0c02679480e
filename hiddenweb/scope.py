"""Redirect scope: a redirect never takes a ``dont_filter`` request off the crawl's hosts.

Scrapy's ``OffsiteMiddleware`` lets every ``dont_filter=True`` request through, and its
``RedirectMiddleware`` gives each redirect hop the request's ``dont_filter``: a plain-HTTP request
the crawl makes with ``dont_filter`` (a recrawl replay, a browser request fetched again over
plain HTTP) that the site redirects to another host was followed there. This downloader
middleware drops such a hop (``IgnoreRequest``) unless its host is one of the spider's
``allowed_domains`` (a subdomain included, as Scrapy's check), or, for a spider with none, the
host of the chain's first request. Hosts are compared without ports. ``allow_offsite`` in a
request's meta lets it through, as Scrapy's does. Chromium's own requests are held to the host
by :mod:`hiddenweb.browser.guard`.

Stats: ``hiddenweb/scope/redirects_refused``.
"""

from __future__ import annotations

import logging

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

logger = logging.getLogger(__name__)


class RedirectScope:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedirectScope:
        return cls(crawler)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        chain = request.meta.get("redirect_urls")
        if not chain or not request.dont_filter or request.meta.get("allow_offsite"):
            return  # not a redirect hop, or one Scrapy's OffsiteMiddleware checks
        spider = spider or self.crawler.spider
        domains = [d.lower().split(":")[0] for d in getattr(spider, "allowed_domains", None) or ()
                   if d]
        host = urlparse_cached(request).hostname or ""
        if domains:
            allowed = any(host == d or host.endswith(f".{d}") for d in domains)
        else:
            allowed = host == (urlparse_cached(Request(chain[0])).hostname or "")
        if allowed:
            return
        self.crawler.stats.inc_value("hiddenweb/scope/redirects_refused")
        logger.info("Not following a redirect off the crawl's hosts: %s -> %s",
                    chain[-1], request.url)
        raise IgnoreRequest(f"redirect off the crawl's hosts: {host!r}")
