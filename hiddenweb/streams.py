"""Streams are not pages: a download whose reply is an endless stream stops at its headers.

A server-sent event stream (``text/event-stream``) or a replacing multipart stream
(``multipart/x-mixed-replace``: a camera's MJPEG, a push feed) is never finished by the server.
Scrapy reads a body whole, so such a URL, met as a script's quoted path or as a request a page
made in Chromium (source ``xhr``), held a download slot until ``DOWNLOAD_TIMEOUT`` and was then
retried, each time as long, and lost: a test page's ``/events`` cost its crawl 2 × 20 s. This
extension listens to Scrapy's ``headers_received`` signal and stops such a download there
(``StopDownload(fail=False)``): the spider gets the response with the body read so far (none),
flagged ``download_stopped``, and the crawl goes on. (In Chromium, a page's ``EventSource`` is
answered by the guard: :mod:`hiddenweb.browser.guard`.)

Setting ``HIDDENWEB_STOP_STREAMS`` (on; off: ``NotConfigured``). Stat
``hiddenweb/streams_stopped``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Headers

from hiddenweb import defaults

logger = logging.getLogger(__name__)

#: the media types of replies that never end
STREAM_TYPES = frozenset({b"text/event-stream", b"multipart/x-mixed-replace"})


def is_stream(headers: Headers) -> bool:
    """Whether ``headers`` (a reply's) announce an endless stream (:data:`STREAM_TYPES`)."""
    ctype = headers.get(b"Content-Type") or b""
    return ctype.split(b";", 1)[0].strip().lower() in STREAM_TYPES


class StopStreams:
    """The extension (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StopStreams:
        if not crawler.settings.getbool("HIDDENWEB_STOP_STREAMS",
                                        defaults.HIDDENWEB_STOP_STREAMS):
            raise NotConfigured("HIDDENWEB_STOP_STREAMS is off")
        ext = cls(crawler)
        crawler.signals.connect(ext.headers_received, signal=signals.headers_received)
        return ext

    def headers_received(self, headers: Headers, body_length: Any, request: Request,
                         spider: Spider) -> None:
        if is_stream(headers):
            self.stats.inc_value("hiddenweb/streams_stopped")
            logger.debug("Stopped the download of %s: a stream (%s)", request.url,
                         headers.get(b"Content-Type", b"").decode("latin-1"))
            raise StopDownload(fail=False)
