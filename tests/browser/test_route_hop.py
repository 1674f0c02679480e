"""A single-page app whose start is costly, as real ones are: each load of its document fetches
``/api/boot.json`` before it draws anything, and its router then shows ``#/shelves/N`` and
``#/books/ID`` views from JSON it fetches; a book's view links its reviews view. With the lab
knob ``browser_route_hop`` (:mod:`hiddenweb.browser.hop`) a route of a document a pooled page
shows is taken there by a hash change: every view is read, the app starting fewer times than
views are rendered; without it each route loads the document again. A second app reads the
hash only as its document loads (no ``hashchange`` listener): a hop shows nothing new there,
and the route is loaded instead. Counted from the server's own log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from scrapy import Request

from hiddenweb.browser.hop import hoppable, keeps_document

CHROMIUM = Path("/usr/bin/chromium")
SHELVES = {1: ["1-a", "1-b", "1-c"], 2: ["2-a", "2-b", "2-c"]}
BOOKS = [b for books in SHELVES.values() for b in books]

ROUTER = b"""
function show(html) { document.getElementById("view").innerHTML = html; }
function get(path, then) { fetch(path).then(function (r) { return r.json(); }).then(then); }
function route() {
  var parts = (location.hash.replace(/^#/, "") || "/").split("/");
  if (parts[1] === "shelves") {
    return get("/api/shelves/" + parts[2] + ".json", function (books) {
      show(books.map(function (b) { return '<a href="#/books/' + b + '">book ' + b + '</a>'; })
           .join(" "));
    });
  }
  if (parts[1] === "books") {
    return get("/api/books/" + parts[2] + ".json", function (book) {
      show("<h1>" + book.title + '</h1><a href="#/reviews/' + parts[2] + '">reviews</a>');
    });
  }
  if (parts[1] === "reviews") {
    return get("/api/reviews/" + parts[2] + ".json", function (r) { show("<p>" + r + "</p>"); });
  }
  get("/api/shelves.json", function (ids) {
    show(ids.map(function (i) { return '<a href="#/shelves/' + i + '">shelf ' + i + '</a>'; })
         .join(" "));
  });
}
"""
HASHCHANGE = b"""<!doctype html><html><head><title>library</title></head><body>
<div id="view">loading</div><script>""" + ROUTER + b"""
get("/api/boot.json", function () { window.addEventListener("hashchange", route); route(); });
</script></body></html>"""
ON_LOAD_ONLY = b"""<!doctype html><html><head><title>library</title></head><body>
<div id="view">loading</div><script>""" + ROUTER + b"""
get("/api/boot.json", function () { route(); });
</script></body></html>"""


class App(SiteHandler):
    log: list[str] = []
    page = HASHCHANGE

    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/":
            return self._send(self.page)
        if path == "/api/boot.json":
            return self._send(b"{}", "application/json")
        if path == "/api/shelves.json":
            return self._json(list(SHELVES))
        for shelf, books in SHELVES.items():
            if path == f"/api/shelves/{shelf}.json":
                return self._json(books)
        for book in BOOKS:
            if path == f"/api/books/{book}.json":
                return self._json({"title": f"book {book}"})
            if path == f"/api/reviews/{book}.json":
                return self._json(f"reviews of {book}")
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


class OnLoadOnly(App):
    page = ON_LOAD_ONLY


def _crawl(tmp_path: Path, app: type[App], hop: bool) -> tuple[list[str], dict, set[str]]:
    with serve(app) as url:
        run = browser_crawl(tmp_path, url, HIDDENWEB_LAB=json.dumps({"browser_route_hop": hop}))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    return app.log, run.stats, {item["url"].split("/", 3)[-1] for item in run.items}


def _every_view(log: list[str], urls: set[str]) -> None:
    assert {f"/api/reviews/{b}.json" for b in BOOKS} <= set(log), sorted(log)  # 4 routes deep
    assert {f"#/books/{b}" for b in BOOKS} | {f"#/reviews/{b}" for b in BOOKS} <= urls, \
        sorted(urls)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_routes_of_a_loaded_document_are_taken_there_by_a_hash_change(tmp_path):
    log, stats, urls = _crawl(tmp_path / "on", App, hop=True)
    _every_view(log, urls)
    routes = len([u for u in urls if u.startswith("#/")])
    assert stats.get("hiddenweb/browser/route_hops", 0) >= 1, stats
    assert log.count("/api/boot.json") < routes, sorted(log)  # the app started fewer times
    # a hop's view is its own route's: each book's reviews link was read from its own view
    assert "hiddenweb/browser/route_hops_unchanged" not in stats, stats

    log, stats, urls = _crawl(tmp_path / "off", App, hop=False)
    _every_view(log, urls)
    assert "hiddenweb/browser/route_hops" not in stats, stats
    assert log.count("/api/boot.json") >= len([u for u in urls if u.startswith("#/")]), \
        sorted(log)  # each route loaded its document again


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_router_that_reads_the_hash_only_on_load_has_its_routes_loaded(tmp_path):
    log, stats, urls = _crawl(tmp_path, OnLoadOnly, hop=True)
    _every_view(log, urls)
    assert stats.get("hiddenweb/browser/route_hops_unchanged", 0) >= 1, stats


def test_only_a_plain_get_of_a_route_of_the_same_document_hops():
    page = "http://h:1/app?x=1#/shelves/1"
    assert hoppable(page, Request("http://h:1/app?x=1#/books/7"))
    assert not hoppable(page, Request("http://h:1/app?x=2#/books/7"))  # another document
    assert not hoppable(page, Request("http://h:2/app?x=1#/books/7"))  # another origin
    assert not hoppable(page, Request("http://h:1/app?x=1"))  # the document itself: a load
    assert not hoppable(page, Request("http://h:1/app?x=1#top"))  # an anchor, not a route
    assert not hoppable("about:blank", Request("http://h:1/app?x=1#/books/7"))
    assert not hoppable(page, Request("http://h:1/app?x=1#/books/7", method="POST"))
    assert not hoppable(page, Request("http://h:1/app?x=1#/books/7",
                                      meta={"playwright_page_methods": ["click"]}))
    assert not hoppable(page, Request("http://h:1/app?x=1#/books/7",
                                      meta={"hiddenweb_body": b"<html></html>"}))
    assert keeps_document("http://h:1/#/shelves", Request("http://h:1/"))  # the app's start
    assert keeps_document("http://h:1/#/books/7", Request("http://h:1/#/shelves/1"))
    assert not keeps_document("http://h:1/page", Request("http://h:1/page"))  # no route
    assert not keeps_document("http://h:1/other#/x", Request("http://h:1/#/x"))  # moved away
