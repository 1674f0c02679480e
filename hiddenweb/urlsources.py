"""URL sources without a browser: every place a reply names a same-site URL besides its links.

A page's ``<a>``, ``<area>``, ``<frame>`` and ``<iframe>`` are read by the spider's link
extractor; this module reads the rest of every reply, by its type (:func:`reply_type`), and
returns :class:`Found` URLs, each with the *source* that named it (the spider puts it in
``Request.meta["hiddenweb_source"]`` and the item's ``source``):

============  =========  ===============================================================
source        guessed    where
============  =========  ===============================================================
header                   ``Location``, ``Content-Location``, ``Refresh``, ``Link`` headers
refresh                  ``<meta http-equiv="refresh" content="0; url=…">``
link-tag                 ``<link rel="next|prev|up|index|…" href>``: pagination, a document's
                         parts
alternate     yes        any other ``<link href>`` but stylesheets, icons, preloads and
                         manifests (``alternate``, ``canonical``: the same content elsewhere or
                         in another format)
embed                    ``<object data>``, ``<embed src>``: what the browser loads into the page
svg                      ``xlink:href`` of an SVG ``<a>`` (the link extractor reads ``href``)
handler                  quoted URLs in click code: ``on*`` attributes (``onclick="location=
                         '/x'"``) and ``javascript:`` links, read as a script's (below); not a
                         form's ``onsubmit`` or ``javascript:`` action (its submission); code
                         that asks ``confirm(…)`` is marked ``data-confirm``
sitemap                  ``<loc>`` of a sitemap or a sitemap index (XML, also gzipped)
robots                   robots.txt's ``Sitemap:`` lines
xml                      a feed's or any XML document's same-site URLs (``<link>``, ``href``)
json          last       a JSON reply's string values that are same-site absolute URLs or
                         root-relative paths (``"/items/2"``): an API's reply often mirrors its
                         HTML page's links with other keys (Datasette's facet toggles, a
                         ``next_url``); followed by default, served last; also the data
                         blocks of a page (``<script type="application/json">``, JSON-LD, an
                         import map)
robots-path   yes        robots.txt's ``Allow:`` paths (and ``Disallow:`` when robots.txt is
                         not obeyed); wildcard patterns are skipped
css           yes        ``url()`` and ``@import`` in ``<style>``, ``style=""``, stylesheets
                         (and the page's stylesheets themselves)
srcset        yes        ``srcset`` candidates
cite          yes        ``cite`` (a quote's, an edit's source) and ``longdesc`` attributes
data          yes        ``data-*`` attribute values that are same-site paths
attr          yes        any other attribute whose value is an absolute same-site URL
                         (``<option value="http://…">``, ``content``)
script        yes        quoted strings in inline and external scripts that are same-site URLs
                         or paths (``"/x"``, ``"./x"``, ``"../x"``), not concatenated
                         (``"/a?id=" + id`` is skipped), not a template; relative ones too
                         where a script navigates (``location.href = "view.php?id=3"``,
                         ``window.open("help.html")``); the page's own same-site scripts
comment       yes        URLs and paths in HTML comments
text          yes        absolute same-site URLs in plain text
pdf           yes        ``/URI (…)`` link annotations of a PDF
swf           yes        a Flash movie's strings (uncompressed, zlib or LZMA) that are URLs or
                         paths (``getURL`` targets, ActionScript constants): what its buttons
                         and loaders ask for, read without a Flash player
redirect-body            ``<a>``/``<area>`` of a redirect's own HTML body, which Scrapy's redirect
                         drops (:mod:`hiddenweb.redirectbody`; read there, followed by the spider)
sibling       yes        a single-page app's hash route for a record, with a view proven under
                         another record (:mod:`hiddenweb.routesiblings`; made by the spider, not
                         served last)
============  =========  ===============================================================

*Guessed* sources name URLs a person never follows from the page as it is shown; the spider
follows them with ``HIDDENWEB_URL_GUESSES`` (on by default; ``0`` leaves them out). They and
the JSON values (:data:`SERVED_LAST`) are filed as links served last (like ``rel="nofollow"`` links,
:mod:`hiddenweb.dla.kinds`): after every link and form of the site's pages.
Only same-host URLs (host compared, not host:port) of http(s) are returned, without fragments,
each once per reply, at most :data:`MAX_PER_REPLY`; obvious static assets (images, fonts,
media, archives, source maps: :data:`SKIPPED_EXTENSIONS`) are skipped. The module is pure: it
reads a Scrapy response and returns URLs; the safety policy and scope are the spider's.
"""

