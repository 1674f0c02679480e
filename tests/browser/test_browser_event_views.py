"""The events of a hash-routed single-page app, fired view by view as a person would
(:mod:`hiddenweb.browser.events`): the app's chrome (a logo that links home, a mode switch whose
route depends on the view it is pressed on) is shared by every view, its root element listens
to every mouse and key event for its descendants (a framework's delegation), and ``<body>``
listens to keys. Three rules, each with its lab knob turned in one arm:

* ``browser_event_containers``: the root element's and ``<body>``'s own listeners are not fired
  on them (an event there is nobody's gesture: the app asks ``/hit/…`` when one is);
* ``browser_event_route_memory`` (off by default: its cost on a real app, docs/design-notes.md):
  the mode switch brought nothing new on the second view, but on a project's view it routes to
  the project's runs (``/run/1``, linked only there); without the knob it is not pressed there;
* ``browser_event_restore_view``: on the home view the mode switch takes the page to its mode
  page (``#/b``); the home view is taken again, and its "News" control, after the switch in
  document order, reveals ``/news/1``; off, the controls after the switch are fired on the mode
  page, and the home view's links the switch took away are read as the page had them (lab knob
  ``browser_event_hidden_links``). (The logo, a link to the app's root view ``#/``, the
  document itself, is not clicked, though it has a click handler of its own.) The project's
  "Details" control reveals ``/detail/1`` in every arm: "Home", before it, brought nothing on the
  views before and is not fired there.

The views are reached one after another (home, about, help, a project), so that the memory
shared by every route (the knob off) has judged the switch fruitless before the project's view.
Counted from the server's own log; real Chromium."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from crawlrun import run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")

APP = rb"""<!doctype html><html><head><title>lab</title></head><body>
<div id="app"><header><a href="#/" id="logo">Lab</a>
<div role="button" id="home">Home</div> <div role="button" id="mode">Runs view</div>
<button type="button" id="theme">Theme</button> <button type="button" id="ask">Ask</button>
</header>
<main id="view">loading</main></div>
<script>
var app = document.getElementById("app"), view = document.getElementById("view");
document.getElementById("logo").onclick = function () {};  // an analytics hook on every link
// no path is written whole in the script (the crawl reads path-shaped strings in scripts)
function path() { return [""].concat(Array.prototype.slice.call(arguments)).join("/"); }
var views = {
  "": '<p>welcome</p><a href="#/about">about</a> <div role="button" id="news">News</div>',
  "about": '<p>about the lab</p><a href="#/help">help</a>',
  "help": '<p>help</p><a href="#/projects/1">project 1</a>',
  "b": "<p>the runs of nothing</p>",
  "projects 1": '<p>project 1</p><div role="button" id="details">Details</div>',
  "projects 1 runs": '<p>runs of project 1</p><a href="' + path("run", 1) + '">run 1</a>'
};
function current() { return location.hash.replace(/^#\/?/, "").split("/").join(" "); }
function route() { view.innerHTML = views[current()] || "<p>not found</p>"; }
// the root listens to every kind of event for its descendants, as a framework's root does
["mouseover", "mousedown", "mouseup", "click", "dblclick", "keydown", "keyup", "input",
 "change"].forEach(function (type) {
  app.addEventListener(type, function (e) {
    if (e.target === app) fetch(path("hit", "app", type));  // fired on the root itself
  });
});
document.body.addEventListener("keydown", function (e) {
  if (e.target === document.body) fetch(path("hit", "body"));
});
app.addEventListener("click", function (e) {
  if (e.target.closest("#home")) {
    location.hash = "/";
  } else if (e.target.closest("#mode")) {  // a project's runs on its view; else a mode page
    var here = current();
    location.hash = /^projects \d+$/.test(here) ? "/" + here.split(" ").join("/") + "/runs"
                                                 : "/b";
  } else if (e.target.closest("#details")) {
    view.insertAdjacentHTML("beforeend", '<a href="' + path("detail", 1) + '">detail 1</a>');
  } else if (e.target.closest("#news")) {
    view.insertAdjacentHTML("beforeend", '<a href="' + path("news", 1) + '">news 1</a>');
  }
});
window.addEventListener("hashchange", route);
route();
</script></body></html>"""


class Lab(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        if self.path == "/":
            return self._send(APP)
        if self.path in ("/run/1", "/detail/1", "/news/1"):
            return self._send(f"<html><body><h1>{self.path}</h1></body></html>".encode())
        if self.path.startswith("/hit/"):
            return self._send(b"", "text/plain")
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, lab: dict) -> tuple[list[str], dict]:
    with serve(Lab) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={"HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": "10",
                                  "HIDDENWEB_LAB": json.dumps(lab),
                                  "CLOSESPIDER_TIMEOUT": "120", "LOG_LEVEL": "INFO"},
                        timeout=300)
        log = list(Lab.log)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    return log, run.stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_single_page_apps_events_are_fired_view_by_view(tmp_path):
    log, stats = _crawl(tmp_path, {})
    assert "/detail/1" in log, log  # the project's own control
    assert "/news/1" in log, log  # the home view's own control, after the mode switch's click
    assert "/run/1" not in log, log  # the mode switch: fruitless twice, never pressed again
    assert not [p for p in log if p.startswith("/hit/")], log  # nothing fired on containers
    assert stats.get("hiddenweb/browser/events/views_restored", 0) >= 1


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
@pytest.mark.parametrize(("knob", "value"), [("browser_event_containers", False),
                                             ("browser_event_route_memory", True),
                                             ("browser_event_restore_view", False)])
def test_each_rule_turned_changes_what_is_reached(tmp_path, knob, value):
    log, stats = _crawl(tmp_path, {knob: value})
    if knob == "browser_event_containers":
        assert [p for p in log if p.startswith("/hit/app/")], log
        assert "/hit/body" in log, log
    elif knob == "browser_event_route_memory":  # pressed on the project's view
        assert "/run/1" in log and "/detail/1" in log, log
    else:
        assert "/news/1" not in log, log
        assert "/detail/1" in log, log  # the project's view reached by the home view's links
        assert "hiddenweb/browser/events/views_restored" not in stats


PARTS = b"""<!doctype html><html><head><title>parts</title></head><body>
<div id="wrapper"><button>one</button> <button>two</button> <button>three</button></div>
<form id="find" action="/find"><input name="q"> <input name="near">
<button type="submit">Find</button></form>
<div id="card">a card <a href="/author/1">its author</a></div>
<script>
document.body.addEventListener("keydown", function () {});
document.body.onclick = function () {};
var wrapper = document.getElementById("wrapper");
wrapper.addEventListener("click", function () {});
wrapper.addEventListener("mouseover", function () {});
document.getElementById("find").addEventListener("submit", function (e) { e.preventDefault(); });
document.getElementById("card").addEventListener("click", function () {});
</script></body></html>"""


class Parts(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self._send(PARTS)


def _offered(url: str, containers: bool) -> list[tuple[str, str]]:
    """The (element id, event) pairs NEXT_JS offers on ``url``'s page, own listeners only, in
    the order it offers them, in real Chromium with the listeners recorded as the crawl's
    pages record them."""
    from playwright.sync_api import sync_playwright

    from hiddenweb.browser.config import CHROMIUM_ARGS
    from hiddenweb.browser.events import EVENT_TYPES, MAX_OPTIONS, MAX_SCAN, NEXT_JS, START_JS
    from hiddenweb.browser.scripts import RECORD_EVENTS_JS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.add_init_script(RECORD_EVENTS_JS)
            page.goto(url)
            page.evaluate(START_JS)
            offered = []
            while (target := page.evaluate(
                    NEXT_JS, [list(EVENT_TYPES), MAX_SCAN, MAX_OPTIONS, False, True, True,
                              containers, True])) is not None:
                offered.append((page.evaluate("() => window.__hiddenwebFiring.current.id "
                                              "|| window.__hiddenwebFiring.current.tagName"),
                                target["type"]))
        finally:
            browser.close()
    return offered


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_containers_listeners_are_not_fired_on_it_but_a_forms_and_a_cards_are():
    """``<body>`` and an element holding 3 controls listen for their descendants: their own
    listeners are not offered (lab knob ``browser_event_containers``); a form's submit listener
    is its own, whatever it holds, and so is that of a card holding one link."""
    with serve(Parts) as url, ThreadPoolExecutor(1) as pool:  # the sync API, off the test's loop
        on = pool.submit(_offered, url + "/", True).result()
        off = pool.submit(_offered, url + "/", False).result()
    assert on == [("find", "submit"), ("card", "click")], on
    assert {("BODY", "keydown"), ("BODY", "click"), ("wrapper", "click"),
            ("wrapper", "mouseover")} <= set(off), off
    assert set(on) < set(off)
