"""Event firing (issue 24): a rendered page's handlers fired by the crawler, one small page per
pattern, served on 127.0.0.1 by a server that logs every request; real crawls in Chromium.

Every pattern page has no ``<script>`` that builds anything by itself: only a handler does, so
the page goes to the browser for its handler alone (``needs_browser``), and what a pattern
leads to (``/t/<pattern>``) is reached only when its event is fired: a handler's URL is built
(``'/t/' + 'hover'``), as the URL sources read a literal one without a browser
(``test_script_urls``). The destructive button's
handler, and a neutral-looking one that fetches a logout URL, must never reach the server."""

from __future__ import annotations

import re
import time
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


LINK = ("var a=document.createElement('a');a.href='/t/' + '{0}';a.textContent='{0}';"
        "document.body.appendChild(a)")
PAGES = {
    # onclick on a button outside any form appends a link
    "click": _page("Click", '<input type="button" value="Show more" onclick="'
                   + LINK.format("click") + '">'
                   # the bare root's href, a route to nowhere: its handler is what it does
                   + '<a href="#/" onclick="location=\'/t/\' + \'hashclick\'">Open</a>'),
    # onmouseover opens a window
    "hover": _page("Hover", "<div onmouseover=\"window.open('/t/' + 'hover', 'w')\">Over me</div>"),
    # a javascript: link that sets location
    "jslink": _page("Script link", "<a href=\"javascript:location='/t/' + 'jslink'\">Go there</a>"),
    # a History-API route: the document stays, the URL is a page of the site
    "push": _page("Route", "<button onclick=\"history.pushState({}, '', '/t/' + 'push')\">Next"
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
    # a handler that sets out to load a page and stops it at once, and one that sets out to
    # load two, the first cancelled by the second: the guard never sees the first requests
    "stopped": _page("Stopped", "<span onclick=\"location.href='/t/' + 'stopped';"
                     " window.stop()\">Go</span><p onmousedown=\"location='/t/' + 'first';"
                     " location='/t/' + 'second'\">There</p>"),
    # a hash-routed page: the app loads a route's view when the hash changes (a listener on
    # window, none on the links); a route whose path is a logout is never taken
    "route": _page("Routes", '<nav><a href="#/alpha">Alpha</a> <a href="#!/beta">Beta</a>'
                   ' <a href="#!gamma">Gamma</a>'  # a hashbang with no slash
                   ' <a href="#/account/logout">Account</a> <a href="#top">Top</a></nav>'
                   '<div id="view"></div>', (
                       "<script>window.addEventListener('hashchange', function () {"
                       " var r = location.hash.replace(/^#(![/]?|[/])/, '');"
                       " if (r === location.hash) return;"
                       " fetch('/route/' + r).then(function (x) { return x.text(); })"
                       ".then(function (t) { document.getElementById('view').innerHTML = t; });"
                       " });</script>")),
    # one listener on the app's root handles its items' clicks (a framework's delegation):
    # none of them has a handler of its own; a plain span and a destructive button are never
    # clicked
    "delegated": _page("Delegated", (
        '<div id="app"><div role="button" data-go="alpha">Alpha</div>'
        '<span class="card" data-go="beta">Beta <b>card</b></span>'
        '<button type="button" data-go="gamma">Gamma</button>'
        '<span data-go="plain">Plain words</span>'
        '<button type="button" data-go="wipe">Delete all</button></div><div id="out"></div>'), (
        "<style>.card { cursor: pointer }</style>"
        "<script>window.addEventListener('DOMContentLoaded', function () {"
        " document.getElementById('app').addEventListener('click', function (e) {"
        "  var t = e.target.closest('[data-go]'); if (!t) return;"
        "  fetch('/api/go/' + t.dataset.go).then(function (r) { return r.text(); })"
        "  .then(function (x) { var a = document.createElement('a'); a.href = '/t/' + x;"
        "   a.textContent = x; document.getElementById('out').appendChild(a); }); }); });"
        "</script>")),
    # jQuery's $(document).on("click", "a.more", f): the listener is on the document
    "docdelegated": _page("Document delegation", '<a class="more">More news</a>', (
        "<script>document.addEventListener('click', function (e) {"
        " if (e.target.matches('a.more')) location.href = '/t/' + 'docmore'; });</script>")),
    # the links a script built are taken away by a control fired after them (a table's rows
    # regrouped): read as the page had them, a hash route's too
    "regroup": _page("Regroup", '<div id="rows"></div><button onclick="document.getElementById('
                     "'rows').textContent='grouped'\">Group by</button>", (
                         "<script>window.addEventListener('DOMContentLoaded', function () {"
                         " document.getElementById('rows').innerHTML = '<a href=\"/t/' + 'row1"
                         "\">row 1</a> <a href=\"#/rows/' + '7\">row 7</a>';"
                         " if (location.hash === '#/rows/7') fetch('/t/' + 'row7'); });</script>")),
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
REACHED = ["/t/click", "/t/hover", "/t/jslink", "/t/push", "/t/listener", "/t/stopped",
           "/t/first", "/t/second", "/route/alpha", "/route/beta", "/t/beta",
           "/api/go/alpha", "/api/go/beta", "/api/go/gamma", "/t/alpha", "/t/gamma",
           "/t/docmore", "/t/hashclick", "/route/gamma", "/t/row1",
           "/t/row7"]


class Site(SiteHandler):
    log: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        self.log.append(("GET", self.path))
        if parts.path == "/":
            return self._send(HOME)
        if parts.path.startswith("/p/") and parts.path[3:] in PAGES:
            return self._send(PAGES[parts.path[3:]])
        if parts.path.startswith("/route/") and len(parts.path) > len("/route/"):
            name = parts.path.rsplit("/", 1)[-1]
            return self._send(f'<p>{name}</p><a href="/t/{name}">{name} more</a>'.encode())
        if parts.path.startswith("/api/go/"):
            return self._send(parts.path.rsplit("/", 1)[-1].encode(), "text/plain")
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
    for name in ("click", "hover", "jslink", "push", "form", "danger", "stopped", "route"):
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
    assert not {"/api/mark", "/t/danger", "/logout", "/route/account/logout",
                "/api/go/wipe", "/api/go/plain"} & asked, sorted(asked)
    stats = run.stats or {}
    assert stats.get("hiddenweb/browser/events/skipped_unsafe", 0) >= 1
    assert stats.get("hiddenweb/browser/events/unsafe_aborted", 0) >= 1
    # the endless page: bounded by its budget
    grown = {p for p in asked if re.fullmatch(r"/t/endless/\d+", p)}
    assert 1 <= len(grown) <= BUDGET, sorted(grown)
    by_path = {urlsplit(i["url"]).path: i for i in run.items}
    assert by_path["/t/push"]["source"] == "navigation"
    # the delegated clicks: alpha, beta, gamma and the document's "More news"
    assert stats.get("hiddenweb/browser/events/delegated", 0) >= 4


def test_links_an_event_took_away_are_lost_with_the_knob_off(site, tmp_path):
    run = _crawl(tmp_path, site, HIDDENWEB_LAB='{"browser_event_hidden_links": false}')
    assert run.returncode == 0, run.stderr[-3000:]
    asked = {urlsplit(path).path for _, path in Site.log}
    assert "/p/regroup" in asked and "/t/click" in asked
    assert not {"/t/row1", "/t/row7"} & asked, sorted(asked)


def test_events_off_fire_nothing(site, tmp_path):
    run = _crawl(tmp_path, site, HIDDENWEB_BROWSER_EVENTS="0")
    assert run.returncode == 0, run.stderr[-3000:]
    asked = {urlsplit(path).path for _, path in Site.log}
    assert "/p/click" in asked
    assert not {"/t/click", "/t/hover", "/t/jslink", "/t/push", "/t/listener",
                "/api/go/alpha", "/t/docmore"} & asked, sorted(asked)
    assert not (run.stats or {}).get("hiddenweb/browser/events/fired")
    # a hash route is a page of its own (hiddenweb.routes), rendered and routed without events;
    # its logout route is never taken
    assert {"/route/alpha", "/route/beta", "/route/gamma"} <= asked
    assert "/route/account/logout" not in asked


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
    # a hash-route link: its route, the URL's fragment, is judged with it
    assert events.unsafe(target("Account", href=page + "#/account/logout"), page) is not None
    assert events.unsafe(target("Alpha", href=page + "#!/alpha"), page) is None


CITIES = {"north": ["oslo", "bergen"], "south": ["rome", "naples", "bari"]}
SHOPS = _page("Find a shop", (
    '<form action="/shops"><select name="region"><option value="">Region</option>'
    + "".join(f'<option value="{r}">{r}</option>' for r in CITIES)
    + '</select><select name="city"><option value="">City</option></select>'
    '<input type="submit" value="Find"></form>'), (
    "<script>window.addEventListener('DOMContentLoaded', function () {"
    " var r = document.querySelector('[name=region]'), c = document.querySelector('[name=city]');"
    " r.addEventListener('change', function () {"
    "  while (c.options.length > 1) c.remove(1);"
    "  if (!r.value) return;"
    "  fetch('/cities?region=' + r.value).then(function (x) { return x.json(); })"
    "   .then(function (l) { l.forEach(function (v) { var o = document.createElement('option');"
    "    o.value = v; o.textContent = v; c.appendChild(o); }); }); }); });</script>"))


class ShopSite(SiteHandler):
    """A dependent select: the city select is filled by a script once a region is chosen."""

    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        from urllib.parse import parse_qs

        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.log.append(self.path)
        if parts.path == "/":
            return self._send(_page("Home", '<a href="/find">Find a shop</a>'))
        if parts.path == "/find":
            return self._send(SHOPS)
        if parts.path == "/cities":
            return self._json(CITIES.get(query.get("region"), []))
        if parts.path == "/shops":
            city, region = query.get("city", ""), query.get("region", "")
            if city in CITIES.get(region, ()):
                return self._send(_page(f"Shops in {city}", f"<p>The {city} shop, {region}</p>"))
            return self._send(_page("No results", "<p>No shop matches.</p>"))
        return self._send(b"", "text/plain", 404)


def test_a_select_whose_options_were_fired_is_set_back_and_probed_as_dependent(tmp_path):
    """Firing the region select's change handler option by option left it on the last region,
    its cities filled in: the form was then read as an ordinary one (cities of one region
    only) and not probed as a dependent select. The select is set back at the end, so the
    probe runs and every region's cities are sent."""
    with serve(ShopSite) as url:
        run = _crawl(tmp_path, url)
        log = list(ShopSite.log)
    assert run.returncode == 0, run.stderr[-3000:]
    stats = run.stats or {}
    assert stats.get("hiddenweb/browser/events/fired", 0) >= len(CITIES)
    assert stats.get("hiddenweb/forms/dependent_values") == len(CITIES), stats
    sent = {(q.get("region"), q.get("city")) for q in (
        dict(p.split("=", 1) for p in urlsplit(path).query.split("&") if "=" in p)
        for path in log if path.startswith("/shops?"))}
    assert {(r, c) for r, cities in CITIES.items() for c in cities} <= sent, sent


BUSY = _page("Busy", '<div id="c"></div><input type="button" value="first" '
             "onclick=\"load('fir' + 'st')\"><input type=\"button\" value=\"second\" "
             "onclick=\"load('sec' + 'ond')\">", (
                 "<script>var busy = 0; function load(name) {"
                 " if (busy) { alert('one request at a time'); return; } busy = 1;"
                 " var x = new XMLHttpRequest(); x.open('GET', '/slow/' + name);"
                 " x.onload = function () { busy = 0;"
                 "  document.getElementById('c').textContent = x.responseText; };"
                 " x.send(); }</script>"))


class BusySite(SiteHandler):
    """A page whose two buttons each load a fragment by XHR, one at a time (the second click
    while the first request is out alerts and does nothing), from a server that takes 1.5 s."""

    log: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        if self.path == "/":
            return self._send(_page("Home", '<a href="/busy">busy</a>'))
        if self.path == "/busy":
            return self._send(BUSY)
        if self.path.startswith("/slow/"):
            time.sleep(1.5)
            return self._send(b"<p>fragment</p>")
        return self._send(b"", "text/plain", 404)


@pytest.mark.parametrize("retry", ["3.0", "0"])
def test_an_event_answered_by_a_dialog_alone_is_fired_again_once_the_page_is_quiet(
        tmp_path: Path, retry: str):
    """The second button is clicked while the first button's request is still out (1.5 s,
    beyond the 1 s an event's requests are awaited): it alerts and sends nothing. With the lab
    knob ``browser_event_retry`` it is fired once more after the page's requests have ended,
    and its request is made; with 0, never."""
    with serve(BusySite) as url:
        run = _crawl(tmp_path, url, HIDDENWEB_LAB=f'{{"browser_event_retry": {retry}}}')
        log = list(BusySite.log)
    assert run.returncode == 0, run.stderr[-3000:]
    stats = run.stats or {}
    assert "/slow/first" in log and stats.get("hiddenweb/browser/dialogs", 0) >= 1
    if retry != "0":
        assert "/slow/second" in log, log
        assert stats.get("hiddenweb/browser/events/retried", 0) >= 1
    else:
        assert "/slow/second" not in log, log
        assert not stats.get("hiddenweb/browser/events/retried")
