"""A hash route rendered in a pooled page that already shows its document: a route hop.

A single-page app's views (``/#/records/7``, :mod:`hiddenweb.routes`) are one document; a
person moves between them without reloading it, and its router draws the next view from the
state it holds. Loading the document again for each view costs the app's whole start (its
script bundle parsed and run, its start-up requests) for every view: on a loaded 2-core machine
most of a render of such an app. With the lab knob ``browser_route_hop`` a page whose render
ended on a hash-routed document waits in the pool with that document (not unloaded, its
requests aborted by the guard while idle), and a later route of the same document (same
scheme, host, port, path and query; only the fragment differs) is rendered in it by a hash
change (:data:`HOP_JS`), the way the app's own links move between views, instead of a
navigation. A hop after which the document shows exactly what it showed before (a router that
reads the hash only as its document loads, :data:`SHOWN_JS`) is rendered again by a
navigation. A request with page actions, a form target or a fetched body is never hopped (it
needs its own document), nor is any page a render did not end well on.

Contract of :func:`hoppable`: whether ``request`` may be rendered in a page now at
``page_url`` by a hop. :func:`keeps_document`: whether a page whose render of ``request`` went
well, now at ``page_url``, is pooled with its document.
"""

from __future__ import annotations

from urllib.parse import urldefrag

from scrapy import Request

from hiddenweb.browser.formtarget import FORM_TARGET_META
from hiddenweb.routes import is_route

#: the route taken as the app's links take it: a hash change (``hashchange`` and the History
#: API's ``popstate``); already at that hash, it is left and taken again (as ROUTE_AGAIN_JS)
HOP_JS = """(hash) => {
  if (location.hash === hash)
    history.replaceState(history.state, "", location.pathname + location.search);
  location.hash = hash;
  return location.href;
}"""


#: what the document shows (its body's markup, length and a hash of it): a hop that leaves it
#: unchanged met a router that reads the hash only as the document loads, and the route is
#: loaded instead
SHOWN_JS = """() => {
  const s = document.body ? document.body.innerHTML : "";
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return s.length + ":" + h;
}"""


def hoppable(page_url: str, request: Request) -> bool:
    """A GET of a hash route, with no page actions, form target or fetched body, of the
    document ``page_url`` shows (the URLs equal but for their fragments)."""
    meta = request.meta
    if request.method != "GET" or meta.get("playwright_page_methods") \
            or meta.get(FORM_TARGET_META) is not None or meta.get("hiddenweb_body") is not None:
        return False
    return is_route(request.url) and _same_document(page_url, request.url)


def keeps_document(page_url: str, request: Request) -> bool:
    """A page on a hash-routed document (the request's URL or the page's is a hash route) of
    the request's own document: a later route of it may hop there."""
    return (is_route(page_url) or is_route(request.url)) \
        and _same_document(page_url, request.url)


def hop_target(request: Request) -> str:
    """The fragment the hop sets (``#/records/7``)."""
    return "#" + urldefrag(request.url)[1]


def _same_document(page_url: str, url: str) -> bool:
    """``page_url`` (an HTTP(S) document, not ``about:blank``) is ``url`` but for the
    fragment."""
    return page_url.startswith(("http://", "https://")) \
        and urldefrag(page_url)[0] == urldefrag(url)[0]
