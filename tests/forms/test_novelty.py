"""A form's answer is a success only when it shows a new set of texts (pagetext.ShownText).

Unit tests on real HTML responses, then `scrapy crawl hwdla` against a site the test serves on
127.0.0.1: a search box that only echoes what it was asked ("No records match 'X'"), beside a
record list sortable by each column (the echo does not read as "no results", which the
explorer knows already). Judged by fingerprints, every echo and every sort order is
a new page; judged by what it shows, none is.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy import Request
from scrapy.http import HtmlResponse

from hiddenweb.forms.explorer import INERT
from hiddenweb.pagetext import NOVEL_META, ShownText, echoed_words, text_blocks

RECORDS = [(f"REC-{i:03d}", f"Owner {name}", f"{1900 + i}")
           for i, name in enumerate(["Ada", "Bob", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"])]


def page(url: str, body: str) -> HtmlResponse:
    return HtmlResponse(url=url, body=f"<html><body>{body}</body></html>".encode(),
                        encoding="utf-8", request=Request(url))


def table(rows) -> str:
    return "<table>" + "".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>"
                               for a, b, c in rows) + "</table>"


def judge(shown: ShownText, response: HtmlResponse) -> bool:
    return shown.judge({}, text_blocks(response), echoed_words(response.request))


def test_another_order_or_an_echo_is_not_novel_a_subset_and_a_new_record_are():
    shown = ShownText(True)
    assert judge(shown, page("http://h/list", table(RECORDS)))
    assert not judge(shown, page("http://h/list?sort=owner", table(sorted(RECORDS, key=str))))
    assert not judge(shown, page("http://h/list?sort=-year", table(RECORDS[::-1])))
    assert not judge(shown, page("http://h/find?q=tulip",
                                 table(RECORDS) + "<p>No records match 'tulip'</p>"))
    assert not judge(shown, page("http://h/find?q=fern",
                                 table(RECORDS) + "<p>No records match 'fern'</p>"))
    assert judge(shown, page("http://h/list?year=1901", table(RECORDS[1:2])))  # a subset
    assert judge(shown, page("http://h/list?page=2", table([("REC-999", "Owner Zed", "1999")])))


def test_the_verdict_is_kept_once_per_response_and_off_means_every_page_is_novel():
    shown, meta = ShownText(True), {}
    blocks = text_blocks(page("http://h/a", "<p>one</p><p>two</p>"))
    assert shown.judge(meta, blocks, set()) and meta[NOVEL_META] is True
    assert shown.judge(meta, blocks, set())  # decided once: the same response, the same verdict
    assert not shown.judge({}, blocks, set())  # another response showing the same set
    off = ShownText(False)
    assert off.judge({}, blocks, set()) and off.judge({}, blocks, set())


def test_echoed_words_are_the_values_of_the_query_and_of_a_posted_form():
    get = Request("http://h/find?q=Red+Fern&page=2")
    assert echoed_words(get) == {"red", "fern", "2"}
    post = Request("http://h/find", method="POST", body=b"city=New+York&go=1")
    assert echoed_words(post) == {"new", "york", "1"}


class EchoSite(SiteHandler):
    """A record list sortable by each column and a search box that only echoes the query."""

    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        type(self).log.append(self.path)
        if url.path == "/":
            cols = "".join(f'<a href="/records?sort={c}">sort by {c}</a> '
                           for c in ("ref", "owner", "year", "-ref", "-owner", "-year"))
            body = (f"<h1>Registry</h1><p>{cols}</p>"
                    '<form action="/find" method="get"><input type="text" name="q">'
                    '<input type="submit" value="Search"></form>')
        elif url.path == "/records":
            key = {"ref": 0, "owner": 1, "year": 2}[query.get("sort", ["ref"])[0].lstrip("-")]
            rows = sorted(RECORDS, key=lambda r: r[key],
                          reverse=query.get("sort", [""])[0].startswith("-"))
            body = "<h1>Records</h1>" + table(rows) + '<a href="/">home</a>'
        elif url.path == "/find":
            q = query.get("q", [""])[0]
            body = (f"<h1>Search</h1><p>You searched the registry for '{q}'.</p>"
                    f'<form action="/find" method="get"><input type="text" name="q" value="{q}">'
                    '<input type="submit" value="Search"></form>')
        else:
            return self._send(b"not found", status=404)
        self._send(f"<html><body>{body}</body></html>".encode())


def test_a_crawl_stops_sending_a_form_whose_answers_only_echo(tmp_path: Path):
    """With novelty, the echoing search box is a blind form: no answer is a success, none is
    rewarded, and the stopping rule retires it after its blind budgets. Without it, every echo
    is a "new page", rewarded, and the form is sent up to its maximum."""
    sent = {}
    for arm, on in (("on", True), ("off", False)):
        with serve(EchoSite) as url:
            run = run_crawl(tmp_path / arm, "-a", f"seed={url}/", settings={
                "HIDDENWEB_BROWSER": "never", "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": 120,
                "HIDDENWEB_STOP_MASS": 0.05,
                # the form's own rule is tested: the crawl-level rule (hiddenweb.stale) would
                # close the crawl once 100 echoes showed no new word, with submissions queued
                "HIDDENWEB_CLOSE_STALE": 0,
                "HIDDENWEB_LAB": {"novelty": on, "form_blind_budget": 20}})
            assert run.returncode == 0, run.stderr[-2000:]
            sent[arm] = sum(p.startswith("/find?") for p in EchoSite.log)
            stats = run.stats
        assert stats["hiddenweb/forms/submissions"] == sent[arm]
        new, rewards = (stats.get(k, 0) for k in ("hiddenweb/forms/answers_new",
                                                  "hiddenweb/dla/rewards"))
        # on: the defaults' answer (the first page showing "You searched …") and one more set at
        # most; the two public pages with a form not seen before are rewarded too
        assert new <= 2 and rewards <= 4 if on else new > 50 and rewards > 50
    assert sent["on"] <= 60 < 100 <= sent["off"]


def test_form_submissions_are_what_the_site_received_when_a_crawl_closes_with_some_queued(
        tmp_path: Path):
    """``hiddenweb/forms/submissions`` counts submissions sent, ``…/submissions_made`` those
    made: a crawl that closes stale (20 echoes with no new word) while the echoing form's
    submissions wait in the scheduler reports what the site received, not what it queued."""
    with serve(EchoSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "never", "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": 120,
            "HIDDENWEB_CLOSE_STALE": 20, "CONCURRENT_REQUESTS": 2,
            "HIDDENWEB_LAB": {"novelty": False}})
        assert run.returncode == 0, run.stderr[-2000:]
        received = sum(p.startswith("/find?") for p in EchoSite.log)
    stats = run.stats
    assert stats["finish_reason"] == "hiddenweb_stale"
    assert stats["hiddenweb/forms/submissions"] == received > 20
    assert stats["hiddenweb/forms/submissions_made"] > received  # some never sent


class IgnoringSite(SiteHandler):
    """A form whose box the site ignores: every answer is the defaults' page, the query only
    in the box's value and in the page's export link (so each answer is a new fingerprint)."""

    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        type(self).log.append(self.path)
        if url.path not in ("/", "/run"):
            return self._send(b"not found", status=404)
        q = parse_qs(url.query).get("q", [""])[0]
        body = ("<h1>Console</h1><p>Type a command and run it.</p>"
                f'<a href="/export?q={q}">export</a>'
                f'<form action="/run" method="get"><input type="text" name="q" value="{q}">'
                '<input type="submit" value="Run"></form>')
        self._send(f"<html><body>{body}</body></html>".encode())


def test_a_form_whose_answers_are_its_defaults_answer_is_ended(tmp_path: Path):
    """Eight values whose answers showed exactly the defaults' answer, none a new page: the
    form does not read its box, and no more values are sent (without the stopping rule)."""
    with serve(IgnoringSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "never", "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": 120})
        sent = sum(p.startswith("/run?") for p in IgnoringSite.log)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stats["hiddenweb/forms/inert"] == 1
    assert sent <= 1 + INERT + 8  # the defaults, the values that showed it, a wave in flight


class PreferencesSite(SiteHandler):
    """A page whose form only stores view preferences: it is posted, and the site answers
    "303 See Other" back to the page the reader was on (Post/Redirect/Get). Whatever values
    go, the crawl is sent to a page it has already read."""

    WORDS = " ".join(f"word{i}" for i in range(60))

    def _page(self) -> None:
        body = ("<h1>Changes of the guide</h1>"
                f"<p>{self.WORDS}</p><a href='/'>home</a>"
                '<form action="/doc" method="post"><label>Style <select name="style">'
                '<option>inline</option><option>side by side</option></select></label>'
                # a free-text box (a box the page fills with a number takes a few numbers
                # only: too few answers to judge the form by)
                '<label>Highlight words <input type="text" name="highlight" value="">'
                '</label><input type="submit" value="Apply"></form>')
        self._send(f"<html><body>{body}</body></html>".encode())

    def do_GET(self) -> None:  # noqa: N802
        type(self).log.append(("GET", self.path))
        if self.path == "/":
            return self._send(b"<html><body><a href='/doc'>the guide's changes</a></body></html>")
        if self.path == "/doc":
            return self._page()
        self._send(b"not found", status=404)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).log.append(("POST", self.path))
        self.send_response(303)
        self.send_header("Location", "/doc")
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_form_whose_answers_redirect_to_a_page_read_is_ended(tmp_path: Path):
    """A preferences form (POST, answered by a redirect to the page already read): each answer
    is dropped as a duplicate, so no answer was ever "the defaults' page"; eight such answers,
    none new, end the form as inert instead of sending every value it has (62 before)."""
    with serve(PreferencesSite) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", settings={
            "HIDDENWEB_BROWSER": "never", "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": 300})
        posts = sum(method == "POST" for method, _ in PreferencesSite.log)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stats["hiddenweb/forms/redirected_to_read"] >= INERT
    assert run.stats["hiddenweb/forms/inert"] == 1
    assert posts <= 1 + INERT + 8  # the defaults, the values that showed it, a wave in flight


def test_values_whose_answers_all_show_one_page_end_the_form_whatever_the_defaults_showed():
    """The defaults' answer was read one way (rendered in Chromium: a frame's text added) and
    the values' answers another (over plain HTTP, once the page's renders added nothing): each
    value's answer shows what the one before showed, and the form is ended as inert; values
    whose answers differ from each other are not."""
    from parsel import Selector

    from hiddenweb.forms.explorer import FormExplorer
    from hiddenweb.forms.extract import extract_forms
    from hiddenweb.forms.lvs import LVS, LVSLabel

    def explorer() -> FormExplorer:
        html = '<form action="/s"><label for="q">Keyword</label><input id="q" name="q"></form>'
        form = extract_forms(Selector(text=html), "http://h/")[0]
        lvs = LVS([LVSLabel("keyword", ["keyword"], [f"word{i}" for i in range(40)],
                            open=True)])
        return FormExplorer(form, lvs, limit=40, wave=1, patience=1000, learn=0)

    def run(ex: FormExplorer, shown) -> int:
        queue, sent = ex.first(), 0
        while queue and sent < 40:
            data = queue.pop(0)
            sent += 1
            queue += ex.feedback(data, False, shown=shown(data, sent))
        return sent

    same = explorer()
    sent = run(same, lambda data, n: 111 if not data else 222)  # defaults 111, values 222
    assert same.ended_inert and sent <= 1 + INERT + 1
    varied = explorer()
    run(varied, lambda data, n: 111 if not data else 1000 + n)
    assert not varied.ended_inert
