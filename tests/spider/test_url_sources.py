"""URL sources without a browser and replies of every type (issues 24 and 30), end to end:
``scrapy crawl hwdla`` over plain HTTP against a small site served on 127.0.0.1 by an HTTP/1.1
keep-alive server that logs every request. Each page names a URL one way only (a header, a
meta refresh, CSS, ``srcset``, a data attribute, a script string, a comment, an ``<object>``,
an SVG link, a ``cite``, click handlers, a JSON-LD block, robots.txt, a sitemap index, a feed,
JSON values, a PDF); what the crawl reached is read from the server's
log, and where it found each URL from the items' ``source``."""

from __future__ import annotations

import lzma
import struct
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

from hiddenweb.urlsources import swf_urls


def page(body: str, head: str = "", title: str = "Page") -> bytes:
    return (f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
            ).encode()


HOME = page(
    '<a href="/data.json">data</a> <a href="/feed.xml">feed</a> <a href="/notes.txt">notes</a>'
    ' <a href="/doc.pdf">manual</a> <a href="/download?id=7">firmware</a>'
    ' <a href="/archive.zip">archive</a>'
    '<img srcset="/img/small.png 1x, /picture?id=2 2x">'
    '<div class="row" data-href="/data-page">A row</div>'
    '<div data-url="/account/delete" data-method="delete">Remove</div>'
    '<div style="background: url(\'/styled-page\')"></div>'
    '<script>document.getElementById("go").onclick = function () {'
    ' location.href = "/script-page"; };'
    ' var item = "/prefix?id=" + 7; var off = "http://example.com/offsite";'
    ' fetch("/api/seen", {method: "POST", body: "1"});'
    ' // the old page: /script-comment-page\n</script>'
    '<script src="/app.js"></script>'
    '<!-- moved: /comment-page -->'
    '<object data="/object-page"></object>'
    '<noscript><embed src="/movie.swf" type="application/x-shockwave-flash"></noscript>'
    '<svg><a xlink:href="/svg-page"><text>Chart</text></a></svg>'
    '<blockquote cite="/cited-page">A quote</blockquote>'
    '<button type="button" onclick="location.href=\'/handler-page\'">Next</button>'
    '<a href="javascript:window.open(\'/popup-page\')">Popup</a>'
    '<a href="#" onclick="if (confirm(\'Sure?\')) location=\'/handler-confirm\'">Go</a>'
    '<span onclick="$.post(\'/handler-post\')">Like</span>'
    '<script type="application/ld+json">{"@type": "WebPage", "url": "/ld-page"}</script>',
    head='<meta http-equiv="refresh" content="600; url=/refresh-page">'
         '<link rel="alternate" href="/alternate-page"><link rel="next" href="/next-page">'
         '<link rel="stylesheet" href="/site.css">'
         '<style>@import "/theme.css";</style>',
    title="Home")
APP_JS = b'fetch("/from-external-script").then(function (r) { return r.json(); });'
SITE_CSS = b'.logo { background: url(/logo.png) } .x { background: url("/css-page") }'
ROBOTS = "User-agent: *\nDisallow: /private\nAllow: /robots-allowed\nSitemap: {base}/sm-index.xml\n"
SM_INDEX = ('<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/'
            'schemas/sitemap/0.9"><sitemap><loc>{base}/sm-pages.xml</loc></sitemap></sitemapindex>')
SM_PAGES = ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/'
            'sitemap/0.9"><url><loc>{base}/sitemap-page</loc></url></urlset>')
FEED = ('<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>{base}/</link>'
        '<item><title>One</title><link>{base}/feed-item</link></item></channel></rss>')
# same-site: a root-relative path and an absolute URL; not: another host on this very server
# (hosts are compared, not host:port), words, a relative path (relative to what, in an API?)
DATA = ('{{"items": [{{"title": "a", "url": "/json-page"}}, {{"next": "{base}/json-absolute"}}],'
        ' "elsewhere": "http://localhost:{port}/json-offsite", "note": "not a url",'
        ' "slug": "json-word", "rel": "./json-relative", "count": 2}}')
#: what the JSON reply names that is never requested
JSON_NEVER = ("/json-offsite", "/json-word", "/json-relative")
PDF = (b"%PDF-1.4\n1 0 obj << /Type /Annot /A << /S /URI"
       b" /URI (http://127.0.0.1:{port}/pdf-page) >> >>")


