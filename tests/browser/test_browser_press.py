"""Controls that act on the press, not on the click, as design systems build them: tabs that
switch on ``mousedown`` (Radix's tabs, which MLflow's run page uses) and a menu that opens on
``pointerdown`` and cancels it (Radix's dropdown trigger), both through one listener on the
app's root (React's). ``el.click()`` fires neither; a fired click is a person's: pressed, then
clicked (:data:`hiddenweb.browser.scripts.PRESS_CLICK_JS`). Counted from the server's own log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
FILES = {"summary": ["overview"], "files": ["report-a", "report-b"], "history": ["week-1"]}

APP = b"""<!doctype html><html><head><title>run 7</title></head><body>
<div id="app">
  <div role="tablist">
    <button type="button" role="tab" data-tab="summary" aria-selected="true">Summary</button>
    <button type="button" role="tab" data-tab="files" aria-selected="false">Files</button>
    <button type="button" role="tab" data-tab="delete" aria-selected="false">Delete run</button>
  </div>
  <button type="button" id="menu" aria-haspopup="menu">More</button>
  <div id="panel"></div>
  <div id="popup"></div>
</div>
<script>
var app = document.getElementById("app");
function show(where, tab) {
  fetch("/api/" + tab + ".json").then(function (r) { return r.json(); }).then(function (names) {
    document.getElementById(where).innerHTML = names.map(function (n) {
      return '<a href="/docs/' + n + '">' + n + '</a>'; }).join(" ");
  });
}
// one listener on the root for every control, as React attaches them
app.addEventListener("mousedown", function (e) {
  var tab = e.target.closest && e.target.closest("[role=tab]");
  if (!tab || e.button !== 0) return;
  if (tab.dataset.tab === "delete") { fetch("/api/delete-run", {method: "POST"}); return; }
  show("panel", tab.dataset.tab);
});
app.addEventListener("pointerdown", function (e) {
  if (e.target.id !== "menu" || e.button !== 0) return;
  e.preventDefault();  // a press the menu took: the browser sends no mousedown after it
  show("popup", "history");
});
show("panel", "summary");
</script></body></html>"""


class App(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(("GET", self.path))
        if self.path == "/":
            return self._send(APP)
        name = self.path.removeprefix("/api/").removesuffix(".json")
        if name in FILES:
            return self._json(FILES[name])
        if self.path.startswith("/docs/"):
            return self._send(f"<html><title>{self.path}</title><p>doc</p></html>".encode())
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)

    def do_POST(self) -> None:  # noqa: N802
        self.log.append(("POST", self.path))
        self._send(b"{}", "application/json")


def _crawl(tmp_path: Path, press: bool):
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, 10, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_LAB=json.dumps({"browser_press_clicks": press}))
        log = list(App.log)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, log


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_control_that_acts_on_the_press_is_pressed_then_clicked(tmp_path):
    run, log = _crawl(tmp_path / "on", press=True)
    gets = {path for method, path in log if method == "GET"}
    # the tab switched on mousedown and the menu opened on pointerdown: their lists were
    # fetched, and the documents they list were crawled
    assert {"/api/files.json", "/api/history.json"} <= gets, sorted(gets)
    assert {"/docs/report-a", "/docs/report-b", "/docs/week-1"} <= gets, sorted(gets)
    # the destructive tab was never pressed, and nothing was posted
    assert not [path for method, path in log if method == "POST"], log
    assert run.stats["hiddenweb/browser/events/delegated"] >= 2
    # the lab knob off: clicked alone, as before, neither the tab nor the menu answers
    _, log = _crawl(tmp_path / "off", press=False)
    gets = {path for method, path in log if method == "GET"}
    assert not {"/api/files.json", "/api/history.json"} & gets, sorted(gets)
