"""Frame documents a page holds in its own markup (``<iframe srcdoc="…">``), read as part of it.

:func:`with_srcdoc` gives the spider a copy of an HTML response with each ``srcdoc`` document's
markup appended before its ``</body>`` (in a ``<div data-hiddenweb-srcdoc>``), so that the link
extractor and the form reader see its links and forms; relative URLs resolve against the page's
own, as a browser resolves a ``srcdoc`` document's. The plain response (its item, fingerprint and
re-render) is left as it came.

Nothing is needed for ``<template>`` contents and declarative shadow roots
(``<template shadowrootmode="open">``): lxml parses a template's content as its children, so
the link extractor and the form reader read them already. ``<iframe src>`` and ``<frame src>``
are links of the page (the spider's link extractor), crawled as pages of their own when in scope;
in Chromium, shadow roots built by scripts and frames written by scripts are read by
:mod:`hiddenweb.browser.embedded`.
"""

from __future__ import annotations

import re

from parsel import Selector
from scrapy.http import TextResponse

MAX_DOCUMENTS = 20  # srcdoc documents read per page
MAX_CHARS = 500_000  # characters appended per page
#: markup appended to the DOM read, not where a page shows it: srcdoc documents (here), shadow
#: roots and frame documents (:mod:`hiddenweb.browser.embedded`)
_APPENDED = "ancestor::*[@data-hiddenweb-srcdoc or @data-hiddenweb-shadow or @data-hiddenweb-frame]"


def appended(element: Selector) -> bool:
    """Whether ``element`` was read from markup appended to the page (a ``srcdoc`` or frame
    document, a shadow root): Chromium's page actions would not find it where it was read, so
    a form there is submitted over plain HTTP."""
    return bool(element.xpath(_APPENDED))


def with_srcdoc(response: TextResponse) -> TextResponse:
    """``response`` with its ``srcdoc`` documents appended (see the module docstring), or
    ``response`` itself when it has none."""
    if b"srcdoc" not in response.body:
        return response
    docs = response.xpath("//iframe/@srcdoc | //frame/@srcdoc").getall()[:MAX_DOCUMENTS]
    markup = "".join(f"<div data-hiddenweb-srcdoc>{doc}</div>" for doc in docs if doc.strip())
    if not markup:
        return response
    body = append_html(response.text, markup[:MAX_CHARS])
    return response.replace(body=body.encode("utf-8"), encoding="utf-8")


_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


def append_html(content: str, markup: str) -> str:
    """``markup`` inserted before the document's last ``</body>`` (or at its end)."""
    if not markup:
        return content
    ends = list(_BODY_END.finditer(content))
    if not ends:
        return content + markup
    at = ends[-1].start()
    return content[:at] + markup + content[at:]
