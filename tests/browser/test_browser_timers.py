"""Timers fired early (issue 24): a link a page adds some seconds after it loaded is read
without waiting those seconds; timers due later, and what the safety policy refuses, are not
run or not followed. One small page per pattern, served on 127.0.0.1 by a server that logs
every request; real crawls in Chromium."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

# add(path): a link to path, built in the page (no reply names it)
ADD = ("<script>function add(p) { const a = document.createElement('a'); a.href = p;"
       " a.textContent = p; document.body.appendChild(a); }</script>")


def _page(title: str, script: str) -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title>{ADD}</head><body><h1>{title}"
            f"</h1><script>{script}</script></body></html>").encode()


PAGES = {
    # a link shown 4.5 s after the page ran its scripts
    "late": _page("Late", "setTimeout(() => add('/item/late'), 4500);"),
    # one timer sets the next: two steps of 2 s
    "chain": _page("Chain", "setTimeout(() => setTimeout(() => add('/item/chain'), 2000), 2000);"),
    # a string callback, as old pages write it
    "string": _page("String", "setTimeout(\"add('/item/string')\", 3000);"),
    # a timer that fetches the list after a delay
    "fetch": _page("Fetch", "setTimeout(() => fetch('/api/late').then(r => r.json())"
                            ".then(d => add(d.path)), 2500);"),
    # due in a minute: beyond the horizon
    "far": _page("Far", "setTimeout(() => add('/item/far'), 60000);"),
    # a session timer that logs out: its navigation is kept as a URL, and refused
    "logout": _page("Session", "setTimeout(() => { location.href = '/logout'; }, 3000);"),
}
HOME = ("<!doctype html><html><body>"
        + "".join(f'<a href="/p/{name}">{name}</a> ' for name in PAGES) + "</body></html>").encode()


class Site(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        self.log.append(path)
        if path == "/":
            return self._send(HOME)
        if path.startswith("/p/") and path[3:] in PAGES:
            return self._send(PAGES[path[3:]])
        if path == "/api/late":
            return self._send(b'{"path": "/item/fetched"}', "application/json")
        if path in ("/robots.txt", "/sitemap.xml"):
            return self._send(b"", "text/plain", 404)
        return self._send(f"<html><body><p>{path}</p></body></html>".encode())


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def _crawl(tmp_path: Path, site: str, **lab: float):
    return browser_crawl(tmp_path, site, 60, HIDDENWEB_LAB={"browser_event_wait": 3.0, **lab})


def test_timers_due_soon_run_early_and_later_ones_do_not(site, tmp_path):
    run = _crawl(tmp_path, site)
    assert run.returncode == 0, run.stderr[-3000:]
    asked = set(Site.log)
    for path in ("/item/late", "/item/chain", "/item/string", "/api/late", "/item/fetched"):
        assert path in asked, (path, sorted(asked))
    assert "/item/far" not in asked, sorted(asked)
    assert "/logout" not in asked, sorted(asked)
    stats = run.stats or {}
    # late, chain (two), string, fetch: run early (the 4.5 s one cannot have waited its turn
    # within the 1 s wait for "load")
    assert stats.get("hiddenweb/browser/timers/fired", 0) >= 5, stats
    assert stats.get("hiddenweb/browser/timers/pages", 0) >= 4, stats
    assert stats.get("hiddenweb/safety/links_refused", 0) >= 1, stats


def test_the_horizon_bounds_which_timers_run(site, tmp_path):
    run = _crawl(tmp_path, site, browser_timer_horizon=90.0)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "/item/far" in set(Site.log), sorted(set(Site.log))
