"""Page text helpers shared by the spider and the trap guard.

* :func:`visible_text`: the text a reader sees (no script/style), whitespace-normalised.
* :func:`fingerprint`: SHA-1 of that text: two responses with the same fingerprint are the same
  page for the crawler (a "no results" page, the same result for other values).
* :func:`template_key`: the URL's path with digit runs folded to ``{n}`` (query ignored), the unit
  the trap guard counts pages and new content by.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import parse_qsl, urljoin, urlsplit

from parsel import Selector
from scrapy.http import Response, TextResponse

_WS = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]+")

VISIBLE = "//body//text()[not(ancestor::script) and not(ancestor::style)]"
NON_ANCHOR = (
    "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::a)"
    " and not(ancestor::option)]"
)


def visible_text(page: Selector) -> str:
    return _WS.sub(" ", " ".join(page.xpath(VISIBLE).getall())).strip()


def fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


#: where a page's links, forms, frames and event handlers lead
ACTION_TARGETS = ("//a/@href | //form/@action | //*[@formaction]/@formaction"
                  " | //iframe/@src | //frame/@src | //@*[starts-with(name(), 'on')]")


def page_fingerprint(text: str, page: Selector | None) -> str:
    """Fingerprint of a page: its visible text *and* where its links, forms, frames and event
    handlers lead. Two pages with the same words but other actions (a wizard's step page in
    two collections, "choose a city in CA", a "click me" button whose handler differs) are
    different pages: the second must be expanded too."""
    if page is None:
        return fingerprint(text)
    targets = sorted(set(page.xpath(ACTION_TARGETS).getall()))
    return fingerprint(text + "\n" + "\n".join(targets))


def shape_fingerprint(page: Selector, url: str = "") -> str:
    """Fingerprint of the *set* of words outside links and of the texts of links that leave the
    page's URL template, without digits and without the words that only echo the request's
    query ("Catalog (colour=red)", "Results for 'x'"). Equal for pages that differ only in
    numbers, navigation within the template, order or echoed parameters: calendar months, facet
    toggles and sort orders of the same products. Different for the pages of a paginated result
    list, whose records are links to other pages (``/c/1/filter?page=2`` -> ``/c/1/item/33``)."""
    echoed: set[str] = set()
    for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        echoed.update(_WORD.findall(f"{key} {value}".lower()))
    texts = page.xpath(NON_ANCHOR).getall()
    own = template_key(url) if url else None
    for link in page.xpath("//a[@href]"):
        if own is None or template_key(urljoin(url, link.attrib["href"])) != own:
            texts += link.xpath(".//text()").getall()
    words = set(_WORD.findall(" ".join(texts).lower())) - echoed
    return fingerprint(" ".join(sorted(words)))


def template_key(url: str) -> str:
    """``host/path`` with digit runs folded: ``/c/3/r/17?x=1`` → ``h/c/{n}/r/{n}``."""
    parts = urlsplit(url)
    return f"{parts.hostname}{_DIGITS.sub('{n}', parts.path)}"


NEW_CONTENT_META = "hiddenweb_new_content"


class SeenContent:
    """Whether a response's content is new to the crawl: the one place that decides it.

    A page is new when its fingerprint (:func:`page_fingerprint`) was not seen before, or when
    it has none (a binary body). The ``hwdla`` spider judges every response it reads
    (:meth:`judge`: the verdict goes to the response's meta, ``hiddenweb_new_content``, where
    the DLA feedback middleware reads it); the middleware asks :meth:`is_new` of the items of
    spiders that give no verdict.
    """

    def __init__(self) -> None:
        self.fingerprints: set[str] = set()

    def is_new(self, fp: str | None) -> bool:
        """Whether content with fingerprint ``fp`` is new (and remember it)."""
        new = fp is None or fp not in self.fingerprints
        if fp is not None:
            self.fingerprints.add(fp)
        return new

    def judge(self, meta: dict, fp: str | None) -> bool:
        """:meth:`is_new`, decided once per response: the verdict is kept in its ``meta``."""
        if NEW_CONTENT_META not in meta:
            meta[NEW_CONTENT_META] = self.is_new(fp)
        return bool(meta[NEW_CONTENT_META])


def is_markup(response: Response) -> bool:
    """Whether ``response`` is HTML or XML, whose links and forms can be read (a JSON reply is
    a ``TextResponse`` whose selector cannot run XPath)."""
    try:
        return isinstance(response, TextResponse) and response.selector.type in ("html", "xml")
    except (ValueError, AttributeError):
        return False