from __future__ import annotations

import gzip
import json
import lzma
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from lxml import etree
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.linkextractors import IGNORED_EXTENSIONS

from hiddenweb.pagetext import TEXTS, compiled, tree

MAX_PER_REPLY = 500
MAX_BODY = 5_000_000  # bytes of a reply read for URLs (a sitemap may be 50 MB: its head only)
GUESSED = frozenset({"alternate", "robots-path", "css", "srcset", "cite", "data", "attr",
                     "script", "comment", "text", "pdf", "swf"})
#: followed after every link and form of the pages (a JSON reply's URLs mostly repeat its HTML
#: twin's links): the guessed sources and the JSON values, followed by default
SERVED_LAST = GUESSED | {"json"}
#: not fetched when a link or a source names them: Scrapy's ``IGNORED_EXTENSIONS`` (images,
#: media, archives, office files, executables) and fonts and source maps, but PDF (a document
#: whose links are read), RSS (a feed), CSS and scripts (sources) and Flash movies (``swf``)
SKIPPED_EXTENSIONS = frozenset(
    (set(IGNORED_EXTENSIONS) | set("woff woff2 ttf otf eot map avif".split()))
    - {"pdf", "rss", "css", "js", "swf"})
_NOT_URL_ATTRS = frozenset({"href", "src", "action", "formaction", "srcset", "style"})


@dataclass(frozen=True)
class Found:
    """A URL a reply names, the source that named it, and a label (the element's text)."""

    url: str
    source: str
    label: str = ""
    marks: tuple[tuple[str, str], ...] = ()  # data-method / data-confirm of its element

    @property
    def guessed(self) -> bool:
        return self.source in GUESSED

    @property
    def last(self) -> bool:
        """Whether the spider files it as a link served last (:data:`SERVED_LAST`)."""
        return self.source in SERVED_LAST


#: sources that name data, not pages, and the extensions of data files: never sent to Chromium
#: (it would render its viewer of a JSON or a script, not the reply)
DATA_SOURCES = frozenset({"xhr", "well-known", "robots"})
DATA_EXTENSIONS = frozenset({"js", "css", "json", "xml", "txt", "pdf", "rss", "gz", "swf"})


def names_data(url: str, source: str) -> bool:
    """Whether ``url``, named by ``source``, is data (a script's fetch, robots.txt, a sitemap,
    a stylesheet, a script, a PDF …) whose reply is read as it is, not rendered."""
    last = urlsplit(url).path.rsplit("/", 1)[-1]
    return source in DATA_SOURCES or ("." in last
                                      and last.rsplit(".", 1)[-1].lower() in DATA_EXTENSIONS)


# -- the reply's type ------------------------------------------------------------------------
def content_type(response: Response) -> str:
    raw = response.headers.get(b"Content-Type") or b""
    return raw.decode("latin-1").split(";", 1)[0].strip().lower()


def reply_type(response: Response) -> str:
    """``html``, ``xml``, ``json``, ``css``, ``javascript``, ``text``, ``pdf``, ``swf`` or
    ``binary``: by the Content-Type, then by Scrapy's response class (which sniffed the body);
    a Flash movie by its signature too (servers label it ``application/octet-stream``)."""
    ctype = content_type(response)
    if ctype == "application/x-shockwave-flash" or (
            not isinstance(response, TextResponse) and response.body[:3] in _SWF_SIGNATURES):
        return "swf"
    if "json" in ctype:
        return "json"
    if ctype in ("text/css",):
        return "css"
    if "javascript" in ctype or "ecmascript" in ctype:
        return "javascript"
    if ctype == "application/pdf":
        return "pdf"
    if isinstance(response, HtmlResponse):
        return "html"
    if isinstance(response, XmlResponse) or ctype.endswith(("/xml", "+xml")):
        return "xml" if isinstance(response, TextResponse) else "binary"
    if type(response).__name__ == "JsonResponse":
        return "json"
    if isinstance(response, TextResponse):
        return "text"
    if ctype in ("application/gzip", "application/x-gzip") \
            and response.url.split("?", 1)[0].endswith(".xml.gz"):
        return "xml"  # a gzipped sitemap
    return "binary"


