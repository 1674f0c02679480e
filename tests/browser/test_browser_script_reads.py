"""A page whose scripts read by POST (a GraphQL query, an API's ``…/search``), as single-page apps
do: while Chromium renders it, the POSTs the safety policy reads as searches are sent and the
links the page builds from their answers are followed; every other script write (a GraphQL
mutation, a POST whose body names a delete, an endpoint with no word of a read, a file) is
refused in the page and recorded. ``HIDDENWEB_BROWSER_SCRIPT_READS`` off, none is sent.
Counted from the server's own log (method, path, body)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crawlrun import CrawlRun, run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from test_browser_scope import EVERY_PAGE_IN_CHROMIUM  # tests/browser is on sys.path

from hiddenweb.safety import graphql_operations, judge_script_request

CHROMIUM = Path("/usr/bin/chromium")

APP = b"""<!doctype html><html><head><title>notes</title></head><body><h1>Notes</h1>
<div id="out"></div>
<script>
function link(path) {
  var a = document.createElement("a"); a.href = path; a.textContent = path;
  document.getElementById("out").appendChild(a);
}
function linksOf(r) { return r.json().then(function (j) { j.links.forEach(link); }); }
function post(url, body) {
  return fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: body});
}
function quiet() {}
post("/api/notes/search", JSON.stringify({q: "", page: 1, order_by: "date"})).then(linksOf);
post("/graphql", JSON.stringify({operationName: "Notes", query: "query Notes { notes { path } }"}))
  .then(linksOf);
fetch(new Request("/api/notes/list", {method: "POST", body: JSON.stringify({folder: "all"})}))
  .then(linksOf);
var x = new XMLHttpRequest(); x.open("POST", "/api/notes/query");
x.setRequestHeader("Content-Type", "application/x-www-form-urlencoded");
x.onload = function () { JSON.parse(x.responseText).links.forEach(link); };
x.send(new URLSearchParams({tag: "ferns"}));
post("/graphql", JSON.stringify({query: "mutation Seen { markSeen(id: 1) { ok } }"})).catch(quiet);
post("/api/notes/search", JSON.stringify({action: "delete", id: 3})).catch(quiet);
post("/api/notes/log-view", JSON.stringify({id: 1})).catch(quiet);
var form = new FormData(); form.append("file", new Blob(["x"]), "x.txt");
fetch("/api/files/search", {method: "POST", body: form}).catch(quiet);
</script></body></html>"""
ANSWERS = {"/api/notes/search": "/note/searched", "/graphql": "/note/graphql",
           "/api/notes/list": "/note/listed", "/api/notes/query": "/note/queried"}


class App(SiteHandler):
    log: list[tuple[str, str, str]] = []  # method, path, body

    def do_GET(self) -> None:  # noqa: N802
        self.log.append(("GET", self.path, ""))
        if self.path == "/":
            return self._send(APP)
        if self.path.startswith("/note/"):
            return self._send(f"<html><body><h1>{self.path}</h1></body></html>".encode())
        return self._send(b"", "text/plain", 404 if self.path != "/robots.txt" else 200)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        self.log.append(("POST", self.path, body))
        links = [ANSWERS.get(self.path, "/note/never")]
        self._json({"links": links})


def _crawl(tmp_path: Path, settings: dict | None = None) -> tuple[list, str, CrawlRun]:
    """The server's log, its port and the crawl, which must have ended well."""
    with serve(App) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/",
                        settings={**EVERY_PAGE_IN_CHROMIUM, **(settings or {})}, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return App.log, url.rsplit(":", 1)[1], run


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_a_pages_reads_by_post_are_sent_and_its_writes_are_not(tmp_path):
    log, port, run = _crawl(tmp_path)
    posts = {(path, body) for method, path, body in log if method == "POST"}
    assert {path for path, _ in posts} == set(ANSWERS), sorted(posts)
    assert {body for path, body in posts if path == "/graphql"} \
        == {json.dumps({"operationName": "Notes", "query": "query Notes { notes { path } }"},
                       separators=(",", ":"))}  # the query; the mutation never left the page
    assert ("/api/notes/query", "tag=ferns") in posts  # an XHR's URLSearchParams body
    gets = {path for method, path, _ in log if method == "GET"}
    assert set(ANSWERS.values()) <= gets, sorted(gets)  # links built from the answers
    assert "/note/never" not in gets
    page = next(item for item in run.items if item["url"].endswith(f":{port}/"))
    recorded = {(r["method"], r["url"].split(f":{port}", 1)[1])
                for r in page["script_requests"]}
    assert {("POST", "/api/notes/log-view"), ("POST", "/api/files/search"),
            ("POST", "/api/notes/search"), ("POST", "/graphql")} <= recorded, recorded
    assert run.stats["hiddenweb/browser/script_reads"] >= 4
    assert run.stats["hiddenweb/browser/writes_aborted"] >= 4


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_with_script_reads_off_no_script_post_is_sent(tmp_path):
    log, _, run = _crawl(tmp_path, {"HIDDENWEB_BROWSER_SCRIPT_READS": "0"})
    assert not [entry for entry in log if entry[0] != "GET"]
    assert not [path for _, path, _ in log if path.startswith("/note/")]
    assert "hiddenweb/browser/script_reads" not in run.stats
    assert run.stats["hiddenweb/browser/writes_aborted"] >= 8


