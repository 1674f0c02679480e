"""Issue 24: an error page is not rendered (hiddenweb/spiders/hwdla.py ``read_page``).

`scrapy crawl hwdla` with real Chromium against a site the test serves on 127.0.0.1: one page
whose script builds the only link to a page of its own, and three broken links whose 404 page
loads the site's scripts, as an app's error page does (a script there builds a link too).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")


def built_link(href: str) -> str:
    """A script that builds a link to ``href`` from two pieces (no URL in its text)."""
    head, tail = href[:3], href[3:]
    return ("<div id=out></div><script>const a = document.createElement('a');"
            f"a.href = '{head}' + '{tail}'; a.textContent = 'more';"
            "document.getElementById('out').appendChild(a);</script>")


class ErrorPageSite(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        type(self).log.append(self.path)
        if self.path == "/":
            gone = "".join(f'<a href="/gone/{i}">old {i}</a> ' for i in range(3))
            body, status = f'<h1>Home</h1><a href="/app">app</a> {gone}', 200
        elif self.path == "/app":
            body, status = f"<h1>App</h1>{built_link('/secret')}", 200
        elif self.path == "/secret":
            body, status = "<h1>Secret</h1>", 200
        elif m := re.fullmatch(r"/gone/(\d+)", self.path):  # the page names what is missing
            body = f"<h1>Not found: {self.path}</h1>{built_link(f'/from-error/{m[1]}')}"
            status = 404
        else:
            body, status = f"<h1>Not found: {self.path}</h1>", 404
        self._send(f"<html><body>{body}</body></html>".encode(), status=status)


@needs_chromium
@pytest.mark.browser
def test_error_pages_are_not_rendered(tmp_path: Path):
    with serve(ErrorPageSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "auto", "HIDDENWEB_CLOSE_STALE": 0})
        log = list(ErrorPageSite.log)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "/secret" in log  # the app page was rendered and its built link followed
    assert {f"/gone/{i}" for i in range(3)} <= set(log)  # the broken links were read ...
    assert not [p for p in log if p.startswith("/from-error/")]  # ... and not rendered
    assert run.stats["hiddenweb/browser/pages"] == 1