# -- the whole reply ---------------------------------------------------------------------------
def reply_urls(response: Response, host: str, *, obey_robots: bool = True) -> list[Found]:
    """Every same-host URL ``response`` names besides its anchor links, first of each URL."""
    kind = reply_type(response)
    found: dict[str, Found] = {}
    for f in _all(response, kind, obey_robots):
        url = _clean(f.url, response.url, host)
        if url is None or url in found or url == _defrag(response.url):
            continue
        found[url] = Found(url, f.source, f.label, f.marks)
        if len(found) >= MAX_PER_REPLY:
            break
    return list(found.values())


def _all(response: Response, kind: str, obey_robots: bool) -> Iterator[Found]:
    yield from header_urls(response)
    if kind == "html":
        yield from html_urls(response)
    elif kind == "xml":
        yield from xml_urls(_body(response), response.url)
    elif kind == "json":
        yield from json_urls(_text(response))
    elif kind == "css":
        yield from (Found(u, "css") for u in css_urls(_text(response)))
    elif kind == "javascript":
        code = _text(response)
        yield from (Found(u, "script") for u in script_urls(code))
        yield from (Found(u, "comment") for u in script_comment_urls(code))
    elif kind == "text":
        text = _text(response)
        if urlsplit(response.url).path == "/robots.txt":
            yield from robots_urls(text, obey_robots)
        else:
            yield from (Found(u, "text") for u in absolute_urls(text))
    elif kind == "pdf":
        for m in _PDF_URI.finditer(response.body[:MAX_BODY]):
            yield Found(m.group(1).decode("latin-1"), "pdf")
    elif kind == "swf":
        yield from (Found(u, "swf") for u in swf_urls(response.body))


def _text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text[:MAX_BODY]
    return response.body[:MAX_BODY].decode("utf-8", "replace")


def _body(response: Response) -> bytes:
    body = response.body
    if body[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=__import__("io").BytesIO(body)) as gz:
                return gz.read(MAX_BODY)
        except (OSError, EOFError):
            return b""
    return body[:MAX_BODY]


def _defrag(url: str) -> str:
    return url.split("#", 1)[0]


def _clean(raw: str, base: str, host: str) -> str | None:
    """``raw`` made absolute against ``base``, without its fragment, when it is an http(s) URL
    on ``host`` and not a static asset; else None."""
    raw = raw.strip().replace("\\/", "/")
    if not raw or raw.startswith(("#", "javascript:", "data:", "mailto:", "tel:", "about:")):
        return None
    try:
        url = urljoin(base, raw)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.hostname != host:
            return None
    except ValueError:
        return None
    last = parts.path.rsplit("/", 1)[-1]
    if "." in last and last.rsplit(".", 1)[-1].lower() in SKIPPED_EXTENSIONS:
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))


# -- headers -------------------------------------------------------------------------------------
_LINK_HEADER = re.compile(r"<([^>]+)>\s*((?:;[^,<]*)*)")
_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\"\s;]+)", re.I)


def header_urls(response: Response) -> Iterator[Found]:
    h = response.headers
    for name in (b"Location", b"Content-Location"):
        for value in h.getlist(name):
            yield Found(value.decode("latin-1"), "header")
    for value in h.getlist(b"Refresh"):
        m = _REFRESH.search(value.decode("latin-1"))
        if m:
            yield Found(m.group(1), "header")
    for value in h.getlist(b"Link"):
        for m in _LINK_HEADER.finditer(value.decode("latin-1")):
            rel = m.group(2).lower()
            if "stylesheet" not in rel and "preload" not in rel and "icon" not in rel:
                yield Found(m.group(1), "header")


# -- HTML ----------------------------------------------------------------------------------------
_MARK_KEYS = ("data-method", "data-confirm", "data-turbo-method", "data-turbo-confirm")


