"""Scripts a page loads are fetched once per crawl, not once per render (Playwright's routing
turns Chromium's own cache off): :class:`hiddenweb.browser.guard.ScriptCache`.

A site the test serves on 127.0.0.1: 6 pages, each loading one shared script that builds the
page's only link to a secret page (so a script answered from the cache must still run), and a
script the server marks ``Cache-Control: no-store``; every page in Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve

from hiddenweb.browser.guard import MAX_CACHED_SCRIPT, ScriptCache

CHROMIUM = Path("/usr/bin/chromium")
PAGES = 6
APP = b"""
var out = document.getElementById('out');
var a = document.createElement('a');
a.href = '/secret/' + out.dataset.n; a.textContent = 'secret';
out.appendChild(a);
"""


def test_the_cache_keeps_what_a_browser_may_and_drops_the_oldest():
    cache = ScriptCache(limit=10)
    assert cache.put("http://h/a.js", 200, {"content-type": "text/javascript",
                                           "content-encoding": "gzip"}, b"aaaa")
    assert cache.get("http://h/a.js") == (200, {"content-type": "text/javascript"}, b"aaaa")
    assert not cache.put("http://h/n.js", 200, {"cache-control": "No-Store"}, b"n")
    assert not cache.put("http://h/big.js", 200, {}, b"x" * (MAX_CACHED_SCRIPT + 1))
    assert cache.put("http://h/b.js", 200, {}, b"bbbb")
    cache.get("http://h/a.js")  # a used last: b is the oldest
    assert cache.put("http://h/c.js", 200, {}, b"cccc")
    assert cache.get("http://h/b.js") is None and cache.get("http://h/a.js") is not None
    assert cache.size == 8


class ScriptSite(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        type(self).log.append(self.path)
        if self.path == "/":
            links = "".join(f'<a href="/p/{n}">page {n}</a> ' for n in range(PAGES))
            return self._send(f"<html><body><h1>Home</h1>{links}</body></html>".encode())
        if m := re.fullmatch(r"/p/(\d+)", self.path):
            return self._send(
                f"<html><head><link rel=icon href='/favicon.ico'></head><body><h1>Page "
                f"{m[1]}</h1><div id=out data-n='{m[1]}'></div><script src='/static/app.js'>"
                "</script><script src='/static/live.js'></script></body></html>".encode())
        if self.path == "/static/app.js":
            return self._send(APP, "text/javascript")
        if self.path == "/static/live.js":
            return self._send(b"window.live = 1;", "text/javascript",
                              headers={"Cache-Control": "no-store"})
        if m := re.fullmatch(r"/secret/(\d+)", self.path):
            return self._send(f"<html><body><h1>Secret {m[1]}</h1></body></html>".encode())
        self._send(b"not found", status=404)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
@pytest.mark.browser
def test_a_script_is_fetched_once_and_still_runs_on_every_page(tmp_path: Path):
    with serve(ScriptSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "always", "HIDDENWEB_CLOSE_STALE": 0,
            "HIDDENWEB_URL_SOURCES": False})  # scripts asked for by Chromium only
        log = list(ScriptSite.log)
    assert run.returncode == 0, run.stderr[-2000:]
    assert {p for p in log if p.startswith("/secret/")} == {f"/secret/{n}"
                                                            for n in range(PAGES)}
    assert log.count("/static/app.js") == 1
    assert log.count("/static/live.js") >= PAGES  # no-store: asked on every render
    assert "/favicon.ico" not in log
    assert run.stats["hiddenweb/browser/scripts_cached"] >= PAGES - 1
