"""The item the ``hwdla`` spider yields, one per downloaded page (JSON lines with ``-O``), and
where it is built (:func:`page_item`, :func:`failed_item`).

Schema (every key but ``lostsheep`` is always present; ``null`` where it does not apply):

=================  =========  ==============================================================
key                type       meaning
=================  =========  ==============================================================
url                str        the URL requested (for a POST form submission: the form action;
                              for a submission made in Chromium: the page's URL afterwards)
final_url          str        the URL of the response, after redirects
method             str        ``GET`` or ``POST``
status             int|null   HTTP status; null when the download failed (see ``error``)
error              str|null   why the download failed (DNS, refused, timeout …)
depth              int        actions (links + submissions) from the seed
referrer           str|null   URL of the page whose link or form led here
source             str|null   what named the URL: ``seed``, ``link`` (an anchor, area or frame),
                              ``navigation`` (the browser saw the page go there), ``well-known``
                              (robots.txt, sitemap.xml), or a URL source of
                              :mod:`hiddenweb.urlsources` (``header``, ``refresh``, ``css``,
                              ``script``, ``sitemap``, ``json`` …); null for a form submission
reached_by         dict       ``{"kind": "seed"|"link"|"form", "form": null|{"action", "method",
                              "fields": {name: value}, "form_class": str}}``
form_only          bool       true when the chain of actions from the seed contains a form
                              submission: the page was reached only through a form
title              str|null   the page's ``<title>``
fingerprint        str|null   SHA-1 of the page's visible text (whitespace-normalised) and of
                              the targets of its links and forms and the paths its URL sources
                              name: equal for repeats only (any other reply: SHA-1 of its text,
                              or of its bytes, and of the paths it names)
fetch_seconds      float      download latency (request sent → response received)
fetched_at         float      UNIX time the response was received
action_score       float|null the DLA scheduler's score of the action when it was chosen
                              (null under another scheduler); HWDLA fig. 4 is drawn from it
downloads          int        pages this crawl had downloaded when this one arrived (this one
                              included): the x axis of "hidden pages found per download" even
                              when repeats are not emitted as items
content_type       str|null   the response's Content-Type
script_requests    list|null  requests the page's scripts made while Chromium rendered it
                              (``fetch``, XHR): ``[{"method", "url"}]``; the GETs are followed
                              as requests of their own (``source`` ``xhr``), the others were
                              aborted, never sent; null when the page was not rendered
cache_control      str|null   the response's Cache-Control header (freshness, for the store)
expires            str|null   the response's Expires header
lostsheep          dict       find mode only (``-a find=1``), on the one item it yields:
                              ``{"score": f (sim, bfs: the cosine), "ratio": f/sum f,
                              "reason": "threshold"|"maxdepth"|"stuck", "path": [URLs stood
                              on], "rounds", "strategy": "ls2f"|"sim"|"bfs", "d": the paper's
                              D (start page excluded), "downloads": every fetch}``
=================  =========  ==============================================================
"""

from __future__ import annotations

import hashlib
import time
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from hiddenweb.pagetext import fingerprint, page_fingerprint
from hiddenweb.urlsources import reply_type


class PageItem(scrapy.Item):
    url = scrapy.Field()
    final_url = scrapy.Field()
    method = scrapy.Field()
    status = scrapy.Field()
    error = scrapy.Field()
    depth = scrapy.Field()
    referrer = scrapy.Field()
    reached_by = scrapy.Field()
    source = scrapy.Field()
    form_only = scrapy.Field()
    title = scrapy.Field()
    fingerprint = scrapy.Field()
    fetch_seconds = scrapy.Field()
    fetched_at = scrapy.Field()
    downloads = scrapy.Field()
    action_score = scrapy.Field()
    content_type = scrapy.Field()
    script_requests = scrapy.Field()
    cache_control = scrapy.Field()
    expires = scrapy.Field()
    lostsheep = scrapy.Field()


def page_item(response: Response, text: str | None, downloads: int,
              named: list[str] | None = None) -> PageItem:
    """The item of a downloaded page; ``text`` is its visible text
    (:func:`hiddenweb.pagetext.visible_text`, or the whole text of JSON / plain text);
    ``named``: the URLs its URL sources name (:mod:`hiddenweb.urlsources`), whose paths are
    part of its fingerprint (two pages that only differ in the paths their scripts or comments
    name are two pages)."""
    meta = response.meta
    request = response.request
    title = None
    if reply_type(response) != "html":  # JSON, XML, text, PDF, binary: by its text or bytes
        text_fp = fingerprint(text) if text is not None \
            else hashlib.sha1(response.body).hexdigest()
    else:
        try:
            title = response.xpath("normalize-space(//title)").get() or None
            text_fp = page_fingerprint(text or "", response.selector)
        except (ValueError, AttributeError):  # not parsable after all
            text_fp = fingerprint(text) if text is not None else None
    if named and text_fp is not None:  # their paths: a self-reference with the page's own
        # query (Datasette's <link rel=alternate href="cars.json?_facet=…">) would make every
        # variant of a page new
        text_fp = fingerprint("\n".join([text_fp, *sorted({urlsplit(u).path for u in named})]))
    headers = response.headers
    by_browser = bool(meta.get("hiddenweb_browser_form"))  # the page the actions led to
    method = request.method if request else "GET"
    if by_browser:  # a navigation to the form's action keeps its method; else a GET
        form = meta.get("hiddenweb_reached_by", {}).get("form") or {}
        method = form.get("method", "GET") if response.url == form.get("action") else "GET"
    return PageItem(
        url=response.url if by_browser or not request else request.url,
        final_url=response.url,
        method=method,
        status=response.status,
        error=None,
        depth=meta.get("depth", 0),
        referrer=header(request.headers, b"Referer") if request else None,
        reached_by=meta.get("hiddenweb_reached_by", {"kind": "seed", "form": None}),
        source=meta.get("hiddenweb_source"),
        form_only=bool(meta.get("hiddenweb_form_only")),
        title=title,
        fingerprint=text_fp,
        fetch_seconds=round(float(meta.get("download_latency", 0.0)), 4),
        fetched_at=round(time.time(), 3),
        downloads=downloads,
        action_score=meta.get("hiddenweb_dla_score"),
        content_type=header(headers, b"Content-Type"),
        script_requests=[{"method": m, "url": u} for m, u in meta["hiddenweb_xhr"]]
        if meta.get("hiddenweb_xhr") else None,
        cache_control=header(headers, b"Cache-Control"),
        expires=header(headers, b"Expires"),
    )


def failed_item(failure: Failure, downloads: int) -> PageItem:
    """The item of a request whose download failed (``status`` null, ``error`` says why)."""
    request = failure.request
    meta = request.meta
    return PageItem(
        url=request.url, final_url=request.url, method=request.method, status=None,
        error=f"{failure.type.__name__}: {failure.getErrorMessage()}",
        depth=meta.get("depth", 0), referrer=header(request.headers, b"Referer"),
        reached_by=meta.get("hiddenweb_reached_by", {"kind": "seed", "form": None}),
        source=meta.get("hiddenweb_source"),
        form_only=bool(meta.get("hiddenweb_form_only")), title=None, fingerprint=None,
        fetch_seconds=None, fetched_at=round(time.time(), 3), downloads=downloads,
        action_score=meta.get("hiddenweb_dla_score"), content_type=None, script_requests=None,
        cache_control=None, expires=None,
    )


def header(headers: Any, name: bytes) -> str | None:
    """A header's value as text, or None."""
    value = headers.get(name) if headers is not None else None
    return value.decode("latin-1") if value else None