def html_urls(response: TextResponse) -> Iterator[Found]:
    """What an HTML page names besides its anchors (see the module docstring's table)."""
    try:
        sel = response.selector
        root = tree(sel)  # ValueError: not markup
    except (ValueError, AttributeError):
        return
    base = sel.xpath("//base/@href").get()
    for refresh in sel.xpath("//meta[translate(@http-equiv,'REFSH','refsh')='refresh']"
                             "/@content").getall():
        m = _REFRESH.search(refresh)
        if m:
            yield Found(_based(m.group(1), base), "refresh")
    for link in sel.xpath("//link[@href]"):
        rel = (link.attrib.get("rel") or "").lower()
        href = _based(link.attrib["href"], base)
        if "stylesheet" in rel:
            yield Found(href, "css")
        elif set(rel.split()) & _NAVIGATION_RELS:
            yield Found(href, "link-tag")
        elif "icon" not in rel and "preload" not in rel and "manifest" not in rel:
            yield Found(href, "alternate")  # the same content elsewhere or in another format
    for style in sel.xpath("//style/text() | //@style").getall():
        yield from (Found(_based(u, base), "css") for u in css_urls(style))
    for srcset in sel.xpath("//@srcset").getall():
        for candidate in srcset.split(","):
            url = candidate.strip().split(" ", 1)[0]
            if url:
                yield Found(_based(url, base), "srcset")
    for element in sel.xpath("//*[@*[starts-with(name(), 'data-')]] | "
                             "//*[@*[starts-with(., 'http://') or starts-with(., 'https://')]]"):
        attrs = element.attrib
        marks = tuple((k, attrs[k]) for k in _MARK_KEYS if k in attrs)
        label = None
        for name, value in attrs.items():
            value = value.strip()
            if name in _NOT_URL_ATTRS or name in _MARK_KEYS:
                continue
            if name.startswith("data-") and _path_like(value):
                source = "data"
            elif value.startswith(("http://", "https://")) and " " not in value:
                source = "attr"
            else:
                continue
            if label is None:
                label = _label(element)
            yield Found(_based(value, base), source, label, marks)
    for url in _EMBEDDED(root):
        yield Found(_based(url.strip(), base), "embed")
    for url in _CITED(root):
        yield Found(_based(url.strip(), base), "cite")
    yield from handler_urls(root, base)
    for script in sel.xpath("//script"):
        src = script.attrib.get("src")
        kind = (script.attrib.get("type") or "").lower()
        if src:
            yield Found(_based(src, base), "script")
        elif kind in _SCRIPT_TYPES:
            code = script.xpath("string(.)").get("")
            yield from (Found(_based(u, base), "script") for u in script_urls(code))
            yield from (Found(_based(u, base), "comment") for u in script_comment_urls(code))
        elif kind in _DATA_SCRIPT_TYPES or kind.endswith(("/json", "+json")):
            yield from json_urls(script.xpath("string(.)").get(""))
    for comment in sel.xpath("//comment()").getall():
        yield from (Found(_based(u, base), "comment") for u in comment_urls(comment))


#: ``<link rel>`` values that lead to other content (pagination, a document's parts)
_NAVIGATION_RELS = frozenset({"next", "prev", "previous", "first", "last", "up", "index",
                              "contents", "chapter", "section", "subsection", "appendix",
                              "glossary", "help", "search"})
_SCRIPT_TYPES = ("", "text/javascript", "application/javascript", "module", "text/ecmascript")
#: data blocks a page's scripts read (``<script type="application/json">`` state, JSON-LD, an
#: import map, speculation rules): their same-site URL values, as a JSON reply's
_DATA_SCRIPT_TYPES = ("importmap", "speculationrules")
#: what a browser loads into the page as it is shown (a plugin's or a nested document's URL)
_EMBEDDED = compiled("//object/@data | //embed/@src")
#: where a quote or an edit came from, a long description's page: declared, never shown
_CITED = compiled("//@cite | //img/@longdesc | //frame/@longdesc | //iframe/@longdesc")
#: an anchor whose URL is in SVG's ``xlink:href`` (HTML's parser keeps the prefixed name),
#: which the link extractor's ``href`` does not read
_SVG_LINKS = etree.XPath("//*[local-name()='a']/@*[name()='xlink:href']")
#: code a click runs: ``on*`` handler attributes and ``javascript:`` links; not a form's
#: ``onsubmit`` or ``javascript:`` action (``action="javascript:f.action='/x'; f.submit()"``):
#: that is the form's submission, which the safety policy judges as a form (the browser
#: submits it, :mod:`hiddenweb.browser.events`), not a link to its URL. Also what makes a page
#: need the browser, with those two (:func:`hiddenweb.browser.detect.needs_browser`).
CLICK_CODE = ("//@*[starts-with(name(), 'on')][not(name() = 'onsubmit')]"
              " | //a/@href[starts-with(normalize-space(.), 'javascript:')]"
              " | //area/@href[starts-with(normalize-space(.), 'javascript:')]")
