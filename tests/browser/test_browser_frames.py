"""Frames, shadow DOM and ``<template>`` (issue 24): links and forms a page holds in templates,
declarative and scripted shadow roots (nested ones too), ``srcdoc`` and script-written frames
are read as the page's; same-host frames are crawled as pages, off-host ones never asked.
Small pages served on 127.0.0.1 by a server that logs every request; real crawls.

The off-host frame points at the same server under another host name (``localhost``), so a
request for it would show in the log."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from parsel import Selector

from hiddenweb.browser.detect import needs_browser

CHROMIUM = Path("/usr/bin/chromium")


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"{body}</body></html>").encode()


def _form(action: str) -> str:
    return (f"<form action='{action}'><select name='k'><option>a</option><option>b</option>"
            "</select><input type='submit' value='Go'></form>")


STATIC = _page("Static", (
    "<template id='row'><p><a href='/t/template'>row</a></p>" + _form("/t/template-form")
    + "</template>"
    "<div><template shadowrootmode='open'><a href='/t/dsd'>in a shadow root</a>"
    "<div><template shadowrootmode='open'><a href='/t/dsd-nested'>nested</a></template></div>"
    "</template></div>"
    "<iframe srcdoc=\"<p><a href='/t/srcdoc'>in srcdoc</a></p>" + _form("/t/srcdoc-form")
    + "\"></iframe>"
    "<iframe src='/frame/a'></iframe>"
    "<iframe src='http://localhost:{port}/offsite'></iframe>"))
FRAMESET = (b"<!doctype html><html><head><title>Frames</title></head><frameset cols='50%,50%'>"
            b"<frame src='/t/frameset-a'><frame src='/t/frameset-b'></frameset></html>")
# built by scripts: a custom element's shadow root with a link, a button whose listener adds a
# link, and a nested shadow root with a form; an about:blank frame a script writes a link into
SCRIPTED = _page("Scripted", (
    "<x-card id='card'></x-card><div id='slot'></div><script>"
    "const outer = document.getElementById('card').attachShadow({mode: 'open'});"
    "outer.innerHTML = \"<a href='/t/shadow-js'>card</a><button id='b'>Details</button>"
    "<span id='in'></span>\";"
    "const inner = outer.getElementById('in').attachShadow({mode: 'open'});"
    "inner.innerHTML = \"" + _form("/t/shadow-form") + "\";"
    "outer.getElementById('b').addEventListener('click', () => {"
    " const a = document.createElement('a'); a.href = '/t/shadow-click'; outer.appendChild(a); });"
    "const f = document.createElement('iframe'); document.getElementById('slot').appendChild(f);"
    "f.contentDocument.open();"
    "f.contentDocument.write(\"<a href='/t/blank-frame'>written</a>\");"
    "f.contentDocument.close();</script>"))
STATIC_REACHED = ["/t/template", "/t/dsd", "/t/dsd-nested", "/t/srcdoc", "/frame/a",
                  "/t/frameset-a", "/t/frameset-b"]
STATIC_FORMS = ["/t/template-form", "/t/srcdoc-form"]


class Site(SiteHandler):
    log: list[str] = []
    port = 0

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        self.log.append(f"{self.headers.get('Host', '').split(':')[0]} {self.path}")
        if parts.path == "/":
            return self._send(_page("Home", "<a href='/p/static'>static</a> "
                                    "<a href='/p/frameset'>frames</a> "
                                    "<a href='/p/scripted'>scripted</a>"))
        if parts.path == "/p/static":
            return self._send(STATIC.replace(b"{port}", str(self.server.server_port).encode()))
        if parts.path == "/p/frameset":
            return self._send(FRAMESET)
        if parts.path == "/p/scripted":
            return self._send(SCRIPTED)
        if parts.path in ("/robots.txt", "/sitemap.xml"):
            return self._send(b"", "text/plain", 404)
        return self._send(_page(parts.path, "<p>a target page</p>"))


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def _crawl(tmp_path: Path, site: str, **settings: str):
    return browser_crawl(tmp_path, site, 30, **settings)


def _asked() -> tuple[set[str], set[str]]:
    """The paths asked of 127.0.0.1, and the full paths (with queries) asked of any host."""
    paths = {urlsplit(line.split(" ", 1)[1]).path for line in Site.log
             if line.startswith("127.0.0.1 ")}
    return paths, {line.split(" ", 1)[1] for line in Site.log}


def _check_static(run) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    paths, full = _asked()
    for path in STATIC_REACHED:
        assert path in paths, (path, sorted(Site.log))
    for action in STATIC_FORMS:  # submitted with the form's own values
        assert any(p.startswith(f"{action}?k=") for p in full), (action, sorted(Site.log))
    assert not any(line.startswith("localhost ") for line in Site.log), Site.log


def test_templates_shadow_roots_srcdoc_and_frames_over_plain_http(site, tmp_path):
    run = _crawl(tmp_path, site, HIDDENWEB_BROWSER="never")  # (no guessed sources: crawlrun)
    _check_static(run)
    paths, _ = _asked()
    assert "/t/shadow-js" not in paths  # built by a script: the browser's


@pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")
def test_scripted_shadow_roots_and_frames_in_the_browser(site, tmp_path):
    assert needs_browser(Selector(text=SCRIPTED.decode()))
    run = _crawl(tmp_path, site)
    _check_static(run)
    paths, full = _asked()
    # a link, a listener fired by the events, a script-written frame's link
    assert {"/t/shadow-js", "/t/shadow-click", "/t/blank-frame"} <= paths, sorted(Site.log)
    assert any(p.startswith("/t/shadow-form?k=") for p in full), sorted(Site.log)
    stats = run.stats or {}
    assert stats.get("hiddenweb/browser/shadow_roots", 0) >= 2
    assert stats.get("hiddenweb/browser/frame_documents", 0) >= 1


def test_srcdoc_documents_are_appended_and_their_forms_marked():
    from scrapy.http import HtmlResponse

    from hiddenweb.framedocs import appended, with_srcdoc

    plain = HtmlResponse("http://h/p", body=b"<html><body><p>no frames</p></body></html>")
    assert with_srcdoc(plain) is plain
    page = with_srcdoc(HtmlResponse("http://h/p", body=(
        b"<html><body><form id=own></form><iframe srcdoc=\"<form id=framed action='/x'>"
        b"</form><a href='rel'>r</a>\"></iframe></body></html>")))
    assert page.xpath("//a/@href").get() == "rel" and page.urljoin("rel") == "http://h/rel"
    assert not appended(page.xpath("//form[@id='own']")[0])
    assert appended(page.xpath("//form[@id='framed']")[0])
