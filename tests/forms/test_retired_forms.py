"""A form the stopping rule retired takes no more suggested values once its answers to them
repeat too (hiddenweb/forms/stopping.py, FormExplorer.decline), and the copies of a listing's
form are judged as one family.

End to end: `scrapy crawl hwdla` against a tracker the test serves on 127.0.0.1. Its search
form's empty query lists every record; each record page says who filed it, and a search for a
name filed once redirects to that record's page, which the crawl has read already. Each record
the crawl reads suggests its name to the form: without the rule every name is sent, with it
the form retires once its answers have repeated for a window, and declines the rest as its
answers to suggested names repeated too.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy import Selector
from scrapy.http import HtmlResponse

from hiddenweb.forms.explorer import FormExplorer
from hiddenweb.forms.extract import extract_forms
from hiddenweb.forms.lvs import LVS

RECORDS = 70
PER_PAGE = 5
FIRST = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo"]
LAST = ["Stone", "Marsh", "Reed", "Vale", "Hart", "Frost", "Lane"]


def author(i: int) -> str:
    """Records 0-7 come in pairs filed by one person (a search for them lists two records);
    every other record has its own author."""
    i = i // 2 if i < 8 else i
    return f"{FIRST[i % 10]} {LAST[i // 10]}"


class TrackerSite(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        type(self).log.append(self.path)
        form = ('<form action="/find" method="get"><label>Author <input type="text" '
                'name="author"></label><input type="submit" value="Search"></form>')
        if url.path == "/":
            body = f"<h1>Tracker</h1>{form}"
        elif url.path == "/find":
            who = parse_qs(url.query).get("author", [""])[0]
            hits = [i for i in range(RECORDS) if not who or author(i) == who]
            if len(hits) == 1:
                return self._send(b"", status=302, headers={"Location": f"/rec/{hits[0]}"})
            page = int(parse_qs(url.query).get("page", ["0"])[0])
            rows = "".join(f'<li><a href="/rec/{i}">Record {i}</a></li>'
                           for i in hits[page * PER_PAGE:(page + 1) * PER_PAGE])
            more = (f'<a href="/find?author={quote_plus(who)}&amp;page={page + 1}">next</a>'
                    if (page + 1) * PER_PAGE < len(hits) else "")
            body = f"<h1>Results</h1><ul>{rows}</ul>{more}" if hits else "<p>No results</p>"
        elif url.path.startswith("/rec/") and url.path[5:].isdigit() \
                and int(url.path[5:]) < RECORDS:
            i = int(url.path[5:])
            body = (f"<h1>Record {i}</h1><dl><dt>Author</dt><dd>{author(i)}</dd>"
                    f"<dt>Ref</dt><dd>R-{i:03d}</dd></dl><a href=\"/\">home</a>")
        else:
            return self._send(b"not found", status=404)
        self._send(f"<html><body>{body}</body></html>".encode())


def test_a_declining_form_drops_suggestions_queued_and_to_come():
    html = ('<form action="/find"><label>Author <input name="author"></label>'
            '<input type="submit" value="Go"></form>')
    form = extract_forms(Selector(text=html, base_url="http://h/"), "http://h/")[0]
    explorer = FormExplorer(form, LVS.from_dir(), 100, wave=2)
    assert explorer.suggest("author", "Ada Stone") == 1
    explorer.retired = True
    assert explorer.release() == [{"author": "Ada Stone"}]  # retired: suggestions still go
    assert explorer.suggest("author", "Bo Stone") == 1
    explorer.decline()
    assert explorer.offers == [] and explorer.declined == 1
    assert explorer.suggest("author", "Cy Stone") == 0 and explorer.declined == 2
    assert explorer.release() == [] and explorer.resume() == []


def test_family_is_the_signature_without_hidden_state():
    page = ('<form action="/issue"><input type="hidden" name="@sort" value="{sort}">'
            '<input name="q"><input type="submit" value="Search"></form>')
    a, b = (extract_forms(Selector(text=page.format(sort=s), base_url="http://h/"),
                          "http://h/")[0] for s in ("title", "-activity"))
    assert a.signature != b.signature and a.family == b.family == "GET /issue [q]"


def test_a_crawl_stops_sending_suggested_values_that_repeat(tmp_path: Path):
    sent, read = {}, {}
    for arm, mass in (("on", 0.05), ("off", 0)):
        with serve(TrackerSite) as url:
            run = run_crawl(tmp_path / arm, "-a", f"seed={url}/", settings={
                "HIDDENWEB_BROWSER": "never", "HIDDENWEB_STOP_MASS": mass,
                # the forms' own rule is tested: the crawl-level rule (hiddenweb.stale) may
                # close the crawl, at a point the machine's load decides, with submissions
                # queued (counted, never sent) or records unread
                "HIDDENWEB_CLOSE_STALE": 0})
            assert run.returncode == 0, run.stderr[-2000:]
            sent[arm] = sum(p.startswith("/find?") and "page=" not in p for p in TrackerSite.log)
            read[arm] = {p for p in TrackerSite.log if p.startswith("/rec/")}
            stats = run.stats
        assert stats["hiddenweb/forms/submissions"] == sent[arm]
        if arm == "on":
            assert stats["hiddenweb/forms/retired"] >= 1
            assert stats["hiddenweb/forms/declined"] >= 10
        else:
            assert "hiddenweb/forms/declined" not in stats
    assert read["on"] == read["off"] == {f"/rec/{i}" for i in range(RECORDS)}
    # off: the defaults, each of the 66 names, then blind rounds; on: retired after a window of
    # repeats (30 answers), the names still to come declined (measured: 41 against 125)
    assert sent["on"] + 20 <= sent["off"] and sent["off"] >= 66, sent


def test_a_family_whose_copies_retired_is_spent_for_new_copies_and_the_rest():
    """Two copies of a listing's form retire on answers that repeat: a third copy met later is
    sent once with its defaults (``family_spent``), a fourth still exploring retires at its next
    answer, and another form's family is not touched."""
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from hiddenweb.estimate import HiddenMass
    from hiddenweb.forms.config import FormsConfig
    from hiddenweb.forms.stopping import StoppingRule

    crawler = get_crawler(settings_dict={"HIDDENWEB_STOP_MASS": 0.05})
    crawler._apply_settings()
    rule, mass = StoppingRule(FormsConfig.from_settings(crawler.settings), crawler), \
        HiddenMass(crawler)
    page = ('<form action="/issue"><input type="hidden" name="@sort" value="{sort}">'
            '<input name="q"><input type="submit" value="Search"></form>')

    def copy(sort: str, action: str = "/issue") -> FormExplorer:
        html = page.format(sort=sort).replace("/issue", action)
        form = extract_forms(Selector(text=html, base_url="http://h/"), "http://h/")[0]
        return FormExplorer(form, LVS.from_dir(), 400)

    def answer(explorer: FormExplorer, n: int, new: bool) -> None:
        for _ in range(n):
            request = Request(f"{explorer.form.action}?n={mass.counts.total()}")
            response = HtmlResponse(request.url, body=b"<p>x</p>", request=request)
            if new:
                mass.capture(request, f"page-{len(mass.counts)}")
            explorer.new_pages += new
            rule.answered(explorer, mass, response, new)

    first, second, fourth = copy("title"), copy("-activity"), copy("id")
    other = copy("title", "/wiki")
    answer(fourth, 1, True)
    answer(other, 1, True)
    for explorer in (first, second):
        answer(explorer, 1, True)
        assert not rule.family_spent(first.form.family, mass.counts)
        answer(explorer, 30, False)
        assert explorer.retired
    assert rule.family_spent(first.form.family, mass.counts)
    assert not rule.family_spent(other.form.family, mass.counts)
    answer(fourth, 1, False)
    assert fourth.retired and crawler.stats.get_value("hiddenweb/forms/retired_with_family") == 1
    answer(other, 1, False)
    assert not other.retired


