"""A hash-routed app whose views hold a filter form with no action of its own: submitted, it
lands on ``/?q=WORD#/shelves/N``, the same shell under a query, and every route link of that
view is then ``/?q=WORD#/books/ID``, a book the crawl read as ``/#/books/ID``
(:mod:`hiddenweb.browser.shells`). Counted from the server's own log: the book views fetched
and the documents loaded under a query, with the rule on and off."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlrun import run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

from hiddenweb.browser.shells import RouteShells

CHROMIUM = Path("/usr/bin/chromium")
SHELVES = {1: ["1-a", "1-b", "1-c"], 2: ["2-a", "2-b", "2-c"]}

APP = b"""<!doctype html><html><head><title>library</title></head><body>
<div id="view">loading</div>
<script>
function show(html) {  // with the time it was shown, as "updated 3 minutes ago" is
  document.getElementById("view").innerHTML = html + "<p>shown at " + Date.now() + "</p>";
}
function route() {
  var parts = (location.hash.replace(/^#/, "") || "/").split("/");
  if (parts[1] === "shelves") {
    return fetch("/api/shelves/" + parts[2] + ".json").then(function (r) { return r.json(); })
      .then(function (books) {
        show("<form><input name='q' placeholder='filter these books'>"
             + "<button>Filter</button></form>"
             + books.map(function (b) { return '<a href="#/books/' + b + '">book ' + b + '</a>'; })
               .join(" "));
      });
  }
  if (parts[1] === "books") {
    return fetch("/api/books/" + parts[2] + ".json").then(function (r) { return r.json(); })
      .then(function (book) { show("<h1>" + book.title + "</h1><a href='#/'>home</a>"); });
  }
  show('<a href="#/shelves/1">poetry shelf</a> <a href="#/shelves/2">travel shelf</a>');
}
window.addEventListener("hashchange", route);
route();
</script></body></html>"""


class App(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/" or path.startswith("/?"):  # the shell, whatever the query
            return self._send(APP)
        for shelf, books in SHELVES.items():
            if path == f"/api/shelves/{shelf}.json":
                return self._json(books)
            for book in books:
                if path == f"/api/books/{book}.json":
                    title = f"{book} {'poems' if shelf == 1 else 'journeys'} of the {book} kind"
                    return self._json({"title": title})
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, shells: bool) -> tuple[list[str], dict]:
    with serve(App) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "CLOSESPIDER_TIMEOUT": "150", "LOG_LEVEL": "INFO",
                                  "HIDDENWEB_LAB": {"browser_route_shells": shells}},
                        timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return list(App.log), run.stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_routes_under_a_query_of_the_same_shell_are_not_rendered_again(tmp_path):
    arms = {on: _crawl(tmp_path / str(on), on) for on in (True, False)}
    books = [f"/api/books/{b}.json" for bs in SHELVES.values() for b in bs]
    fetched = {}
    for on, (log, stats) in arms.items():
        assert set(books) <= set(log), (on, sorted(set(log)))  # every book read either way
        under_query = [p for p in log if p.startswith("/?")]
        fetched[on] = (sum(log.count(b) for b in books), len(under_query),
                       stats.get("hiddenweb/browser/routes_same_shell", 0))
    (books_on, queried_on, same_on), (books_off, queried_off, same_off) = \
        fetched[True], fetched[False]
    assert queried_off > 0  # the filter form was sent: its answers are the shell under a query
    assert same_off == 0 and same_on > 0
    assert books_on < books_off, fetched  # each book's view rendered fewer times
    assert queried_on < queried_off, fetched


def test_route_shells_fold_the_queries_of_a_path_answered_with_one_document():
    shells = RouteShells()
    shell, other = b"<html>app</html>", b"<html>app, lang=fr</html>"
    assert shells.claim("http://h/#/books/1") and shells.claim("http://h/#/books/2")
    # not known as one shell yet: a route under a query is its own page
    assert shells.claim("http://h/?q=a#/books/1")
    shells.note("http://h/#/books/1", shell)
    shells.note("http://h/?lang=fr#/books/1", other)  # another document: not folded
    assert shells.claim("http://h/?q=b#/books/2")
    shells.note("http://h/?q=a#/books/1", shell)  # the same bytes under a query: one shell
    assert not shells.claim("http://h/?q=c#/books/1")  # read as /#/books/1 (and ?q=a)
    assert not shells.claim("http://h/?q=c#/books/2?tab=x")  # a route's own query folded too
    assert shells.claim("http://h/?q=a#/books/1")  # its own claim: a retry is rendered
    assert shells.claim("http://h/?q=c#/books/3")  # a route not read yet: this one claims it
    assert not shells.claim("http://h/#/books/3")
    assert shells.claim("http://h/other?q=c#/books/1")  # another path: another shell
    assert shells.claim("http://h/page?q=1")  # not a route