_HANDLERS = etree.XPath(CLICK_CODE)
_CONFIRM = re.compile(r"""\bconfirm\s*\(\s*(?:(["'])(.*?)\1)?""", re.S)


def handler_urls(root: Any, base: str | None) -> Iterator[Found]:
    """The URLs a page's click code names (``onclick="location.href='/x'"``,
    ``href="javascript:window.open('/x')"``), read as :func:`script_urls` reads a script,
    source ``handler`` (a person clicks it: declared, not guessed), each labelled with its
    element's text; code that asks ``confirm(…)`` first is marked ``data-confirm`` (the safety
    policy refuses it, as it refuses such a Rails link); and SVG anchors' ``xlink:href``, source
    ``svg``. ``root``: the page's lxml tree."""
    for href in _SVG_LINKS(root):
        yield Found(_based(str(href).strip(), base), "svg", _label(href.getparent()))
    for code in _HANDLERS(root):
        urls = script_urls(str(code))
        if not urls:
            continue
        confirm = _CONFIRM.search(code)
        marks = (("data-confirm", confirm.group(2) or "confirm"),) if confirm else ()
        label = _label(code.getparent())
        for url in urls:
            yield Found(_based(url, base), "handler", label, marks)


def _label(element: Any) -> str:
    """An element's text, its first 12 words (an lxml element or a parsel selector)."""
    if isinstance(element, etree._Element):
        text = " ".join(str(t) for t in TEXTS(element))
    else:
        text = element.xpath("normalize-space(.)").get("")
    return " ".join(text.split()[:12])


def _based(url: str, base: str | None) -> str:
    """``url`` against the page's ``<base href>`` (made absolute later against the page)."""
    return urljoin(base, url) if base and not url.startswith(("http:", "https:")) else url


# -- CSS, scripts, comments, text ----------------------------------------------------------------
_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")\s]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""", re.I)
_PATH = re.compile(r"^(?:https?://[^/\s\"'<>]+|\.{1,2}/|/(?![/*]))[\w\-.~%!$&'()*+,;=:@/?]*$")
# a quoted string: its quote, its text, what follows the closing quote
_STRING = re.compile(r"""(?P<before>\+\s*)?(?P<q>["'`])(?P<s>(?:https?:)?/[^"'`\s<>\\]*|"""
                     r"""\.\.?/[^"'`\s<>\\]*|https?:\\?/\\?/[^"'`\s<>]*)(?P=q)(?P<after>\s*\+)?""")
# a path in a comment stands on its own: after a space, a quote, a bracket or "=", not inside a
# word or a name ("and/or", "$:/DefaultTiddlers", "C:/dir" are no paths)
_COMMENT_URL = re.compile(r"""(?<![\w.])(https?://[^\s"'<>]+)|"""
                          r"""(?<![^\s"'(\[=,>])(\.{0,2}/[\w\-.~%/?=&;:+,]+)""")
_JS_COMMENT = re.compile(r"""(?<![:"'\\\w])//([^\n]*)|/\*(.*?)\*/""", re.S)
_ABSOLUTE = re.compile(r"""https?://[^\s"'<>()\[\]{}]+""")
_PDF_URI = re.compile(rb"/URI\s*\(([^)\s]+)\)")
_SWF_SIGNATURES = (b"FWS", b"CWS", b"ZWS")
#: a URL or path among a movie's strings: absolute, or rooted (``/``, ``./``, ``../``) with a
#: file name or a query, or a bare file name of a server page (``view.php?id=2``)
_SWF_URL = re.compile(
    rb"https?://[^\s\"'<>]+"
    rb"|\.{0,2}/[\w\-.~%/]*[\w\-~%]\.[A-Za-z0-9]{1,5}(?:\?[^\s\"'<>]*)?"
    rb"|\.{0,2}/[\w\-.~%/]+\?[^\s\"'<>]+"
    rb"|(?<![\w./])[\w\-]+\.(?:php\d?|aspx?|jsp|cgi|pl|html?|do|action|cfm)"
    rb"(?:\?[^\s\"'<>]*)?")


