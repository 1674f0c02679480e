"""A single-page app whose router declares a view no control links: each project's
``#/projects/N/files`` view is in the router's table (``"/projects/:id/files"``, in the app's
script file) and nowhere else; its projects' pages link nothing but the list. The files are read
only by that view's script. The crawl asks for the view under each project met
(:mod:`hiddenweb.routepatterns`); a destructive view in the same table is asked for under none,
and a pattern whose parameter no route met binds (``"/settings/:section"``) gives nothing.
Counted from the server's own log, with the lab knob on and off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

from hiddenweb.routepatterns import RoutePatterns, route_patterns

CHROMIUM = Path("/usr/bin/chromium")
PROJECTS = (1, 2, 3)

PAGE = b"""<!doctype html><html><head><title>projects</title></head><body>
<div id="view">loading</div><script src="/app.js"></script></body></html>"""

APP_JS = b"""
var routes = [
  {path: "/", view: "list"},
  {path: "/projects/:id", view: "overview"},
  {path: "/projects/:id/files", view: "files"},
  {path: "/projects/:id/delete", view: "delete"},
  {path: "/settings/:section", view: "settings"}
];
function show(html) { document.getElementById("view").innerHTML = html; }
function load(path, then) {
  fetch(path).then(function (r) { return r.json(); }).then(then);
}
function match(hash) {
  var parts = hash.split("/").filter(Boolean);
  for (var i = 0; i < routes.length; i++) {
    var want = routes[i].path.split("/").filter(Boolean), params = {};
    var ok = want.length === parts.length;
    for (var j = 0; ok && j < want.length; j++) {
      if (want[j].charAt(0) === ":") params[want[j].slice(1)] = parts[j];
      else ok = want[j] === parts[j];
    }
    if (ok) return {view: routes[i].view, params: params};
  }
  return {view: "list", params: {}};
}
function route() {
  var m = match(location.hash.replace(/^#/, "") || "/"), id = m.params.id;
  if (m.view === "list") {
    return load("/api/projects.json", function (ids) {
      show(ids.map(function (i) {
        return '<a href="#/projects/' + i + '">project ' + i + '</a>'; }).join(" "));
    });
  }
  if (m.view === "overview") {
    return load("/api/projects/" + id + ".json", function (p) {
      show("<h1>" + p.name + '</h1><a href="#/">all projects</a>');
    });
  }
  if (m.view === "files") {
    return load("/api/projects/" + id + "/files.json", function (x) { show(JSON.stringify(x)); });
  }
  show("<p>" + m.view + "</p>");
}
window.addEventListener("hashchange", route);
route();
"""


class App(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = self.path
        self.log.append(path)
        if path == "/":
            return self._send(PAGE)
        if path == "/app.js":
            return self._send(APP_JS, "text/javascript")
        if path == "/api/projects.json":
            return self._json(list(PROJECTS))
        for n in PROJECTS:
            if path == f"/api/projects/{n}.json":
                return self._json({"name": f"project {n}"})
            if path == f"/api/projects/{n}/files.json":
                return self._json([f"file-{n}"])
        return self._send(b"", "text/plain", 404 if path != "/robots.txt" else 200)


def _crawl(tmp_path: Path, patterns: bool) -> tuple[list[str], dict]:
    with serve(App) as url:
        run = browser_crawl(tmp_path, url, HIDDENWEB_URL_GUESSES="1",
                            HIDDENWEB_LAB=json.dumps({"route_patterns": patterns,
                                                      "route_siblings": False}))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats is not None
    return list(App.log), run.stats


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
@pytest.mark.browser
def test_a_view_only_the_router_declares_is_asked_for_under_each_record_met(tmp_path):
    on, on_stats = _crawl(tmp_path / "on", patterns=True)
    assert {f"/api/projects/{n}/files.json" for n in PROJECTS} <= set(on), sorted(on)
    # files under each project; the delete view refused by the safety policy, never rendered
    assert on_stats.get("hiddenweb/sources/route_pattern") == len(PROJECTS), on_stats
    off, off_stats = _crawl(tmp_path / "off", patterns=False)
    assert {f"/api/projects/{n}.json" for n in PROJECTS} <= set(off), sorted(off)
    assert not [p for p in off if p.endswith("/files.json")], sorted(off)
    assert "hiddenweb/sources/route_pattern" not in off_stats


def test_patterns_are_the_quoted_absolute_paths_with_a_parameter():
    text = """a("/projects/:id"); b('/projects/:id/files/*'); c(`/p/:a?`);
    d(":child"); e("items/:id"); f("/plain/path"); g("/x/:y/" + z); h("https://h/:p");
    i(base + "/q/:r")"""
    assert route_patterns(text) == ["/projects/:id", "/projects/:id/files/*", "/p/:a?"]


def test_a_pattern_extends_a_route_whose_ids_bind_its_parameters():
    doc = "http://h:1/"
    p = RoutePatterns(max_given=3)
    assert p.met(doc + "#/projects/1") == []  # no pattern learned yet
    assert p.learn(doc, ["/projects/:id/files", "/projects/:id/:tab", "/settings/:section",
                         "/projects/:id/runs/:run/artifacts/*", "/projects/:id/log/:line?"]) \
        == [doc + "#/projects/1/files", doc + "#/projects/1/log"]  # the route met before
    assert p.met(doc + "#/projects/2?sort=name") \
        == [doc + "#/projects/2/files", doc + "#/projects/2/log"]
    assert p.met(doc + "#/projects/2/files") == []  # given already
    # a word is a view, not a record: no project "archive"
    assert p.met(doc + "#/projects/archive") == []
    # a leading part of a longer route binds too; a record under a record
    run = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    assert p.met(doc + f"#/projects/3/runs/{run}") == [
        doc + "#/projects/3/files", doc + f"#/projects/3/runs/{run}/artifacts",
        doc + "#/projects/3/log"]
    assert p.met(doc + "#/projects/4") == []  # each pattern gives at most max_given routes
    # another document has no patterns; a hashbang keeps its lead
    assert p.met("http://h:1/other#/projects/9") == []
    p.learn("http://h:1/b", ["/q/:id/a"])
    assert p.met("http://h:1/b#!/q/2") == ["http://h:1/b#!/q/2/a"]
    assert p.met("http://h:1/projects/5") == []  # a path, not a hash route