@pytest.mark.parametrize(("method", "path", "body", "allowed", "kind"), [
    ("POST", "/ajax-api/2.0/mlflow/runs/search",
     '{"experiment_ids":["1"],"order_by":["attributes.start_time DESC"],"max_results":50}',
     True, "search"),
    ("POST", "/api/items/list", '{"folder":"all","sort":"new"}', True, "search"),
    ("POST", "/search", "q=ferns&page=2", True, "search"),
    ("POST", "/api/query", '{"sql":"select * from notes"}', True, "search"),
    ("POST", "/graphql", '{"query":"query { a(note: \\"mutation\\") }"}', True, "search"),
    ("POST", "/graphql", '[{"query":"{ a }"},{"query":"mutation { b }"}]', False, "edit"),
    ("POST", "/api/query", '{"sql":"DELETE FROM notes"}', False, "destructive"),
    ("POST", "/api/items/search", '{"op":"update","q":"x"}', False, "edit"),
    ("POST", "/api/runs/set-tag", '{}', False, "edit"),
    ("POST", "/api/runs/log-batch", '{}', False, "edit"),
    ("POST", "/api/experiments/create", '{}', False, "edit"),
    ("POST", "/api/traces/metrics", '{}', False, "edit"),  # no word of a read
    ("POST", "/api/save-search", '{}', False, "edit"),
    ("POST", "/logout/search", '{}', False, "destructive"),
    ("POST", "/api/query", None, False, "edit"),  # a body that is not text
    ("PUT", "/api/search", '{}', False, "edit"),
    ("DELETE", "/api/search", "", False, "destructive"),
])
def test_the_policy_reads_a_scripts_post_by_what_it_is_or_its_endpoint(method, path, body,
                                                                       allowed, kind):
    verdict = judge_script_request(method, f"http://127.0.0.1:1{path}", body)
    assert (verdict.allowed, verdict.kind) == (allowed, kind), verdict


def test_an_opted_in_class_lifts_a_scripts_write_and_graphql_is_told_from_sql():
    assert judge_script_request("PUT", "http://h/api/notes/1", "x",
                                frozenset({"edit"})).allowed
    assert not judge_script_request("DELETE", "http://h/api/notes/1", "",
                                    frozenset({"edit"})).allowed
    assert graphql_operations('{"query": "select * from t"}') is None  # SQL, not GraphQL
    assert graphql_operations('{"query": "# notes\\nquery { a }"}') == "query"
    assert graphql_operations('{"query": "subscription { a }"}') == "mutation"
