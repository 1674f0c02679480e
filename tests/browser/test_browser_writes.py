"""Rendering a page must not change the site: a page whose own scripts write on load (a ``fetch``
PUT, an XHR POST, a DELETE: a sync, a "seen" marker, an autosave), crawled with every page in
Chromium, sends none of those writes; its GET requests and the crawler's own page loads go
through. Counted from the server's own log (``hiddenweb/browser/writes_aborted``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlrun import run_crawl
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


def test_a_pages_own_writes_are_not_sent_when_it_is_rendered(tmp_path):
    site = Recorder({"/": PAGE, "/about": b"<html><body>About us</body></html>",
                     "/api/notes": b"one note", "/robots.txt": b""})
    try:
        run = run_crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{site.server_port}/",
                        settings=EVERY_PAGE_IN_CHROMIUM, timeout=300)
    finally:
        site.shutdown()
        site.server_close()
    assert run.returncode == 0, run.stderr[-3000:]
    methods = {(method, path) for method, path, _ in site.log}
    assert not {m for m, p in methods if p.startswith("/api/") and m != "GET"}, sorted(methods)
    assert ("GET", "/api/notes") in methods and ("GET", "/about") in methods  # reads go through
    assert (run.stats or {}).get("hiddenweb/browser/writes_aborted", 0) >= 3
