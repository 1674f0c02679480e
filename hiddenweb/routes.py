"""Hash routes: the pages of a single-page app that live in a URL's fragment.

A single-page app routed on the hash (``/#/experiments/2/runs/7``, ``/#!/about``) shows each of
its views at a URL the server never sees: every one downloads the same document (``/``), and its
script builds the view the fragment names. Scrapy's request fingerprint drops the fragment, so
the crawl took every such link for the page it was on and read none of them.

With the lab knob ``hash_route_pages`` (on) and the browser not ``never``, a hash route is a page
of its own:

* :class:`RouteFingerprinter` (``REQUEST_FINGERPRINTER_CLASS``, set by the browser add-on unless
  the project set its own) keeps a hash route's path in the fingerprint; any other fragment
  (``#section``) is dropped, as Scrapy does, and so is a route's query (``#/guide?id=setup``, a
  heading of the guide; ``#/runs?orderBy=name``, a view's options: the rendered page is the same
  or another arrangement of it; Docsify's documentation, whose every heading is such a link,
  took 131 renders and 74 s with it kept, where 22 pages were to be read). An app that keys its
  records by a route's query (``#/item?id=3``) has only the first of them read;
* a hash route goes straight to Chromium (:meth:`~hiddenweb.browser.detect.BrowserPolicy.direct`):
  plain HTTP would read the app's empty document again; once its document's routes were
  rendered idle, it is not rendered at all, but for a few
  (:meth:`~hiddenweb.browser.detect.BrowserPolicy.worth_routing`, lab knob
  ``browser_route_share``);
* its URL template includes the route's path, folded (:func:`~hiddenweb.pagetext.template_key`,
  and the DLA's :func:`~hiddenweb.dla.kinds.url_template`), so the render gate and the DLA
  learn its views apart (``#/experiments/{n}/runs/{id}``);
* a rendered page's hash-route links are followed as pages, not clicked in the page
  (:mod:`hiddenweb.browser.events`), and a hash change the page makes by itself is a URL found.

A hash route is a fragment that starts with ``/`` or ``!`` (:func:`route_of`). But a fragment of
a document the crawl read over plain HTTP as a page of text, not an app's shell, is an anchor
(lab knob ``route_anchors``, :meth:`~hiddenweb.browser.detect.BrowserPolicy.anchor_of`):
the spider follows such a link as its document, and a route met before its document was read
is not rendered (stats ``hiddenweb/links/route_anchors``, ``hiddenweb/browser/routes_of_pages``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.request import RequestFingerprinter, fingerprint

if TYPE_CHECKING:
    from scrapy import Request


def route_of(url: str) -> str | None:
    """The hash route of ``url`` (its fragment, without ``#``, when it starts with ``/`` or
    ``!``: ``#/runs/7``, ``#!/about``), or None."""
    _, sep, fragment = url.partition("#")
    if sep and fragment[:1] in ("/", "!") and fragment not in ("/", "!", "!/"):
        return fragment
    return None


def route_parts(url: str) -> tuple[str, str, tuple[str, ...]] | None:
    """A hash route's document (``url`` without its fragment), lead (``/``, ``!/``, ``!`` or
    ``""``) and path segments, its query left out; None for any other URL."""
    route = route_of(url)
    if route is None:
        return None
    path = route.split("?", 1)[0]
    mark = "!" if path.startswith("!") else ""
    lead = mark + ("/" if path.lstrip("!").startswith("/") else "")
    return url.partition("#")[0], lead, tuple(s for s in path.lstrip("!").split("/") if s)


def is_route(url: str) -> bool:
    return route_of(url) is not None


def route_page(url: str) -> str:
    """The page a hash route shows: its URL with the route's query left out (``/#/guide?id=
    setup`` → ``/#/guide``); any other URL as it is."""
    route = route_of(url)
    if route is None or "?" not in route:
        return url
    return url.split("#", 1)[0] + "#" + route.split("?", 1)[0]


class RouteFingerprinter(RequestFingerprinter):
    """Scrapy's fingerprinter, but a hash route's path is kept: two routes of one page are two
    pages (:mod:`hiddenweb.routes`); routes that differ only in their query are one
    (:func:`route_page`)."""

    def fingerprint(self, request: Request) -> bytes:
        if is_route(request.url):
            page = route_page(request.url)
            if page != request.url:
                request = request.replace(url=page)
            return fingerprint(request, keep_fragments=True)
        return super().fingerprint(request)
