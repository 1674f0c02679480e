"""Page text helpers shared by the spider and the trap guard.

* :func:`visible_text`: the text a reader sees (no script/style), whitespace-normalised.
* :func:`fingerprint`: SHA-1 of that text: two responses with the same fingerprint are the same
  page for the crawler (a "no results" page, the same result for other values).
* :func:`template_key`: the URL's shape (digit runs → ``{n}``, sorted query keys), the unit the
  trap guard counts pages and new content by.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import parse_qsl, urlsplit

from parsel import Selector

_WS = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")

VISIBLE = "//body//text()[not(ancestor::script) and not(ancestor::style)]"
NON_ANCHOR = (
    "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::a)"
    " and not(ancestor::option)]"
)


def visible_text(page: Selector) -> str:
    return _WS.sub(" ", " ".join(page.xpath(VISIBLE).getall())).strip()


def fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def shape_fingerprint(page: Selector) -> str:
    """Fingerprint of the text outside links with digits removed: equal for pages that differ only
    in numbers and navigation (calendar months, facet toggles, page counters)."""
    text = _WS.sub(" ", _DIGITS.sub("", " ".join(page.xpath(NON_ANCHOR).getall()))).strip()
    return fingerprint(text)


def template_key(url: str) -> str:
    parts = urlsplit(url)
    keys = ",".join(sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}))
    return f"{parts.hostname}{_DIGITS.sub('{n}', parts.path)}?{keys}"