def swf_body(body: bytes) -> bytes:
    """A Flash movie's tags, decompressed (``CWS``: zlib; ``ZWS``: LZMA; ``FWS``: none), at
    most :data:`MAX_BODY` bytes; ``b""`` when it is not one or is damaged."""
    signature = body[:3]
    try:
        if signature == b"FWS":
            return body[8:MAX_BODY]
        if signature == b"CWS":
            return zlib.decompressobj().decompress(body[8:], MAX_BODY)
        if signature == b"ZWS":  # 4 bytes of compressed length, then LZMA's 5 property bytes
            alone = body[12:17] + b"\xff" * 8 + body[17:]  # (size unknown: an end marker)
            return lzma.LZMADecompressor(lzma.FORMAT_ALONE).decompress(alone, MAX_BODY)
    except (zlib.error, lzma.LZMAError, EOFError):
        return b""
    return b""


def swf_urls(body: bytes) -> list[str]:
    """The URLs and paths among a Flash movie's strings (:data:`_SWF_URL`), first of each:
    ``getURL`` targets and ActionScript string constants are stored as plain bytes, so its
    buttons' and loaders' URLs are read without running it (as Heritrix's SWF extractor
    does); a URL the movie builds from pieces at run time is not."""
    out: dict[str, None] = {}
    for run in re.findall(rb"[\x20-\x7e]{4,}", swf_body(body)):
        for m in _SWF_URL.finditer(run):
            out.setdefault(m.group(0).decode("ascii"), None)
            if len(out) >= MAX_PER_REPLY:
                return list(out)
    return list(out)


def css_urls(text: str) -> list[str]:
    return [m.group(2) or m.group(4) for m in _CSS_URL.finditer(text)]


_ROUTE_PARAM = re.compile(r"/:[A-Za-z_]")  # a route's parameter: "/users/:id" is no URL


def _path_like(s: str) -> bool:
    """A URL or a path a script or an attribute could name: ``/x``, ``./x``, ``../x``,
    ``http(s)://host/x``; not ``//``, ``/*`` (a comment), a regex, a router's pattern
    (``/users/:id``), nor free text."""
    if not 1 < len(s) <= 300 or not _PATH.match(s):
        return False
    path = urlsplit(s).path
    return not re.search(r"[()*$]|\.\.\.", path) and not _ROUTE_PARAM.search(path)


_WRITE_AFTER = re.compile(r"""[^;\n]{0,160}?\b(?:method|type)\s*:\s*["']"""
                          r"""(?:post|put|delete|patch)""", re.I)
_WRITE_BEFORE = re.compile(r"""(?:\.(?:post|put|delete|patch)\s*\(|open\(\s*["'](?:post|put|"""
                           r"""delete|patch)["']\s*,)\s*$""", re.I)


#: a quoted relative URL a script navigates to or loads (``location.href = "view.php?id=3"``,
#: ``window.open('help.html')``, ``a.href = 'list?page=2'``, ``form.action = "next"``): a
#: sink that only takes a URL makes any string one, also without a leading ``/``; not
#: ``xhr.open("GET", …)`` (its first argument is a method)
_SINK = re.compile(r"""(?:\blocation(?:\.href)?\s*=|\blocation\.(?:assign|replace)\s*\(|"""
                   r"""(?:\bwindow\.|(?<![\w.$]))open\s*\(|\.(?:href|src|action)\s*=)"""
                   r"""\s*(?P<q>["'])(?P<s>[\w\-.~%/?=&;:+,!@]+)(?P=q)(?!\s*\+)""")


