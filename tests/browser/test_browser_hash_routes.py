"""A single-page app routed on the hash, as real ones are built: one document, whose script shows
``#/shelves/N`` and ``#/books/ID`` views from JSON it fetches, and loads each view's styles
before it shows anything (a code-split app's CSS chunk: a failed stylesheet is its error page).
Each hash route is a page of its own (:mod:`hiddenweb.routes`): rendered straight in Chromium,
three routes deep. Counted from the server's own log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin

import pytest
from crawlrun import CrawlRun, run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from scrapy import Request

from hiddenweb.browser.scripts import ROUTE_HREF_JS
from hiddenweb.pagetext import template_key
from hiddenweb.routes import RouteFingerprinter, is_route, route_of, route_page

CHROMIUM = Path("/usr/bin/chromium")
SHELVES = {1: ["1-a", "1-b"], 2: ["2-a", "2-b", "2-c"]}

APP = b"""<!doctype html><html><head><title>library</title></head><body>
<div id="view">loading</div>
<script>
function styles(href) {  // a view's CSS chunk: the view is shown once it loaded
  return new Promise(function (ok, fail) {
    var link = document.createElement("link");
    link.rel = "stylesheet"; link.href = href; link.onload = ok; link.onerror = fail;
    document.head.appendChild(link);
  });
}
function show(html) { document.getElementById("view").innerHTML = html; }
function route() {
  var hash = location.hash.replace(/^#/, "") || "/";
  var parts = hash.split("/");
  styles("/static/view.css").then(function () {
    if (hash === "/") {
      return fetch("/api/shelves.json").then(function (r) { return r.json(); })
        .then(function (ids) {
          show(ids.map(function (i) { return '<a href="#/shelves/' + i + '">shelf ' + i + '</a>'; })
               .join(" "));
        });
    }
    if (parts[1] === "shelves") {
      return fetch("/api/shelves/" + parts[2] + ".json").then(function (r) { return r.json(); })
        .then(function (books) {
          show(books.map(function (b) { return '<a href="#/books/' + b + '">book ' + b + '</a>'; })
               .join(" "));
        });
    }
    if (parts[1] === "books") {
      return fetch("/api/books/" + parts[2] + ".json").then(function (r) { return r.json(); })
        .then(function (book) { show("<h1>" + book.title + "</h1>"); });
    }
  }, function () { show("<h1>Something went wrong</h1>"); });
}
window.addEventListener("hashchange", route);
route();
</script></body></html>"""


class App(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/":
            return self._send(APP)
        if path == "/static/view.css":
            return self._send(b"#view { color: #222 }", "text/css")
        if path == "/api/shelves.json":
            return self._json(list(SHELVES))
        for shelf, books in SHELVES.items():
            if path == f"/api/shelves/{shelf}.json":
                return self._json(books)
            for book in books:
                if path == f"/api/books/{book}.json":
                    return self._json({"title": f"book {book}"})
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, settings: dict | None = None) -> tuple[list[str], str, CrawlRun]:
    """The server's log, its base URL and the crawl, which must have ended well."""
    with serve(App) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO",
                                  **(settings or {})}, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return App.log, url, run


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_every_hash_route_of_a_single_page_app_is_a_page_rendered_in_chromium(tmp_path):
    log, base, run = _crawl(tmp_path)
    books = {f"/api/books/{b}.json" for bs in SHELVES.values() for b in bs}
    assert books <= set(log), sorted(log)  # three routes deep: home, shelf, book
    urls = {item["url"] for item in run.items}
    assert {f"{base}/#/shelves/{s}" for s in SHELVES} <= urls, sorted(urls)
    assert {f"{base}/#/books/{b}" for bs in SHELVES.values() for b in bs} <= urls, sorted(urls)
    # each route read once, in Chromium, not first over plain HTTP (whose copy is the shell)
    assert log.count("/") <= 1 + len(urls)
    assert run.stats["hiddenweb/browser/pages"] >= 1 + len(SHELVES) + len(books)


def test_a_hash_route_is_its_fragment_and_keeps_it_in_the_fingerprint_and_template():
    assert route_of("http://h/#/runs/7?tab=1") == "/runs/7?tab=1"
    assert route_of("http://h/#!/about") == "!/about"
    assert route_of("http://h/page#section") is None  # an anchor in the page
    assert route_of("http://h/#/") is None and route_of("http://h/") is None  # the app's root
    assert route_of("http://h/#!about") == "!about"  # a hashbang with no slash


