"""Event firing (issue 24): a rendered page's handlers fired by the crawler, one small page per
pattern, served on 127.0.0.1 by a server that logs every request; real crawls in Chromium.

Every pattern page has no ``<script>`` that builds anything by itself: only a handler does, so
the page goes to the browser for its handler alone (``needs_browser``), and what a pattern
leads to (``/t/<pattern>``) is reached only when its event is fired. The destructive button's
handler, and a neutral-looking one that fetches a logout URL, must never reach the server."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import browser_crawl
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from parsel import Selector

from hiddenweb.browser.detect import needs_browser

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

BUDGET = 12  # the endless page's events fired at most (HIDDENWEB_BROWSER_EVENT_BUDGET)


def _page(title: str, body: str, head: str = "") -> bytes:
    return (f"<!doctype html><html><head><title>{title}</title>{head}</head>"
            f"<body><h1>{title}</h1>{body}</body></html>").encode()


LINK = ("var a=document.createElement('a');a.href='/t/{0}';a.textContent='{0}';"
        "document.body.appendChild(a)")
PAGES = {
    # onclick on a button outside any form appends a link
    "click": _page("Click", '<input type="button" value="Show more" onclick="'
                   + LINK.format("click") + '">'),
    # onmouseover opens a window
    "hover": _page("Hover", "<div onmouseover=\"window.open('/t/hover', 'w')\">Over me</div>"),
    # a javascript: link that sets location
    "jslink": _page("Script link", "<a href=\"javascript:location='/t/jslink'\">Go there</a>"),
    # a History-API route: the document stays, the URL is a page of the site
    "push": _page("Route", "<button onclick=\"history.pushState({}, '', '/t/push')\">Next"
                  "</button>"),
    # a listener added with addEventListener fetches JSON and inserts a link it builds
    "listener": _page("Listener", '<button id="b">Load</button><div id="c"></div>', (
        "<script>window.addEventListener('DOMContentLoaded', function () {"
        " document.getElementById('b').addEventListener('click', function () {"
        "  fetch('/api/slug').then(function (r) { return r.json(); }).then(function (d) {"
        "   var a = document.createElement('a'); a.href = '/t/' + d.slug; a.textContent = 'more';"
        "   document.getElementById('c').appendChild(a); }); }); });</script>")),
    # a form shown on mouseover and removed on mouseout: collected between the two events
    "form": _page("Form", '<span onmouseover="document.getElementById(\'x\').innerHTML='
                  "'<form action=/t/form><select name=k><option>a<option>b</select>"
                  "<input type=submit value=Show></form>'\""
                  " onmouseout=\"document.getElementById('x').innerHTML=''\">Menu"
                  '</span><div id="x"></div>'),
    # must never be fired: a destructive label; and a neutral label whose fetch is a logout
    "danger": _page("Danger", "<button onclick=\"fetch('/api/mark?from=danger');"
                    "location='/t/danger'\">Delete everything</button>"
                    "<span onclick=\"fetch('/lo' + 'gout')\">Menu</span>"),
    # every click adds another button like itself and a link: bounded by the budget
    "endless": _page("Endless", '<div id="r"></div>', (
        "<script>var n = 0; function grow() { n++;"
        " var a = document.createElement('a'); a.href = '/t/endless/' + n; a.textContent = n;"
        " var b = document.createElement('button'); b.textContent = 'More';"
        " b.onclick = grow; var r = document.getElementById('r');"
        " r.appendChild(a); r.appendChild(b); }"
        " window.addEventListener('load', function () { var b = document.createElement('button');"
        " b.textContent = 'More'; b.onclick = grow;"
        " document.getElementById('r').appendChild(b); });</script>")),
}
HOME = _page("Home", "".join(f'<a href="/p/{name}">{name}</a> ' for name in PAGES))
REACHED = ["/t/click", "/t/hover", "/t/jslink", "/t/push", "/t/listener"]


class Site(SiteHandler):
    log: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        self.log.append(("GET", self.path))
        if parts.path == "/":
            return self._send(HOME)
        if parts.path.startswith("/p/") and parts.path[3:] in PAGES:
            return self._send(PAGES[parts.path[3:]])
        if parts.path == "/api/slug":
            return self._send(b'{"slug": "listener"}', "application/json")
        if parts.path in ("/robots.txt", "/sitemap.xml"):
            return self._send(b"", "text/plain", 404)
        return self._send(_page(parts.path, "<p>a target page</p>"))


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def _crawl(tmp_path: Path, site: str, **settings: str):
    return browser_crawl(tmp_path, site, 20, HIDDENWEB_BROWSER_EVENT_BUDGET=str(BUDGET),
                         # events alone ("Show more": test_browser_scroll)
                         HIDDENWEB_BROWSER_SCROLL_STEPS="0", **settings)


def test_pages_whose_only_dynamic_part_is_a_handler_need_the_browser():
    for name in ("click", "hover", "jslink", "push", "form", "danger"):
        assert needs_browser(Selector(text=PAGES[name].decode())), name
    assert not needs_browser(Selector(text=HOME.decode()))
    assert not needs_browser(Selector(text=_page("x", '<p class="one">on</p>').decode()))


def test_fired_events_reach_what_they_lead_to_and_nothing_unsafe(site, tmp_path):
    run = _crawl(tmp_path, site)
    assert run.returncode == 0, run.stderr[-3000:]
    assert " ERROR: " not in run.stderr, run.stderr[-3000:]
    asked = {urlsplit(path).path for _, path in Site.log}
    for path in REACHED:
        assert path in asked, (path, sorted(asked))
    # the form shown between two events was read and submitted with the page's values
    assert any(path.startswith("/t/form?k=") for _, path in Site.log), Site.log
    # never fired: neither the destructive button's requests nor the logout fetch were sent
    assert not {"/api/mark", "/t/danger", "/logout"} & asked, sorted(asked)
    stats = run.stats or {}
    assert stats.get("hiddenweb/browser/events/skipped_unsafe", 0) >= 1
    assert stats.get("hiddenweb/browser/events/unsafe_aborted", 0) >= 1
    # the endless page: bounded by its budget
    grown = {p for p in asked if re.fullmatch(r"/t/endless/\d+", p)}
    assert 1 <= len(grown) <= BUDGET, sorted(grown)
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    assert by_path["/t/push"]["source"] == "navigation"


def test_events_off_fire_nothing(site, tmp_path):
    run = _crawl(tmp_path, site, HIDDENWEB_BROWSER_EVENTS="0")
    assert run.returncode == 0, run.stderr[-3000:]
    asked = {urlsplit(path).path for _, path in Site.log}
    assert "/p/click" in asked
    assert not {"/t/click", "/t/hover", "/t/jslink", "/t/push", "/t/listener"} & asked
    assert not (run.stats or {}).get("hiddenweb/browser/events/fired")


def test_the_safety_policy_judges_each_control_before_it_is_fired():
    from hiddenweb.browser.events import PageEvents
    from hiddenweb.safety import SafetyPolicy

    events = PageEvents.__new__(PageEvents)
    events.safety = SafetyPolicy()
    page = "http://127.0.0.1:8000/p/1"

    def target(text="", code="", href="", words="", **marks):
        return {"type": "click", "tag": "button", "text": text, "code": code, "href": href,
                "words": words, **marks}

    assert events.unsafe(target("Show more", "showMore()"), page) is None
    assert events.unsafe(target("Over me", "window.open('/t/hover')"), page) is None
    assert events.unsafe(target("Delete everything"), page) == "destructive"
    assert events.unsafe(target("x", "logoutNow()"), page) is not None  # the handler's words
    assert events.unsafe(target("Go", "location='/account/logout'"), page) is not None
    assert events.unsafe(target("Buy now"), page) == "payment"
    assert events.unsafe(target("Remove", method=""), page) == "destructive"
    assert events.unsafe(target("Archive", confirm=True), page) == "destructive"