def test_copies_ended_as_inert_spend_their_family():
    """Copies of a table's filter box whose values all redirect to the unfiltered page are
    ended as inert (their values change nothing): two of them spend the family, as two
    retired copies do."""
    from scrapy.utils.test import get_crawler

    from hiddenweb.estimate import HiddenMass
    from hiddenweb.forms.config import FormsConfig
    from hiddenweb.forms.stopping import StoppingRule

    crawler = get_crawler(settings_dict={"HIDDENWEB_STOP_MASS": 0.05})
    rule, mass = StoppingRule(FormsConfig.from_settings(crawler.settings), crawler), \
        HiddenMass(crawler)
    page = ('<form action="/db/table"><input type="hidden" name="_facet" value="{facet}">'
            '<input name="_filter_value"><input type="submit" value="Apply"></form>')
    copies = [FormExplorer(extract_forms(Selector(text=page.format(facet=f),
                                                  base_url="http://h/"), "http://h/")[0],
                           LVS.from_dir(), 400) for f in ("year", "make", "origin")]
    family = copies[0].form.family
    for explorer in copies[:2]:
        for _ in range(15):
            rule.answered(explorer, mass, None, False)  # redirected to a page already read
        assert not explorer.retired  # never a new page: the stopping rule leaves it alone
        assert not rule.family_spent(family, mass.counts)
        rule.ended(explorer)  # FormExplorer.feedback ended it as inert
    assert rule.family_spent(family, mass.counts)


def test_a_submission_read_by_a_dead_worker_is_not_judged():
    """Shared mode: a taken-over form's submission that the dead worker had sent comes back as
    a duplicate; ``known`` frees its slot in the wave and judges nothing (no miss for the
    patience or the value counts), where ``feedback`` counts a miss."""
    html = ('<form action="/find"><label>Author <input name="author"></label>'
            '<input type="submit" value="Go"></form>')
    form = extract_forms(Selector(text=html, base_url="http://h/"), "http://h/")[0]
    known, judged = (FormExplorer(form, LVS.from_dir(), 100, wave=2) for _ in range(2))
    first = known.release()
    assert first == judged.release() and len(first) == 2 and known.in_flight == 2
    (field,) = first[0]
    after = known.known(first[0])
    assert len(after) == 1 and after[0] not in first  # the wave goes on
    assert known.since_new == 0 and known.in_flight == 2 and known.answers == 1
    assert known.stats[0][first[0][field]][1] == 0
    assert known.known(first[0]) == []  # answered once, as feedback judges once
    judged.feedback(first[0], False)
    assert judged.since_new == 1
