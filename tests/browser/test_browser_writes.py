"""Rendering a page must not change the site: a page whose own scripts write on load (a ``fetch``
PUT, an XHR POST, a DELETE: a sync, a "seen" marker, an autosave), crawled with every page in
Chromium, sends none of those writes; its GET requests and the crawler's own page loads go
through. Counted from the server's own log (``hiddenweb/browser/writes_aborted``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from crawlrun import CrawlRun, run_crawl
from test_browser_scope import (  # tests/browser is on sys.path (rootdir conftest)
    EVERY_PAGE_IN_CHROMIUM,
    Recorder,
)

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

PAGE = b"""<!doctype html><html><head><title>notes</title></head><body><h1>Notes</h1>
<p id="n">loading</p><a href="/about">About</a>
<script>
fetch("/api/notes/1", {method: "PUT", body: "seen"});
var x = new XMLHttpRequest(); x.open("POST", "/api/sync"); x.send("state=1");
fetch("/api/drafts/2", {method: "DELETE"});
fetch("/api/notes").then(r => r.text())
  .then(t => { document.getElementById("n").textContent = t; });
</script></body></html>"""


def _crawl(tmp_path: Path, pages: dict[str, bytes], settings: dict | None = None
           ) -> tuple[Recorder, CrawlRun]:
    """Serve ``pages`` and crawl them with every page in Chromium; the server (its log) and
    the crawl, which must have ended well."""
    site = Recorder(pages)
    try:
        run = run_crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{site.server_port}/",
                        settings={**EVERY_PAGE_IN_CHROMIUM, **(settings or {})}, timeout=300)
    finally:
        site.shutdown()
        site.server_close()
    assert run.returncode == 0, run.stderr[-3000:]
    return site, run


def test_a_pages_own_writes_are_not_sent_when_it_is_rendered(tmp_path):
    site, run = _crawl(tmp_path, {"/": PAGE, "/about": b"<html><body>About us</body></html>",
                                  "/api/notes": b"one note", "/robots.txt": b""})
    methods = {(method, path) for method, path, _ in site.log}
    assert not {m for m, p in methods if p.startswith("/api/") and m != "GET"}, sorted(methods)
    assert ("GET", "/api/notes") in methods and ("GET", "/about") in methods  # reads go through
    assert (run.stats or {}).get("hiddenweb/browser/writes_aborted", 0) >= 3


REPORTING = b"""<!doctype html><html><head><title>outbox</title></head><body><h1>Outbox</h1>
<script>
function say(text) {  // told the server by a read (a GET goes through)
  fetch("/said?" + encodeURIComponent(text));
}
fetch("/api/outbox", {method: "POST", body: "draft"})
  .then(function () { say("fetch sent"); }, function (e) { say("fetch failed " + e.name); });
fetch(new Request("/api/outbox/3", {method: "DELETE"}))
  .catch(function (e) { say("request failed " + e.name); });
var x = new XMLHttpRequest(); x.open("PATCH", "/api/outbox/4");
x.onerror = function () { say("xhr error"); };
x.onloadend = function () { say("xhr over"); };
x.send("seen=1");
say("beacon " + navigator.sendBeacon("/api/ping", "bye"));
fetch("/api/count").then(function (r) { return r.text(); })
  .then(function (t) { say("count " + t); });
