"""A form whose submission a bundled script takes over, as single-page apps build them: no
``action`` (its URL would be the shell's), no ``onsubmit`` in the markup, and no inline script
to read; the app's one ``submit`` listener on its root (React's) sends the search by ``fetch``
and shows the answer's links. Rendered, the form is marked as submitted by script
(:data:`hiddenweb.browser.scripts.SCRIPTED_FORMS_JS`) and submitted by page actions in
Chromium: the server sees the app's own search request, never the shell asked for with the
fields as its query. Counted from the server's own log."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")

SHELL = b"""<!doctype html><html><head><title>catalogue</title>
<script src="/static/app.js" defer></script></head><body><div id="root"></div></body></html>"""
APP = b"""(function () {
  var root = document.getElementById("root");
  root.innerHTML = '<form><input name="q" placeholder="Search the catalogue">'
    + '<button type="submit">Search</button></form><div id="hits"></div>';
  root.addEventListener("submit", function (e) {
    e.preventDefault();
    var q = e.target.elements.q.value;
    fetch("/api/search?q=" + encodeURIComponent(q)).then(function (r) { return r.json(); })
      .then(function (hits) {
        document.getElementById("hits").innerHTML = hits.map(function (h) {
          return '<a href="/docs/' + h + '">' + h + '</a>'; }).join(" ");
      });
  });
})();"""


class App(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        url = urlsplit(self.path)
        if url.path == "/":  # the shell, whatever the query: the server never reads it
            return self._send(SHELL)
        if url.path == "/static/app.js":
            return self._send(APP, "text/javascript")
        if url.path == "/api/search":
            q = parse_qs(url.query).get("q", [""])[0]
            hits = [f"hit-{q or 'all'}-{n}" for n in (1, 2)]
            return self._json(hits)
        if url.path.startswith("/docs/"):
            return self._send(f"<html><title>{url.path}</title><p>doc</p></html>".encode())
        return self._send(b"", "text/plain", 404 if url.path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, marked: bool):
    with serve(App) as url:  # no guessed URL sources: the app's quoted "/api/search?q="
        run = browser_crawl(tmp_path, url, 10, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            CLOSESPIDER_PAGECOUNT="30",
                            HIDDENWEB_LAB=json.dumps({"browser_scripted_forms": marked}))
        log = list(App.log)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, log


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_form_a_bundled_script_submits_is_submitted_in_chromium(tmp_path):
    run, log = _crawl(tmp_path / "on", marked=True)
    # the app's own search, with the page's defaults first, and the documents it listed
    assert "/api/search?q=" in log, log
    assert {"/docs/hit-all-1", "/docs/hit-all-2"} <= set(log), log
    # never the shell with the form's fields as its query: a request the page never makes
    assert not [p for p in log if p.startswith("/?")], log
    assert run.stats["hiddenweb/browser/forms_scripted"] >= 1
    # recorded as the form's answers: the pages its submissions in Chromium led to, whose
    # script requests were the app's search
    answers = [i for i in run.items if i["reached_by"]["kind"] == "form"]
    assert answers, [i["url"] for i in run.items]
    assert any("/api/search?q=" in r["url"] for i in answers for r in i["script_requests"] or [])
    # the lab knob off: the form went over plain HTTP, as the shell with its query
    _, log = _crawl(tmp_path / "off", marked=False)
    assert "/?q=" in log and "/api/search?q=" not in log, log
