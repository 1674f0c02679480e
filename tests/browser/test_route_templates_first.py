"""A single-page app whose home lists many records under one view (``#/items/N``) and whose
first record's view links a view of another kind (``#/items/1/files``), read only by that
view's script. With the lab knob ``route_templates_first`` the first route of a URL template
not requested before goes first in the DLA scheduler: the files view is rendered before most
of the records are; without it, after them (its group is younger and scores as theirs).
Counted from the order of the server's own log. Two browser pages and two requests at once, so
that the scheduler, not the downloader's queue, orders the renders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
ITEMS = 24

APP = b"""<!doctype html><html><head><title>items</title></head><body>
<div id="view">loading</div>
<script>
function show(html) { document.getElementById("view").innerHTML = html; }
function load(path, then) {
  fetch(path).then(function (r) { return r.json(); }).then(then);
}
function route() {
  var parts = (location.hash.replace(/^#/, "") || "/").split("/");
  if (parts[1] !== "items") {
    return load("/api/items.json", function (ids) {
      show(ids.map(function (i) {
        return '<a href="#/items/' + i + '">item ' + i + '</a>'; }).join(" "));
    });
  }
  var id = parts[2];
  if (parts[3] === "files") {
    return load("/api/items/" + id + "/files.json", function (x) {
      show("<p>" + x.join(" ") + "</p>");
    });
  }
  load("/api/items/" + id + ".json", function (p) {
    show("<h1>" + p.name + "</h1><p>" + p.text + "</p>"
         + (id === "1" ? '<a href="#/items/1/files">files</a>' : ""));
  });
}
window.addEventListener("hashchange", route);
route();
</script></body></html>"""

WORDS = ("amber basalt cobalt dune ember fjord garnet heath indigo jasper kelp loam marl "
         "nacre ochre peat quartz rime shale tuff umber vetch wold xenon").split()


class App(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/":
            return self._send(APP)
        if path == "/api/items.json":
            return self._json(list(range(1, ITEMS + 1)))
        if path == "/api/items/1/files.json":
            return self._json(["report.txt"])
        for n in range(1, ITEMS + 1):
            if path == f"/api/items/{n}.json":  # each record shows words of its own
                return self._json({"name": f"item {n}", "text": WORDS[n - 1]})
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _items_before_files(tmp_path: Path, first: bool) -> int:
    """How many records' views were read before the files view, in the server's order."""
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, HIDDENWEB_BROWSER_MAX_PAGES="2",
                            CONCURRENT_REQUESTS="2",
                            HIDDENWEB_LAB=json.dumps({"route_templates_first": first}))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    log = App.log
    items = [p for p in log if p.startswith("/api/items/") and p.count("/") == 3]
    assert len(set(items)) == ITEMS, sorted(set(log))  # every record read, either way
    assert "/api/items/1/files.json" in log, sorted(set(log))
    firsts = run.stats.get("hiddenweb/dla/route_templates_first", 0)
    assert (firsts >= 2) if first else firsts == 0, run.stats  # #/items/{n}, its files view
    files = log.index("/api/items/1/files.json")
    return len(set(p for p in log[:files] if p in items))


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_view_of_a_new_template_is_rendered_before_more_records_of_a_known_one(tmp_path):
    on = _items_before_files(tmp_path / "on", first=True)
    off = _items_before_files(tmp_path / "off", first=False)
    assert on <= ITEMS // 2 < off, (on, off)