</script><iframe src="/frame"></iframe></body></html>"""
FRAME = b"""<!doctype html><html><body><p>a frame</p>
<script>fetch("/api/frame", {method: "PUT", body: "x"}).catch(function () {});</script>
</body></html>"""


def test_a_scripts_write_fails_in_the_page_as_a_network_error_and_is_recorded(tmp_path):
    """The page refuses its scripts' writes before they are requests (``RECORD_WRITES_JS``):
    each fails as a network error does (``fetch`` rejects with a ``TypeError``, an XHR fires
    ``error`` and ``loadend``, ``sendBeacon`` returns false), and is recorded on the page's item
    (``script_requests``, its frames' writes too) as the guard's capture records the reads;
    the reads go through."""
    site, run = _crawl(tmp_path, {"/": REPORTING, "/frame": FRAME, "/api/count": b"7",
                                  "/robots.txt": b""})
    assert [(m, p) for m, p, _ in site.log if m != "GET"] == []
    assert ("GET", "/api/count") in {(m, p) for m, p, _ in site.log}
    said = {unquote(p.split("?", 1)[1]) for m, p, _ in site.log if p.startswith("/said?")}
    assert said == {"fetch failed TypeError", "request failed TypeError", "xhr error",
                    "xhr over", "beacon false", "count 7"}, said
    page = next(item for item in run.items if urlsplit(item["url"]).path == "/")
    port = site.server_port
    recorded = {(r["method"], r["url"]) for r in page["script_requests"]}
    assert {("POST", f"http://127.0.0.1:{port}/api/outbox"),
            ("DELETE", f"http://127.0.0.1:{port}/api/outbox/3"),
            ("PATCH", f"http://127.0.0.1:{port}/api/outbox/4"),
            ("POST", f"http://127.0.0.1:{port}/api/ping"),
            ("PUT", f"http://127.0.0.1:{port}/api/frame")} <= recorded, recorded  # its frame's
    assert run.stats["hiddenweb/browser/writes_aborted"] >= 4


RETRYING = """<!doctype html><html><head><title>note {n}</title></head><body><h1>Note {n}</h1>
{links}
<script>
function save() {{
  var x = new XMLHttpRequest(); x.open("PUT", "/api/state/{n}"); x.send("story=" + Date.now());
}}
setInterval(save, 15);  // a syncer that keeps retrying a save the crawler refuses
</script></body></html>"""


def test_a_page_that_keeps_retrying_a_write_sends_none_while_its_page_is_reused_or_closed(
        tmp_path):
    """A page's script that retries its refused save every 15 ms for as long as its document
    lives: a pooled page keeps the document after its render, until it is reused for another
    page (its routes are replaced then) or closed at the crawl's end. No write reaches the
    server at any of these moments (a TiddlyWiki crawl sent its syncer's PUT once as the crawl
    closed)."""
    pages = {"/robots.txt": b""}
    for n in range(12):
        links = " ".join(f'<a href="/note/{k}">note {k}</a>' for k in range(1, 12))
        pages["/" if n == 0 else f"/note/{n}"] = RETRYING.format(n=n, links=links).encode()
    site, run = _crawl(tmp_path, pages, {"HIDDENWEB_BROWSER_MAX_PAGES": "2"})
    writes = [(m, p) for m, p, _ in site.log if m != "GET"]
    assert not writes, writes
    assert len({p for m, p, _ in site.log if p.startswith("/note/")}) == 11  # every page read
    assert run.stats["hiddenweb/browser/writes_aborted"] >= 12
    assert run.stats.get("hiddenweb/browser/pages_reused", 0) >= 1


def test_a_page_whose_document_does_not_unload_is_closed_not_pooled():
    """The pool's contract behind the test above: a page goes back to the pool only once its
    document is unloaded (``about:blank``); one whose unload failed or timed out is closed, as
    its scripts would run on, unguarded, while scrapy-playwright swaps its routes."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from hiddenweb.browser.pool import PagePool

    class Page:
        def __init__(self, unloads: bool) -> None:
            self.url, self.unloads, self.closed = "http://127.0.0.1:1/note/9", unloads, False

        def is_closed(self) -> bool:
            return self.closed

        async def goto(self, url: str) -> None:
            if not self.unloads:
                raise TimeoutError
            self.url = url

        async def close(self) -> None:
            self.closed = True

    pool = PagePool()
    pool.stats = MemoryStatsCollector(get_crawler())
    pool.hw = SimpleNamespace(page_reuse=5, same_document=False)
    pool._uses, pool._idle = {}, []
    good, stuck = Page(unloads=True), Page(unloads=False)
    with ThreadPoolExecutor(1) as thread:  # its own event loop: the test run has one
        for page in (good, stuck):
            thread.submit(asyncio.run, pool._release(page, ok=True)).result()
    assert pool._idle == [good] and good.url == "about:blank" and not good.closed
    assert stuck.closed and stuck not in pool._idle
    assert pool.stats.get_value("hiddenweb/browser/blank_failed") == 1
