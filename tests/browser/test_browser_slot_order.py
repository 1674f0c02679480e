"""Chromium's requests wait in the scheduler, not in the download slot's queue (lab knob
``dla_hold_full_slot``, :meth:`hiddenweb.dla.scheduler.DLAScheduler._full_slots`).

A single-page app whose first view links one record's files view before its records'
overviews; each view's data is read by its script (``/api/…``). With one Chromium page, the
files view's render proves the view, and the crawl asks for it under the other records met
(sibling views, served first: :mod:`hiddenweb.routesiblings`). Held in the scheduler, the
siblings go before the overviews queued earlier; queued in the slot (knob off), the engine had
taken every overview into the slot's FIFO queue before any sibling was made, and they all went
first. Counted from the server's own log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
RECORDS = range(1, 9)

APP = b"""<!doctype html><html><head><title>records</title></head><body>
<div id="view">loading</div>
<script>
function show(html) { document.getElementById("view").innerHTML = html; }
function load(path, then) {
  fetch(path).then(function (r) { return r.json(); }).then(then);
}
function route() {
  var parts = (location.hash.replace(/^#/, "") || "/").split("/");
  if (parts[1] !== "records") {
    return load("/api/records.json", function (ids) {
      show('<a href="#/records/1/files">files of record 1</a> ' + ids.map(function (i) {
        return '<a href="#/records/' + i + '">record ' + i + '</a>'; }).join(" "));
    });
  }
  var view = parts[3] || "overview";
  load("/api/records/" + parts[2] + "/" + view + ".json", function (x) {
    show("<p>" + JSON.stringify(x) + "</p>");
  });
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
        if path == "/api/records.json":
            return self._json(list(RECORDS))
        for n in RECORDS:
            for view in ("overview", "files"):
                if path == f"/api/records/{n}/{view}.json":
                    return self._json({"record": n, view: [f"{view}-{n}"]})
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, hold: bool) -> list[str]:
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, HIDDENWEB_URL_GUESSES="1",
                            HIDDENWEB_BROWSER_MAX_PAGES="1",
                            HIDDENWEB_LAB=json.dumps({"dla_hold_full_slot": hold}))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    assert run.stats.get("hiddenweb/sources/sibling", 0) >= 2, run.stats
    held = run.stats.get("hiddenweb/dla/slot_full", 0)
    assert held > 0 if hold else held == 0, run.stats
    return [p for p in App.log if p.startswith("/api/records/")]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_browser_requests_wait_in_the_scheduler_so_sibling_views_go_first(tmp_path):
    for hold in (True, False):
        reads = _crawl(tmp_path / str(hold), hold)
        assert {f"/api/records/{n}/overview.json" for n in RECORDS} <= set(reads), reads
        siblings = [i for i, p in enumerate(reads)
                    if p.endswith("/files.json") and p != "/api/records/1/files.json"]
        overviews = [i for i, p in enumerate(reads) if p.endswith("/overview.json")]
        assert siblings, reads
        if hold:  # a sibling's render before the last overviews queued before it was made
            assert siblings[0] < overviews[-1], reads
        else:
            assert siblings[0] > overviews[-1], reads
