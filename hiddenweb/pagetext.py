"""Page text helpers shared by the spider and the trap guard.

* :func:`visible_text`: the text a reader sees (no script/style), whitespace-normalised.
* :func:`fingerprint`: SHA-1 of that text: two responses with the same fingerprint are the same
  page for the crawler (a "no results" page, the same result for other values).
* :func:`template_key`: the URL's path with digit runs folded to ``{n}`` (query ignored), the unit
  the trap guard counts pages and new content by.
* :class:`SeenContent`: whether a page is new (its fingerprint); :class:`ShownText`: whether a
  new page *shows* a new set of texts (not another order or an echo), the learning's verdict.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

from lxml import etree
from parsel import Selector
from scrapy import Request
from scrapy.http import Response, TextResponse

from hiddenweb.routes import route_of

_WS = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]+")


def compiled(query: str) -> etree.XPath:
    """``query`` compiled once, for :func:`node_strings`."""
    return etree.XPath(query, smart_strings=False)


def tree(page: Selector) -> etree._Element:
    """The lxml tree parsel parsed for ``page``, read directly by the page readers: parsel
    makes a ``Selector`` for each node an ``xpath`` returns, the largest cost of reading a
    table-heavy page (1.8 million of them in an 80 s Datasette crawl; ``hiddenweb bench
    pagecost``). ``ValueError`` for a page that is not markup (a JSON reply's selector), as
    parsel's ``xpath`` raises there."""
    root = page.root
    if not isinstance(root, etree._Element):
        raise ValueError(f"not markup: a {page.type} selector")
    return root


def node_strings(page: Selector, query: etree.XPath) -> list[str]:
    """What ``page.xpath(query.path).getall()`` returns, for a query that selects text nodes or
    attribute values, evaluated on the page's lxml tree (:func:`tree`)."""
    return [str(node) for node in query(tree(page))]


VISIBLE = compiled("//body//text()[not(ancestor::script) and not(ancestor::style)]")
NON_ANCHOR = compiled(
    "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::a)"
    " and not(ancestor::option)]"
)
_LINKS = compiled("//a[@href]")
TEXTS = compiled(".//text()")  # an element's text nodes


def visible_nodes(page: Selector) -> list[str]:
    """The text nodes a reader sees (no script/style), those of only whitespace left out."""
    return [t for t in node_strings(page, VISIBLE) if not t.isspace()]


#: a page's text outside links, headings, labels, buttons, options, navigation and scripts
CONTENT_TEXT = compiled(
    "//body//text()[not(ancestor::a or ancestor::script or ancestor::style"
    " or ancestor::option or ancestor::label or ancestor::button or ancestor::h1"
    " or ancestor::h2 or ancestor::h3 or ancestor::h4 or ancestor::h5"
    " or ancestor::h6 or ancestor::nav or ancestor::header or ancestor::footer"
    " or ancestor::select or ancestor::textarea)]")


def content_text(response: Response) -> str | None:
    """The text of a page's own content (:data:`CONTENT_TEXT`), or None when it has no markup
    (a binary reply has no ``xpath``)."""
    try:
        return " ".join(node_strings(response.selector, CONTENT_TEXT))  # type: ignore[attr-defined]
    except (ValueError, AttributeError):
        return None


def visible_text(page: Selector, nodes: list[str] | None = None) -> str:
    """The page's visible text, whitespace-normalised (from its ``nodes`` when already read)."""
    nodes = visible_nodes(page) if nodes is None else nodes
    return _WS.sub(" ", " ".join(nodes)).strip()


def fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


#: where a page's links, forms, frames and event handlers lead
ACTION_TARGETS = compiled("//a/@href | //form/@action | //*[@formaction]/@formaction"
                          " | //iframe/@src | //frame/@src | //@*[starts-with(name(), 'on')]")


def page_fingerprint(text: str, page: Selector | None) -> str:
    """Fingerprint of a page: its visible text *and* where its links, forms, frames and event
    handlers lead. Two pages with the same words but other actions (a wizard's step page in
    two collections, "choose a city in CA", a "click me" button whose handler differs) are
    different pages: the second must be expanded too."""
    if page is None:
        return fingerprint(text)
    targets = sorted(set(node_strings(page, ACTION_TARGETS)))
    return fingerprint(text + "\n" + "\n".join(targets))


def outward_links(page: Selector, url: str = "") -> list[tuple[str, etree._Element]]:
    """``(absolute target, anchor)`` of the page's links that leave its URL template
    (:func:`template_key` of ``url``; every link when ``url`` is empty); the anchor is the
    lxml element (no parsel ``Selector`` made per link). ``ValueError`` for a page that is
    not markup."""
    own = template_key(url) if url else None
    out: list[tuple[str, etree._Element]] = []
    for link in _LINKS(tree(page)):
        target = urljoin(url, link.get("href"))
        if own is None or template_key(target) != own:
            out.append((target, link))
    return out


def shape_fingerprint(page: Selector, url: str = "",
                      outward: list[tuple[str, etree._Element]] | None = None) -> str:
    """Fingerprint of the *set* of words outside links and of the texts of links that leave the
    page's URL template, without digits and without the words that only echo the request's
    query ("Catalog (colour=red)", "Results for 'x'"). Equal for pages that differ only in
    numbers, navigation within the template, order or echoed parameters: calendar months, facet
    toggles and sort orders of the same products. Different for the pages of a paginated result
    list, whose records are links to other pages (``/c/1/filter?page=2`` -> ``/c/1/item/33``).
    ``outward``: :func:`outward_links` of the page, if already read."""
    echoed: set[str] = set()
    for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        echoed.update(_WORD.findall(f"{key} {value}".lower()))
    texts = node_strings(page, NON_ANCHOR)
    for _, link in outward_links(page, url) if outward is None else outward:
        texts += TEXTS(link)
    words = set(_WORD.findall(" ".join(texts).lower())) - echoed
    return fingerprint(" ".join(sorted(words)))


#: a path segment that is an opaque key, not a word: a hex hash (16+), a UUID, 12+ characters of
#: base64 mixing digits with upper- and lower-case letters (no 6-letter lower-case word), or 8+
#: ending in base64's ``=`` padding
_OPAQUE = re.compile(
    r"^(?:[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
    r"|(?=[\w+-]*\d)(?=[\w+-]*[A-Z])(?=[\w+-]*[a-z])(?![\w+-]*[a-z]{6})[\w+-]{12,}={0,2}"
    r"|[\w+-]{8,}={1,2})$")


def fold_path(path: str) -> str:
    """A URL path with its opaque keys folded to ``{id}`` (a record keyed by a base64 or hex
    string: ``/t/row/WyJ3eC0wMDAxIl0=/``) and its digit runs to ``{n}``: the pages of one
    template share it, as ``/c/3/r/17`` and ``/c/4/r/18`` do."""
    segments = [("{id}" if _OPAQUE.match(unquote(seg)) else seg) for seg in path.split("/")]
    return _DIGITS.sub("{n}", "/".join(segments))


@lru_cache(maxsize=1 << 16)
def template_key(url: str) -> str:
    """``host/path``, folded (:func:`fold_path`): ``/c/3/r/17?x=1`` → ``h/c/{n}/r/{n}``; a hash
    route's path too (:func:`hiddenweb.routes.route_of`): ``/#/runs/7?tab=1`` → ``h/#/runs/{n}``.
    Cached: one URL's key is asked for as a link, a request, a page and a trap-guard record."""
    parts = urlsplit(url)
    key = f"{parts.hostname}{fold_path(parts.path)}"
    route = route_of(url)
    if route is not None:
        key += "#" + fold_path(route.split("?", 1)[0])
    return key


NEW_CONTENT_META = "hiddenweb_new_content"
#: a page's text blocks and echoed words, kept from its reading until ``page_read`` is sent
READ_META = "hiddenweb_read"
#: a GET of a page read before, asked for by the stale rule (:mod:`hiddenweb.stale`) to compare
#: its numbers with the first reading's; the spider reads its text and nothing else
RECHECK_META = "hiddenweb_recheck"
#: the content fingerprint of the page this request's answer was, read and emitted before a kill
#: left the request pending (JOBDIR resume, :func:`hiddenweb.dla.jobdir.open_job`)
REREAD_META = "hiddenweb_reread"
#: a request whose answer the crawl-level stopping rule waits to read before it closes (a
#: page's browser render, a new form's first submissions): what it shows is not yet known, and
#: once the close has begun no request it leads to would be downloaded (:mod:`hiddenweb.stale`)
AWAITED_META = "hiddenweb_awaited"
#: set on a page's browser render that added something to follow which no earlier render
#: added (the render gate's verdict, :meth:`hiddenweb.browser.renders.RenderGate.judged`): the
#: crawl is still finding what only the browser reaches (:mod:`hiddenweb.stale`)
RENDER_ADDED_META = "hiddenweb_render_added"


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
        """:meth:`is_new`, decided once per response: the verdict is kept in its ``meta``.

        After a JOBDIR resume, the pages emitted by requests the kill left pending are among the
        fingerprints, so another request that reaches one first reads a repeat (as without the
        kill), and the same page is new once more to its own request's re-read
        (:data:`REREAD_META`): its links and forms are made again, its items are not emitted
        again (``hiddenweb_emitted``)."""
        if NEW_CONTENT_META not in meta:
            reread = fp is not None and meta.get(REREAD_META) == fp
            meta[NEW_CONTENT_META] = self.is_new(fp) or reread
        return bool(meta[NEW_CONTENT_META])


def is_markup(response: Response) -> bool:
    """Whether ``response`` is HTML or XML, whose links and forms can be read (a JSON reply is
    a ``TextResponse`` whose selector cannot run XPath)."""
    try:
        return isinstance(response, TextResponse) and response.selector.type in ("html", "xml")
    except (ValueError, AttributeError):
        return False


NOVEL_META = "hiddenweb_novel"
#: what a page showed that no earlier page of the crawl showed, by the stale rule's reading
#: (:mod:`hiddenweb.stale`; absent when that rule is off): :data:`WORDS_NEW` (a word with a
#: letter), :data:`NUMBERS_NEW` (only numerals: a record's values, a counter), or 0 (no new
#: word); read by the DLA's feedback (:mod:`hiddenweb.dla.feedback`)
FRESH_META = "hiddenweb_fresh"
WORDS_NEW = 2
NUMBERS_NEW = 1
SHOWN_META = "hiddenweb_shown"  # the hash of the set of texts a page showed (ShownText)
#: whether a page showed a text block no earlier page showed, echoes left out (ShownText;
#: absent when it is off): a form's explorer reads an answer that only shows known blocks
#: again, rearranged, as no new page (hiddenweb.forms.crawl, lab knob form_family_text)
NEW_TEXT_META = "hiddenweb_new_text"
_TOKEN = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (runs of letters and digits; ``_`` splits), the words
    :class:`ShownText`, :func:`echoed_words` and the stale rule (:mod:`hiddenweb.stale`) read."""
    return _TOKEN.findall(text.lower())


def word_matches(text: str) -> Iterator[re.Match[str]]:
    """The words of ``text`` (as :func:`words`) with their places in ``text.lower()``."""
    return _TOKEN.finditer(text.lower())
MAX_BLOCK_CHARS = 200


class ShownText:
    """Whether a page shows a set of texts the crawl has not shown before: the verdict the
    learning reads.

    A new fingerprint (:class:`SeenContent`) says a page differs from every page before it. It
    differs also when it only shows the same records in another order (a table sorted by another
    column, a list grouped another way) or echoes the query ("Results for 'fern'", "no table
    named fern"). Judged by fingerprints, a crawl rewards a table's every sort order and a
    form's every echo, and the form never looks spent.

    Here a page is cut into its *text blocks* (the text nodes a reader sees, or a plain reply's
    lines), each lower-cased with its whitespace folded. A block never shown before that holds a
    word of the request's query or form values is left out (an echo: "No records match 'fern'");
    a block shown before stays, echo or not (a column sorted by ``owner`` still shows "Owner
    Ada"). The page is *novel* when the **set** of its blocks was never the set of an earlier
    page: order and echoes do not count, a different subset of records (another filter's
    answer) does. The set's hash is kept in ``meta["hiddenweb_shown"]`` (a form's explorer
    compares its answers with its defaults' answer), and whether any of its blocks was never
    shown before in ``meta["hiddenweb_new_text"]`` (a novel set of known blocks is known text
    rearranged: a diff's other display options). Blocks and sets are kept as 64-bit hashes
    (8 bytes of SHA-1), so memory grows with the distinct text of the site, about 50 bytes a
    block.

    ``enabled=False``: every page with a new fingerprint is novel (the fingerprint's verdict).
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.blocks: set[bytes] = set()
        self.sets: set[bytes] = set()

    def judge(self, meta: dict, blocks: list[str], echoed: set[str]) -> bool:
        """Whether the set of ``blocks`` (new echoes left out) is new (and remember it); the
        verdict is kept in ``meta`` (``hiddenweb_novel``), decided once per response."""
        if NOVEL_META in meta:
            return bool(meta[NOVEL_META])
        if not self.enabled:
            meta[NOVEL_META] = True  # (no set: no explorer compares answers)
            return True
        entries = block_keys(blocks)
        known = self._known([key for key, _ in entries]) if entries else []
        keys: set[bytes] = set()
        new: list[bytes] = []
        for (key, words), seen in zip(entries, known, strict=True):
            if seen:
                keys.add(key)
            elif not echoed.intersection(words):
                new.append(key)
                keys.add(key)
        if new:
            self._add_blocks(new)
        meta[NEW_TEXT_META] = bool(new)
        whole = set_key(keys)
        meta[NOVEL_META] = novel = self._add_set(whole)
        meta[SHOWN_META] = int.from_bytes(whole, "big")
        return novel

    # where the blocks and sets shown are kept (in Redis in shared mode: hiddenweb.redis_shared)
    def _known(self, keys: list[bytes]) -> list[bool]:
        """Whether each block key was shown before."""
        return [key in self.blocks for key in keys]

    def _add_blocks(self, keys: list[bytes]) -> None:
        self.blocks.update(keys)

    def _add_set(self, whole: bytes) -> bool:
        """Remember a set's key; whether it is new."""
        novel = whole not in self.sets
        self.sets.add(whole)
        return novel


def block_keys(blocks: list[str]) -> list[tuple[bytes, list[str]]]:
    """Each text block with words: its key (the hash of its folded words) and its words."""
    out = []
    for block in blocks:
        found = words(block)
        if found:
            out.append((_hash(" ".join(found)[:MAX_BLOCK_CHARS]), found))
    return out


def set_key(keys: set[bytes]) -> bytes:
    """The key of a set of block keys (order does not count)."""
    return _hash(b"".join(sorted(keys)))


def _hash(data: str | bytes) -> bytes:
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    return hashlib.sha1(data).digest()[:8]


def text_blocks(response: Response) -> list[str]:
    """A reply's text blocks (:class:`ShownText`): an HTML page's visible text nodes, another
    text reply's lines; none for a binary one."""
    if not isinstance(response, TextResponse):
        return []
    if is_markup(response):
        return visible_nodes(response.selector)
    return response.text.splitlines()


def echoed_words(request: Request | None) -> set[str]:
    """The lower-cased words of the values in a request's query string and form body: a page
    that repeats them says nothing new by that."""
    if request is None:
        return set()
    pairs = parse_qsl(urlsplit(request.url).query, keep_blank_values=True)
    if request.method == "POST" and request.body and len(request.body) < 65536:
        pairs += parse_qsl(request.body.decode("utf-8", "replace"), keep_blank_values=True)
    return {word for _key, value in pairs for word in words(value)}
