"""A form a script handles in the page, which keeps what was typed and shows it back: a search
box's "recent searches" kept in the page's storage, a query page's bookmarks. Submitted in
Chromium (:data:`hiddenweb.browser.scripts.SCRIPTED_FORMS_JS`), each answer lists every value
typed so far: text no page showed before, and, were it read as new, a new page for the form's
explorer on every submission. The words typed into the form are echoes of it
(:meth:`hiddenweb.forms.crawl.FormCrawler.typed_echoes`), so its answers show nothing new and
the form is ended as inert. Counted from the server's own log: each submission in Chromium
loads the form's page. (This form sends nothing when submitted, so by default it is ended
sooner, after its first two answers: ``test_browser_page_only_forms``; that rule is off here.)"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

from hiddenweb.forms.explorer import INERT

CHROMIUM = Path("/usr/bin/chromium")
LIMIT = 60  # submissions of one form (HIDDENWEB_MAX_SUBMISSIONS_PER_FORM)

PAGE = b"""<!doctype html><html><head><title>catalogue</title>
<script src="/static/app.js" defer></script></head><body>
<h1>Catalogue</h1><p><a href="/about">About the catalogue</a></p>
<div id="root"></div></body></html>"""
APP = b"""(function () {
  var root = document.getElementById("root");
  function show() {
    var recent = JSON.parse(localStorage.getItem("recent") || "[]");
    document.getElementById("recent").innerHTML = recent.map(function (q) {
      return "<li>" + q.replace(/</g, "&lt;") + "</li>"; }).join("");
  }
  root.innerHTML = '<form><input name="q" placeholder="Search the catalogue">'
    + '<button type="submit">Search</button></form><h2>Recent searches</h2><ul id="recent"></ul>';
  root.addEventListener("submit", function (e) {
    e.preventDefault();
    var q = e.target.elements.q.value;
    if (!q) return;
    var recent = JSON.parse(localStorage.getItem("recent") || "[]");
    recent.unshift(q);
    localStorage.setItem("recent", JSON.stringify(recent));
    show();
  });
  show();
})();"""


class App(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        path = urlsplit(self.path).path
        if path == "/":
            return self._send(PAGE)
        if path == "/static/app.js":
            return self._send(APP, "text/javascript")
        if path == "/about":
            return self._send(b"<html><title>about</title><p>A catalogue.</p></html>")
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, typed_echoes: bool):
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, 10, HIDDENWEB_BROWSER_SCROLL_STEPS="0",
                            HIDDENWEB_MAX_SUBMISSIONS_PER_FORM=str(LIMIT),
                            HIDDENWEB_LAB=json.dumps({"form_typed_echoes": typed_echoes,
                                                      "form_page_only_after": 0}))
        log = list(App.log)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, sum(urlsplit(p).path == "/" for p in log)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_form_whose_answers_show_only_what_was_typed_into_it_is_ended(tmp_path):
    run, loads = _crawl(tmp_path / "on", typed_echoes=True)
    stats = run.stats
    assert stats["hiddenweb/browser/forms_scripted"] >= 1
    assert stats.get("hiddenweb/forms/inert") == 1, stats
    assert not stats.get("hiddenweb/forms/answers_new"), stats
    sent = stats["hiddenweb/forms/submissions"]
    # the defaults, INERT values that changed nothing, and those in flight by then
    # (a wave of HIDDENWEB_BROWSER_MAX_PAGES, 8); each one a load of the page
    assert INERT + 1 <= sent <= INERT + 1 + 8, stats
    assert loads <= sent + 4, (loads, sent)  # and the crawl's own reads and render of it
    # the lab knob off: every answer listed a search no page showed before, each "new"
    run, loads_off = _crawl(tmp_path / "off", typed_echoes=False)
    stats = run.stats
    assert stats.get("hiddenweb/forms/answers_new", 0) >= LIMIT - 2, stats
    assert stats["hiddenweb/forms/submissions"] == LIMIT, stats
    assert loads_off >= LIMIT > 3 * sent, (loads_off, sent)
