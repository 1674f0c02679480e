"""The browser requests the spider makes of a plain one: straight to Chromium, rendered again,
or, when Chromium failed, back to plain HTTP.

* :func:`direct_meta`: the meta that sends a request to Chromium (its own download slot,
  :data:`BROWSER_SLOT`; inline scripts have run at ``domcontentloaded``, and images and styles
  are not loaded anyway).
* :func:`rerender_request`: a page fetched over plain HTTP whose scripts build links or forms,
  rendered again (meta ``hiddenweb_rerender``); with ``reuse_body`` Chromium gets the body
  already fetched instead of downloading it again (:mod:`hiddenweb.browser.fetched`).
* :func:`fallback_request`: a browser request that failed, fetched again over plain HTTP (meta
  ``hiddenweb_browser_fallback``); none for a re-render (its plain copy was read) or a
  submission by page actions (its form's loop goes on).
"""

from __future__ import annotations

import scrapy
from scrapy.http import TextResponse

from hiddenweb.browser.config import BROWSER_SLOT
from hiddenweb.pagetext import AWAITED_META, READ_META

#: meta of a direct render's response: the HTML document Chromium received for the request
#: (what plain HTTP reads of it), against which the render is judged (browser/renders.py)
DOCUMENT_META = "hiddenweb_document"
#: meta of a request sent straight to Chromium because of its URL template (the spider's
#: ``browser_meta``), not for a render of its own: read over plain HTTP after all when the
#: template no longer goes there once the request has a page (RenderGate.at_dispatch)
DIRECT_META = "hiddenweb_direct"
#: meta of a form's submission by page actions, once submitted: how many requests the page sent
#: after the crawler's submitting action (navigations, script requests, beacons; the guard's
#: ``Render.sent``); 0: the form only changed the page (hiddenweb.forms.crawl)
SUBMIT_SENT_META = "hiddenweb_submit_sent"
#: meta of a plain response that a re-render must judge again, not inherit
_JUDGED = ("hiddenweb_explore", "hiddenweb_new_content", "hiddenweb_novel",
           "hiddenweb_shown", "hiddenweb_new_forms", "hiddenweb_preview", READ_META)


def browser_free(meta: dict) -> dict:
    """``meta`` without what sends a request to Chromium (``playwright*``, its download slot,
    :data:`DIRECT_META`): the meta of the same request over plain HTTP."""
    return {k: v for k, v in meta.items()
            if not k.startswith("playwright") and k not in ("download_slot", DIRECT_META)}


def direct_meta() -> dict:
    return {"playwright": True, "download_slot": BROWSER_SLOT,
            "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"}}


def rerender_request(response: TextResponse, reuse_body: bool) -> scrapy.Request:
    request = response.request
    meta = {k: v for k, v in request.meta.items()
            if k.startswith("hiddenweb_") and k not in _JUDGED}
    meta.update(direct_meta(), hiddenweb_rerender=True)
    meta[AWAITED_META] = True  # read before the crawl may close stale (hiddenweb.stale)
    if reuse_body and response.status == 200 and response.url == request.url \
            and request.method == "GET":
        ctype = response.headers.get(b"Content-Type")
        meta.update(hiddenweb_body=response.body, hiddenweb_body_encoding=response.encoding,
                    hiddenweb_body_headers={"Content-Type": ctype.decode("latin-1")
                                            if ctype else "text/html"},
                    playwright_page_init_callback="hiddenweb.browser.serve_fetched_body")
    return request.replace(meta=meta, dont_filter=True, priority=request.priority + 1)


def fallback_request(request: scrapy.Request) -> scrapy.Request | None:
    if request.meta.get("hiddenweb_rerender") or request.meta.get("hiddenweb_browser_form"):
        return None
    meta = browser_free(request.meta)
    meta["hiddenweb_browser_fallback"] = True
    return request.replace(meta=meta, dont_filter=True)