def movie(url: str, signature: bytes = b"CWS", target: str = "_self") -> bytes:
    """A one-frame Flash movie whose DoAction tag asks for ``url`` (ActionGetURL), stored as
    ``signature`` says: ``FWS`` as it is, ``CWS`` zlib-compressed, ``ZWS`` LZMA-compressed."""
    get = url.encode() + b"\0" + target.encode() + b"\0"
    actions = b"\x83" + struct.pack("<H", len(get)) + get + b"\x00"  # ActionGetURL, ActionEnd
    do_action = struct.pack("<HI", (12 << 6) | 0x3F, len(actions)) + actions  # a long tag
    tags = do_action + struct.pack("<HH", 1 << 6, 0)  # ShowFrame, End
    body = b"\x00" + struct.pack("<HH", 12 << 8, 1) + tags  # empty frame, 12 fps, 1 frame
    head = signature + bytes([6 if signature != b"ZWS" else 13]) \
        + struct.pack("<I", 8 + len(body))
    if signature == b"FWS":
        return head + body
    if signature == b"CWS":
        return head + zlib.compress(body)
    alone = lzma.compress(body, format=lzma.FORMAT_ALONE)  # 5 property bytes, 8 of size
    return head + struct.pack("<I", len(alone) - 13) + alone[:5] + alone[13:]
# every URL a source names, by the source the item must carry
EXPECTED = {"/data-page": "data", "/styled-page": "css", "/script-page": "script",
            "/script-comment-page": "comment", "/comment-page": "comment",
            "/refresh-page": "refresh", "/alternate-page": "alternate",
            "/next-page": "link-tag", "/site.css": "css",
            "/theme.css": "css", "/css-page": "css", "/app.js": "script",
            "/from-external-script": "script", "/picture": "srcset",
            "/robots-allowed": "robots-path", "/sm-index.xml": "robots",
            "/sm-pages.xml": "sitemap", "/sitemap-page": "sitemap", "/feed-item": "xml",
            "/json-page": "json", "/json-absolute": "json", "/pdf-page": "pdf",
            "/header-page": "header", "/object-page": "embed", "/svg-page": "svg",
            "/cited-page": "cite", "/handler-page": "handler", "/popup-page": "handler",
            "/ld-page": "json", "/movie.swf": "embed", "/swf-page": "swf"}
TYPES = {"/data.json": "application/json", "/feed.xml": "application/rss+xml",
         "/notes.txt": "text/plain", "/doc.pdf": "application/pdf",
         "/download": "application/octet-stream"}


