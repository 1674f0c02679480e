"""Issue 24: a browser request is decided again as it starts (``RenderGate.at_dispatch``): a
queued re-render of a template judged idle since is withdrawn (its forms read from the plain
copy it carries), and a page sent straight to Chromium by a template that no longer goes there
is read over plain HTTP.

Unit tests with a real render gate and policy, then ``scrapy crawl hwdla`` with real Chromium
against a site the test serves on 127.0.0.1.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy import Request, Spider
from scrapy.exceptions import DontCloseSpider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from hiddenweb.browser import BrowserPolicy
from hiddenweb.browser.renders import OFFER_META, RenderGate
from hiddenweb.browser.requests import DIRECT_META, direct_meta, rerender_request
from hiddenweb.pagetext import template_key

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

PLAIN = ("<html><body><h1>List {i}</h1><div id=out></div>"
         "<form action='/list/{i}/find'><select name=part><option>all</option></select>"
         "<input type=submit value=Show></form>"
         "<script>document.getElementById('out').appendChild(document.createElement('p'))"
         "</script></body></html>")


def _gate(withdraw: bool = True, by_scripts: bool = False):
    """A render gate (lab knob ``browser_withdraw`` as given) whose dropped pages' forms are
    recorded, on a crawler whose engine records what it is given to crawl."""
    crawler = get_crawler(Spider)
    crawled: list[Request] = []
    crawler.engine = SimpleNamespace(crawl=crawled.append)
    forms_read: list[str] = []

    def dropped(plain: HtmlResponse):
        forms_read.append(plain.url)
        assert "Show" in plain.text and not plain.meta.get("playwright")
        yield Request(plain.url + "/find?part=all")

    policy = BrowserPolicy("auto", min_seen=4)
    gate = RenderGate(crawler, policy, in_scope=lambda url: True, dropped=dropped,
                      withdraw=withdraw, redo_scripts=by_scripts)
    return crawler, policy, gate, crawled, forms_read


def _page(i: int, url: str = "") -> HtmlResponse:
    url = url or f"http://h/list/{i}"
    return HtmlResponse(url, body=PLAIN.format(i=i).encode(), encoding="utf-8",
                        request=Request(url, meta={"hiddenweb_source": "link"}))


def _render_back(gate: RenderGate, request: Request, useful: bool) -> None:
    body = request.meta["hiddenweb_body"].decode()
    if useful:
        body = body.replace("</body>", "<a href='/extra'>built by script</a></body>")
    gate.judged(HtmlResponse(request.url, body=body.encode(), encoding="utf-8",
                             request=request))


def test_a_queued_render_of_a_template_judged_idle_since_is_withdrawn():
    """Four renders of a template added a link: its 30 held pages are released to the
    scheduler. The next renders add nothing and the template is judged idle; the renders still
    queued are then withdrawn as they start (but the few an idle template still gets), and
    their forms are read from the plain copy each carries."""
    crawler, policy, gate, crawled, forms_read = _gate()
    offered = [gate.offer(page, rerender_request(page, True)) for page in map(_page, range(34))]
    first = [r for r in offered if isinstance(r, Request)]
    assert len(first) == 4 and offered[4:] == ["held"] * 30
    for request in first:
        _render_back(gate, request, useful=True)
    assert len(crawled) == 30 and policy.verdict("http://h/list/99") == "useful"
    queued = list(crawled)
    crawled.clear()
    assert [gate.at_dispatch(r) for r in queued[:5]] == ["render"] * 5  # still useful
    for request in queued[:5]:
        _render_back(gate, request, useful=False)
    assert policy.verdict("http://h/list/99") == "idle"  # 4 of 9 renders added something
    decisions = [gate.at_dispatch(r) for r in queued[5:]]
    assert decisions.count("render") == 2  # the 10th and 20th page of an idle template
    assert decisions.count("withdraw") == 23
    assert crawler.stats.get_value("hiddenweb/browser/renders_withdrawn") == 23
    assert crawler.stats.get_value("hiddenweb/browser/not_rendered") == 23  # the crawl report's
    withdrawn = [r.url for r, d in zip(queued[5:], decisions, strict=True) if d == "withdraw"]
    assert forms_read == withdrawn
    assert [r.url for r in crawled] == [f"{url}/find?part=all" for url in withdrawn]
    assert gate.pending[template_key("http://h/list/1")] == 2  # the two rendering are out
    # a re-render without its plain copy (not reused) is rendered: nothing to read instead
    bare = rerender_request(_page(50), False)
    bare.meta[OFFER_META] = frozenset()
    assert gate.at_dispatch(bare) == "render"


@pytest.mark.parametrize("by_scripts", [True, False])
def test_a_queued_render_of_a_template_whose_scripts_were_judged_idle_since_is_withdrawn(
        by_scripts: bool):
    """Every page a template of its own, all running one script (a wiki's pages). The first
    8 renders are enough to judge the script, so the pages of 3 more templates wait for that
    verdict; the crawl goes idle meanwhile and they are released to the scheduler. The 8 come
    back idle: with the lab knob ``browser_withdraw_by_scripts`` the 3 are judged by their
    scripts as they start, as a template met after the verdict is, and withdrawn; without it
    they are rendered (no render of their own judged)."""
    crawler, policy, gate, crawled, forms_read = _gate(by_scripts=by_scripts)
    pages = [_page(i, f"http://h/wiki/{WORDS[i]}") for i in range(11)]
    offered = [gate.offer(page, rerender_request(page, True)) for page in pages]
    assert all(isinstance(r, Request) for r in offered[:8]) and offered[8:] == ["held"] * 3
    with pytest.raises(DontCloseSpider):
        gate.release_all()  # the spider is idle: nothing waits for a verdict
    released = list(crawled)
    assert [r.url for r in released] == [p.url for p in pages[8:]]
    for request in offered[:8]:
        _render_back(gate, request, useful=False)
    assert policy.scripts_idle(pages[9].url)
    decisions = [gate.at_dispatch(r) for r in released]
    assert decisions == (["withdraw"] * 3 if by_scripts else ["render"] * 3)
    assert forms_read == ([p.url for p in pages[8:]] if by_scripts else [])
    assert crawler.stats.get_value("hiddenweb/browser/withdrawn_by_scripts", 0) == \
        (3 if by_scripts else 0)
    assert not any(gate.pending.values()) if by_scripts else sum(gate.pending.values()) == 3


def test_without_the_knob_every_queued_render_starts():
    crawler, policy, gate, crawled, forms_read = _gate(withdraw=False)
    offered = [gate.offer(page, rerender_request(page, True)) for page in map(_page, range(12))]
    for request in offered[:4]:
        _render_back(gate, request, useful=True)
    queued = list(crawled)
    for request in queued[:5]:
        _render_back(gate, request, useful=False)
    assert policy.verdict("http://h/list/99") == "idle"
    assert [gate.at_dispatch(r) for r in queued[5:]] == ["render"] * 3 and not forms_read


def test_a_page_sent_straight_to_chromium_goes_over_plain_http_once_its_template_does_not():
    crawler, policy, gate, crawled, forms_read = _gate()
    for i in range(4):
        policy.record(f"http://h/app/{i}", True)
        policy.rendered(f"http://h/app/{i}", True)
    assert policy.direct("http://h/app/99")
    queued = [Request(f"http://h/app/{i}", meta={**direct_meta(), DIRECT_META: True})
              for i in range(4, 8)]
    assert gate.at_dispatch(queued[0]) == "render" and queued[0].meta["playwright"]
    for i in range(4, 9):
        policy.rendered(f"http://h/app/{i}", False)  # its direct renders added nothing
    assert not policy.direct("http://h/app/99")
    for request in queued[1:]:
        assert gate.at_dispatch(request) == "plain"
        assert not any(k in request.meta for k in ("playwright", "download_slot", DIRECT_META))
    assert crawler.stats.get_value("hiddenweb/browser/direct_withdrawn") == 3
    # a browser request the spider did not send there for its template is left alone
    form = Request("http://h/app/9", meta=direct_meta())
    assert gate.at_dispatch(form) == "render" and form.meta["playwright"]


WORDS = [a + b for a in ("amber", "basil", "cedar", "delta", "ember", "flint", "grove", "heron")
         for b in ("fox", "gull", "hare", "ibis", "jay", "kite", "lynx", "mole")]
LISTS = 60


class ListSite(SiteHandler):
    """The home page links to lists 0-3, whose script builds a link to an extra page; each
    extra page links to 14 more lists (4-59), whose same script builds nothing. Every list has
    a form."""

    def do_GET(self) -> None:  # noqa: N802
        type(self).log.append(self.path)
        if self.path == "/":
            body = "<h1>Lists</h1>" + "".join(f"<a href='/list/{i}'>list {WORDS[i]}</a> "
                                              for i in range(4))
        elif m := re.fullmatch(r"/list/(\d+)", self.path):
            i = int(m[1])
            extra = f" data-extra='{i}'" if i < 4 else ""
            body = (f"<div id=out{extra}></div><h1>List {WORDS[i]}</h1>"
                    f"<form action='/list/{i}/find'><select name=part><option>all</option>"
                    "</select><input type=submit value=Show></form><script>"
                    "(function () { var out = document.getElementById('out');"
                    " if (!out.dataset.extra) return;"
                    " var a = document.createElement('a');"
                    " a.href = '/extra/' + out.dataset.extra; a.textContent = 'extra';"
                    " out.appendChild(a); })();</script>")
        elif m := re.fullmatch(r"/list/(\d+)/find\?part=all", self.path):
            body = f"<h1>Parts of {WORDS[int(m[1])]}</h1>"
        elif m := re.fullmatch(r"/extra/(\d+)", self.path):
            n = int(m[1])
            body = f"<h1>Extra {WORDS[n]}</h1>" + "".join(
                f"<a href='/list/{i}'>list {WORDS[i]}</a> " for i in range(4 + 14 * n,
                                                                        18 + 14 * n))
        else:
            return self._send(b"not found", status=404)
        self._send(f"<html><body>{body}</body></html>".encode())


@needs_chromium
@pytest.mark.slow
@pytest.mark.browser
def test_a_crawl_stops_rendering_a_templates_queued_pages_once_its_renders_add_nothing(
        tmp_path: Path):
    """The lists' first renders add a link, so the 56 lists met next are queued for Chromium;
    their renders add nothing, and once the template is judged idle the lists still queued are
    read over plain HTTP. Every list is read and its form submitted."""
    with serve(ListSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "auto", "HIDDENWEB_CLOSE_STALE": 0,
            "HIDDENWEB_BROWSER_MAX_PAGES": 2})
        log = list(ListSite.log)
    assert run.returncode == 0, run.stderr[-2000:]
    stats = run.stats
    assert {p for p in log if p.startswith("/extra/")} == {f"/extra/{i}" for i in range(4)}
    paths = {item["url"].split(url, 1)[1] for item in run.items}
    assert {f"/list/{i}" for i in range(LISTS)} <= paths
    assert {f"/list/{i}/find?part=all" for i in range(LISTS)} <= set(log)
    withdrawn = stats.get("hiddenweb/browser/direct_withdrawn", 0) \
        + stats.get("hiddenweb/browser/renders_withdrawn", 0)
    # 11 browser pages in runs here (4 useful, 7 idle) and 24 withdrawn; with the lab knob
    # browser_min_renders at 4, 13 pages and 34 withdrawn; 47 pages with browser_withdraw off
    assert withdrawn >= 15
    assert stats["hiddenweb/browser/pages"] <= 20
