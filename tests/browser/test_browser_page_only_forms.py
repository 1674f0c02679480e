"""Two forms a script takes over, on one page: a bookmark form whose script keeps each name
typed in the page's own storage and lists them (it sends nothing: a query tool's "save" form),
and a search form whose script fetches the answer. Both are submitted in Chromium; the
bookmark form is submitted no more once its first submissions sent no request
(:meth:`hiddenweb.forms.crawl.FormCrawler.heard`), the search form goes on. Counted from the
server's own log: each submission in Chromium loads the page afresh."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")

PAGE = b"""<!doctype html><html><head><title>query tool</title></head><body>
<h1>Query tool</h1>
<form id="bookmark"><input name="bookmark" placeholder="Bookmark name">
<button type="submit">Save bookmark</button></form>
<ul id="saved"></ul>
<form id="find"><input name="q" placeholder="Search the records">
<button type="submit">Search</button></form>
<div id="hits"></div>
<script>
function listSaved() {
  var names = JSON.parse(localStorage.getItem("bookmarks") || "[]");
  document.getElementById("saved").innerHTML = names.map(function (n) {
    return "<li>" + n + "</li>"; }).join("");
}
document.getElementById("bookmark").addEventListener("submit", function (e) {
  e.preventDefault();
  var names = JSON.parse(localStorage.getItem("bookmarks") || "[]");
  names.push(e.target.elements.bookmark.value + " " + names.length);
  localStorage.setItem("bookmarks", JSON.stringify(names));
  listSaved();
});
document.getElementById("find").addEventListener("submit", function (e) {
  e.preventDefault();
  fetch("/api/search?q=" + encodeURIComponent(e.target.elements.q.value))
    .then(function (r) { return r.json(); })
    .then(function (hits) {
      document.getElementById("hits").innerHTML = hits.map(function (h) {
        return '<a href="/records/' + h + '">' + h + '</a>'; }).join(" ");
    });
});
listSaved();
</script></body></html>"""


class App(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        url = urlsplit(self.path)
        if url.path == "/":
            return self._send(PAGE)
        if url.path == "/api/search":
            q = parse_qs(url.query).get("q", [""])[0]
            hits = [f"{q or 'all'}-{n}" for n in (1, 2)]
            return self._json(hits)
        if url.path.startswith("/records/"):
            return self._send(f"<html><title>{url.path}</title><p>record</p></html>".encode())
        return self._send(b"", "text/plain", 404 if url.path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, after: int):
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, 10, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_MAX_SUBMISSIONS_PER_FORM="8",
                            HIDDENWEB_LAB=json.dumps({"form_page_only_after": after}))
        log = list(App.log)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    return run, log


def _bookmarks(run) -> int:
    """The bookmark form's submissions answered (its answers, the items it reached)."""
    return sum(1 for i in run.items if i["reached_by"]["kind"] == "form"
               and "bookmark" in (i["reached_by"]["form"] or {}).get("fields", {}))


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_form_that_sends_nothing_when_submitted_is_submitted_no_more(tmp_path):
    run, log = _crawl(tmp_path / "on", after=2)
    assert run.stats.get("hiddenweb/forms/page_only") == 1, run.stats
    assert _bookmarks(run) == 2, [i["reached_by"] for i in run.items]  # one at a time
    searches = {p for p in log if p.startswith("/api/search?q=")}
    assert len(searches) >= 5, log  # the search form goes on, its values each sent
    run, log = _crawl(tmp_path / "off", after=0)
    assert "hiddenweb/forms/page_only" not in run.stats, run.stats
    assert _bookmarks(run) >= 5, [i["reached_by"] for i in run.items]