class Site(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        self.log.append(path)
        port = self.server.server_address[1]
        base = f"http://127.0.0.1:{port}"
        texts = {"/robots.txt": (ROBOTS, "text/plain"),
                 "/sm-index.xml": (SM_INDEX, "application/xml"),
                 "/sm-pages.xml": (SM_PAGES, "application/xml"),
                 "/feed.xml": (FEED, TYPES["/feed.xml"]),
                 "/data.json": (DATA, TYPES["/data.json"]),
                 "/notes.txt": (f"Release notes. Mirror: {base}/text-page\n", "text/plain")}
        if path == "/":
            return self._send(HOME, headers={"Link": '</header-page>; rel="next"'})
        if path in texts:
            text, ctype = texts[path]
            return self._send(text.format(base=base, port=port).encode(), ctype)
        if path == "/doc.pdf":
            return self._send(PDF.replace(b"{port}", str(port).encode()), TYPES["/doc.pdf"])
        if path == "/movie.swf":  # labelled as servers often do: the signature says Flash
            return self._send(movie("../swf-page?from=movie"), "application/octet-stream")
        if path in ("/download", "/archive.zip"):
            return self._send(bytes(range(256)) * 4, TYPES["/download"])
        if path == "/app.js":
            return self._send(APP_JS, "application/javascript")
        if path in ("/site.css", "/theme.css"):
            return self._send(SITE_CSS + f"/* {path} */".encode(), "text/css")
        if path == "/sitemap.xml":
            return self._send(page("Not found"), status=404)
        return self._send(page(f"<h1>{path}</h1>", title=path))


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def test_every_url_source_is_followed_and_every_reply_type_is_an_item(site, tmp_path: Path):
    """By default: the declared sources and the guessed ones."""
    run = run_crawl(tmp_path, "-a", f"seed={site}/",
                    settings={"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert " ERROR: " not in run.stderr and "Traceback" not in run.stderr, run.stderr[-3000:]
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    # one item per reply, with its content type, whatever the type
    for path, ctype in TYPES.items():
        assert by_path[path]["content_type"] == ctype and by_path[path]["status"] == 200
    # every source's URL reached, and its item says where it was found
    missing = sorted(set(EXPECTED) - set(Site.log))
    assert not missing, missing
    sources = {p: by_path[p]["source"] for p in EXPECTED}
    assert sources == EXPECTED
    assert by_path["/"]["source"] == "seed" and by_path["/data.json"]["source"] == "link"
    assert by_path["/robots.txt"]["source"] == "well-known"
    # not followed: a concatenated prefix, robots.txt's Disallow, an image, a destructive data
    # attribute (the safety policy), the text reply's URL is a guess but same-site: followed
    assert "/text-page" in Site.log
    # a handler asking confirm() first (the safety policy), a handler's POST
    for never in ("/prefix", "/private", "/img/small.png", "/logo.png", "/account/delete",
                  "/archive.zip", "/api/seen", *JSON_NEVER,  # /api/seen: a script's POST
                  "/handler-confirm", "/handler-post"):
        assert never not in Site.log, never
    stats = run.stats or {}
    assert stats.get("hiddenweb/sources/json") == 3
    assert stats.get("hiddenweb/sources/handler") == 2
    assert stats.get("hiddenweb/safety/links_refused", 0) >= 1


def test_url_sources_off_follows_links_only(site, tmp_path: Path):
    run = run_crawl(tmp_path, "-a", f"seed={site}/",
                    settings={"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO",
                              "HIDDENWEB_URL_SOURCES": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert " ERROR: " not in run.stderr
    assert not set(EXPECTED) & set(Site.log) - {"/robots.txt"}
    assert {urlsplit(i["url"]).path for i in run.items} == {"/", *TYPES}


#: the sources followed with HIDDENWEB_URL_GUESSES off, JSON values among them
DECLARED = {"/header-page", "/refresh-page", "/next-page", "/sm-index.xml", "/sm-pages.xml",
            "/sitemap-page", "/feed-item", "/json-page", "/json-absolute", "/ld-page",
            "/object-page", "/svg-page", "/handler-page", "/popup-page", "/movie.swf"}


def test_with_guesses_off_only_declared_sources_are_followed(site, tmp_path: Path):
    run = run_crawl(tmp_path, "-a", f"seed={site}/",
                    settings={"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO",
                              "HIDDENWEB_URL_GUESSES": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert " ERROR: " not in run.stderr
    assert DECLARED <= set(Site.log), sorted(DECLARED - set(Site.log))
    guessed = set(EXPECTED) - DECLARED - {"/robots.txt"}
    assert not guessed & set(Site.log), sorted(guessed & set(Site.log))
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    for path in TYPES:  # every reply type is still an item
        assert path in by_path
    # the JSON reply's same-site URLs (root-relative and absolute) are followed, and their
    # items say so; its other host, words and relative paths are not
    assert by_path["/json-page"]["source"] == by_path["/json-absolute"]["source"] == "json"
    assert not set(JSON_NEVER) & set(Site.log), sorted(set(JSON_NEVER) & set(Site.log))
    assert (run.stats or {}).get("hiddenweb/sources/json") == 3


def test_a_flash_movie_s_urls_are_read_however_it_is_stored():
    for signature in (b"FWS", b"CWS", b"ZWS"):
        assert swf_urls(movie("../catalog/item.php?id=4", signature)) \
            == ["../catalog/item.php?id=4"], signature
    assert swf_urls(movie("http://h/a/b.html", target="_blank")) == ["http://h/a/b.html"]
    assert swf_urls(movie("view.cfm?page=2")) == ["view.cfm?page=2"]
    assert swf_urls(movie("not a url")) == []  # words
    assert swf_urls(b"CWS\x06\x10\x00\x00\x00damaged") == []  # not zlib: nothing, no error
    assert swf_urls(b"GIF89a/images/x.php") == []  # not a movie