def test_the_scripts_and_the_crawl_read_the_same_hrefs_as_hash_routes():
    """ROUTE_HREF_JS (a JS regex literal, plain enough for Python's re) and route_of agree on
    every same-document href. Before, a hashbang with no slash (``#!about``) was a page of its
    own for the crawl but an anchor for the scripts (clicked in its page, not routed again when
    rendered), and the bare ``#/`` and ``#!/``, the document itself for the crawl, were routes
    for the scripts, so a link with that href and a click handler was never fired."""
    pattern = re.compile(ROUTE_HREF_JS[1:-1])
    for href in ("#/runs/7", "#/runs/7?tab=1", "#!/about", "#!about", "#!key=value", " #/x",
                 "#/", "#!", "#!/", "#!/ ", "#section", "#", "page", "javascript:void(0)"):
        assert bool(pattern.match(href)) == is_route(urljoin("http://h/", href.strip())), href
    fp = RouteFingerprinter()
    assert fp.fingerprint(Request("http://h/#/runs/7")) != fp.fingerprint(Request("http://h/#/runs/8"))
    assert fp.fingerprint(Request("http://h/#/runs/7")) != fp.fingerprint(Request("http://h/"))
    assert fp.fingerprint(Request("http://h/a#x")) == fp.fingerprint(Request("http://h/a#y"))
    # a route's query is the view's options or a heading of it: one page
    assert route_page("http://h/#/guide?id=setup") == "http://h/#/guide"
    assert fp.fingerprint(Request("http://h/#/guide?id=setup")) \
        == fp.fingerprint(Request("http://h/#/guide"))
    assert template_key("http://h:1/#/runs/7?tab=1") == template_key("http://h:1/#/runs/8") \
        == "h/#/runs/{n}"
    assert template_key("http://h:1/a#x") == "h/a"


PAGES = [f"topic-{n}" for n in range(1, 17)]
DOCS = ("""<!doctype html><html><head><title>manual</title></head><body>
<nav id="sidebar"></nav><main id="view">loading</main>
<footer>""" + " ".join(f'<a href="/text/{p}.txt">{p} as text</a>' for p in PAGES) + """</footer>
<script>
fetch("/sidebar.json").then(function (r) { return r.json(); }).then(function (pages) {
  document.getElementById("sidebar").innerHTML = pages.map(function (p) {
    return '<a href="#/' + p.name + '">' + p.name + '</a>'; }).join(" ");
  function route() {
    var name = location.hash.replace(/^#\\//, "");
    var page = pages.filter(function (p) { return p.name === name; })[0];
    if (!page) { document.getElementById("view").textContent = "welcome"; return; }
    fetch(page.src).then(function (r) { return r.text(); }).then(function (text) {
      document.getElementById("view").textContent = text;
    });
  }
  window.addEventListener("hashchange", route);
  route();
});
</script></body></html>""").encode()


class Docs(SiteHandler):
    """A documentation app (Docsify's kind): every page is a hash route linked from the
    sidebar the script builds, and its text file is linked from the page's footer too, read
    over plain HTTP; a route's render fetches that text and links nothing the sidebar did not."""

    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        if self.path == "/":
            return self._send(DOCS)
        if self.path == "/sidebar.json":
            return self._json([{"name": p, "src": f"/text/{p}.txt"} for p in PAGES])
        if self.path.startswith("/text/"):
            return self._send(f"the text of {self.path}".encode(), "text/plain")
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
@pytest.mark.parametrize(("share", "judge_read"), [(0.25, True), (0.25, False), (0.0, True)])
def test_the_routes_of_an_app_whose_route_renders_add_nothing_stop_being_rendered(
        tmp_path, share, judge_read):
    """Judged idle once 4 routes (2 × browser_min_renders) added nothing, the other routes are
    not rendered. A route's fetch of a text the crawl read already adds nothing
    (browser_judge_read); without that, each render fetched a URL no render had: useful."""
    with serve(Docs) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "HIDDENWEB_BROWSER_MAX_PAGES": "2",
                                  # share 0 with the template rule off too: the 16 routes
                                  # are one template (#/topic-{n}), which it judges as well
                                  "HIDDENWEB_LAB": json.dumps({"browser_route_share": share,
                                                               "browser_judge_read": judge_read,
                                                               "browser_route_templates":
                                                                   bool(share)}),
                                  "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO"},
                        timeout=300)
        log = list(Docs.log)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {f"/text/{p}.txt" for p in PAGES} <= set(log), sorted(log)  # every page's text
    routes = [i["url"] for i in run.items if "#/" in i["url"]]
    withdrawn = run.stats.get("hiddenweb/browser/routes_withdrawn", 0)
    if share and judge_read:  # judged after 4, 2 more in flight (2 pages): not all 16
        assert withdrawn >= len(PAGES) // 2 and len(routes) + withdrawn == len(PAGES), routes
    else:
        assert not withdrawn and len(routes) == len(PAGES), routes


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_the_routes_of_one_idle_view_template_stop_being_rendered_by_the_template_alone(tmp_path):
    """The document rule off (browser_route_share 0): the 16 routes are one template
    (``#/topic-{n}``), judged idle once 2 of its renders (browser_min_renders) added nothing,
    and its other routes are not rendered but the 10th skipped (browser_route_templates)."""
    with serve(Docs) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "HIDDENWEB_BROWSER_MAX_PAGES": "2",
                                  "HIDDENWEB_LAB": json.dumps({"browser_route_share": 0.0,
                                                               "browser_route_templates": True}),
                                  "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO"},
                        timeout=300)
        log = list(Docs.log)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {f"/text/{p}.txt" for p in PAGES} <= set(log), sorted(log)  # read over plain HTTP
    routes = [i["url"] for i in run.items if "#/" in i["url"]]
    withdrawn = run.stats.get("hiddenweb/browser/routes_withdrawn", 0)
    # judged after 2, 2 more in flight (2 pages), the 10th skipped looked at: 5 rendered or so
    assert withdrawn >= len(PAGES) // 2 and len(routes) + withdrawn == len(PAGES), routes
