"""Request capture (issue 24): the requests a page's scripts make while Chromium renders it.
A page whose script fetches a JSON list of same-site URLs (the URL built by the script, so no
URL source without the browser names it) and posts a "seen" marker: the GET joins the frontier
as a request of its own (source ``xhr``), its JSON is read and its URLs crawled (JSON values
are a guessed source: ``HIDDENWEB_URL_GUESSES``); the POST is
recorded on the page's item and never sent. Served on 127.0.0.1 by an HTTP/1.1 keep-alive
server that logs every request."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

HOME = b"""<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1>
<ul id="list"></ul><a href="/about">About</a>
<script>
var api = ["", "api", "list.json"].join("/");
fetch(api).then(function (r) { return r.json(); }).then(function (data) {
  data.items.forEach(function (u) {
    var li = document.createElement("li"); li.textContent = u;
    document.getElementById("list").appendChild(li);
  });
});
fetch(["", "api", "seen"].join("/"), {method: "POST", body: "page=home"});
</script></body></html>"""
LIST = b'{"items": ["/item/1", "/item/2"], "total": 2}'


class Site(SiteHandler):
    log: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        self.log.append(("GET", path))
        if path == "/":
            return self._send(HOME)
        if path == "/api/list.json":  # compressed: what is kept is the body Chromium decoded
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                return self._send(gzip.compress(LIST), "application/json",
                                  headers={"Content-Encoding": "gzip"})
            return self._send(LIST, "application/json")
        if path in ("/robots.txt", "/sitemap.xml"):
            return self._send(b"", "text/plain", 404)
        return self._send(f"<html><body><h1>{path}</h1></body></html>".encode())

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.log.append(("POST", urlsplit(self.path).path))
        return self._send(b"{}", "application/json")


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def test_a_pages_fetches_join_the_frontier_and_its_writes_are_only_recorded(site, tmp_path):
    run = run_crawl(tmp_path, "-a", f"seed={site}/", timeout=300,
                    settings={"HIDDENWEB_BROWSER": "always", "HIDDENWEB_BROWSER_TIMEOUT": "5",
                              "DOWNLOAD_TIMEOUT": "10", "CLOSESPIDER_TIMEOUT": "120",
                              "LOG_LEVEL": "INFO", "HIDDENWEB_URL_GUESSES": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert " ERROR: " not in run.stderr, run.stderr[-3000:]
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    api = by_path["/api/list.json"]
    assert api["source"] == "xhr" and api["content_type"] == "application/json"
    assert by_path["/item/1"]["source"] == by_path["/item/2"]["source"] == "json"
    assert ("GET", "/item/1") in Site.log and ("GET", "/item/2") in Site.log
    assert not [entry for entry in Site.log if entry[0] == "POST"], Site.log  # never sent
    home = by_path["/"]
    assert {"method": "POST", "url": f"{site}/api/seen"} in home["script_requests"]
    assert {"method": "GET", "url": f"{site}/api/list.json"} in home["script_requests"]
    assert (run.stats or {}).get("hiddenweb/sources/xhr") == 1
    # the crawl's request of the script's GET was answered with the reply Chromium got: the
    # server was asked once (HIDDENWEB_BROWSER_XHR_REPLIES, hiddenweb/browser/replies.py)
    assert Site.log.count(("GET", "/api/list.json")) == 1, Site.log
    assert run.stats["hiddenweb/browser/xhr_replies_used"] == 1


def test_without_xhr_replies_a_scripts_get_is_downloaded_again(site, tmp_path):
    run = run_crawl(tmp_path, "-a", f"seed={site}/", timeout=300,
                    settings={"HIDDENWEB_BROWSER": "always", "HIDDENWEB_BROWSER_TIMEOUT": "5",
                              "DOWNLOAD_TIMEOUT": "10", "CLOSESPIDER_TIMEOUT": "120",
                              "LOG_LEVEL": "INFO", "HIDDENWEB_URL_GUESSES": "1",
                              "HIDDENWEB_BROWSER_XHR_REPLIES": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    assert by_path["/api/list.json"]["source"] == "xhr"
    assert "/item/1" in by_path and "/item/2" in by_path  # its JSON read all the same
    assert Site.log.count(("GET", "/api/list.json")) == 2, Site.log
    assert "hiddenweb/browser/xhr_replies_used" not in run.stats