def script_urls(text: str) -> list[str]:
    """Quoted same-shape URLs of a script: ``"/catalog/2"``, ``'../page.php'``, ``"http://…"``;
    not a string concatenated with ``+`` (a prefix: ``"/item?id=" + id``), nor one that ends
    a query (``?x=``), nor a template literal with ``${``, nor the URL of a write (``fetch(u,
    {method: "POST"})``, ``xhr.open("DELETE", u)``, ``$.post(u)``: sent by GET it could
    still change something), nor quotes inside a regex literal (``s.replace(/"/g, "&quot;")``
    is no string ``"/g, "``: its opening quote follows a ``/``); and a relative URL given to
    a navigation sink (:data:`_SINK`: ``location.href = "view.php?id=3"``)."""
    found: list[tuple[int, str]] = []
    for m in _SINK.finditer(text):
        s = m.group("s")
        if len(s) <= 300 and not s.endswith(("=", "?", "&")) and "..." not in s \
                and not _ROUTE_PARAM.search("/" + s):
            found.append((m.start("q"), s))
    for m in _STRING.finditer(text):
        s = m.group("s").replace("\\/", "/")
        if m.group("before") or m.group("after") or s.endswith(("=", "?", "&")):
            continue
        if m.start("q") > 0 and text[m.start("q") - 1] == "/":
            continue
        if _WRITE_AFTER.match(text, m.end()) \
                or _WRITE_BEFORE.search(text[max(0, m.start("q") - 40):m.start("q")]):
            continue
        if _path_like(s):
            found.append((m.start("q"), s))
    return list(dict.fromkeys(s for _, s in sorted(found)))  # each once, in text order


def comment_urls(text: str) -> list[str]:
    """URLs and paths written in a comment (a path on its own: ``and/or`` is not one)."""
    urls = ((a or b).rstrip(".,;:") for a, b in _COMMENT_URL.findall(text))
    return [u for u in urls if u.startswith("http") or _path_like(u)]


def script_comment_urls(text: str) -> list[str]:
    """:func:`comment_urls` of a script's ``//`` and ``/* */`` comments."""
    return [u for m in _JS_COMMENT.finditer(text)
            for u in comment_urls(m.group(1) or m.group(2) or "")]


def absolute_urls(text: str) -> list[str]:
    return [u.rstrip(".,;:!?") for u in _ABSOLUTE.findall(text)]


# -- robots.txt, sitemaps, feeds, JSON -----------------------------------------------------------
def robots_urls(text: str, obey: bool = True) -> Iterator[Found]:
    """robots.txt's ``Sitemap:`` lines, ``Allow:`` paths and (not obeyed) ``Disallow:`` paths."""
    for line in text.splitlines():
        name, _, value = line.split("#", 1)[0].partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "sitemap" and value:
            yield Found(value, "robots")
        elif (name == "allow" or (name == "disallow" and not obey)) and value.startswith("/") \
                and "*" not in value and value != "/":
            yield Found(value.removesuffix("$"), "robots-path")


_LOC = re.compile(rb"<(?:\w+:)?loc>\s*(?:<!\[CDATA\[)?\s*([^<\s\]]+)", re.I)
_XML_URL = re.compile(rb"""(?:href|url|src)\s*=\s*["']([^"']+)["']|"""
                      rb""">\s*(?:<!\[CDATA\[)?\s*(https?://[^<\s\]]+)""", re.I)


def xml_urls(body: bytes, base: str) -> Iterator[Found]:
    """A sitemap's (or sitemap index's) ``<loc>``s; else a feed's or any XML's URLs: ``href``,
    ``url`` and ``src`` attributes and elements whose text is a URL."""
    locs = _LOC.findall(body)
    if locs:
        for loc in locs:
            yield Found(_xml_unescape(loc.decode("utf-8", "replace")), "sitemap")
        return
    for m in _XML_URL.finditer(body):
        url = (m.group(1) or m.group(2)).decode("utf-8", "replace")
        yield Found(_xml_unescape(url), "xml")


def _xml_unescape(s: str) -> str:
    return s.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")


def json_urls(text: str) -> Iterator[Found]:
    """String values of a JSON document that are absolute http(s) URLs or root-relative paths
    (``"http://host/x"``, ``"/items/2"``), wherever they are; keys are not read, nor words,
    ``"./x"``, ``"../x"`` or ``"x/y"`` (relative to what, in an API's reply?)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return
    stack: list[Any] = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, str) and value.strip().startswith(_JSON_URL) \
                and _path_like(value.strip()):
            yield Found(value.strip(), "json")


_JSON_URL = ("/", "http://", "https://")
