"""Redirect bodies (issue 24, URLs outside ``<a>`` of a shown page): the links a redirect's own
HTML shows are followed, plain and gzipped, judged by the safety policy like every link; the
``Location`` is followed as always. A real crawl of a small site served on 127.0.0.1."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import run_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)

MOVED = (b'<html><body>This page has moved to <a href="/new">the new page</a>;'
         b' the old one is <a href="/kept-by-redirect">HERE</a>,'
         b' <a href="/logout">log out</a>.</body></html>')
ZIPPED = b'<html><body><a href="/zipped-by-redirect">old list</a></body></html>'


class Site(SiteHandler):
    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        self.log.append(path)
        if path == "/":
            return self._send(b'<html><body><a href="/old">old</a> <a href="/gz">gz</a>'
                              b"</body></html>")
        if path == "/old":
            return self._send(MOVED, status=302, headers={"Location": "/new"})
        if path == "/gz":
            return self._send(gzip.compress(ZIPPED), status=301,
                              headers={"Location": "/new", "Content-Encoding": "gzip"})
        if path in ("/robots.txt", "/sitemap.xml"):
            return self._send(b"", "text/plain", 404)
        return self._send(f"<html><body><p>{path}</p></body></html>".encode())


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def _crawl(tmp_path: Path, site: str, **settings: str):
    return run_crawl(tmp_path, "-a", f"seed={site}/",
                     settings={"HIDDENWEB_BROWSER": "never", **settings})


def test_a_redirects_own_links_are_followed(site, tmp_path):
    run = _crawl(tmp_path, site)
    assert run.returncode == 0, run.stderr[-3000:]
    asked = set(Site.log)
    assert {"/new", "/kept-by-redirect", "/zipped-by-redirect"} <= asked, sorted(asked)
    assert "/logout" not in asked, sorted(asked)
    stats = run.stats or {}
    assert stats.get("hiddenweb/redirectbody/replies") == 2, stats
    assert stats.get("hiddenweb/sources/redirect-body") == 2, stats
    sources = {urlsplit(i["url"]).path: i.get("source") for i in run.items}
    assert sources.get("/kept-by-redirect") == "redirect-body", sources


def test_no_redirect_body_links_without_url_sources(site, tmp_path):
    run = _crawl(tmp_path, site, HIDDENWEB_URL_SOURCES="0")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "/new" in set(Site.log)
    assert "/kept-by-redirect" not in set(Site.log), sorted(set(Site.log))
