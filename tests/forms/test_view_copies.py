"""A copy of an explored form that only asks again for its own page's view is not submitted
(hiddenweb/forms/crawl.py ``FormCrawler._view_copy``, lab knob ``form_view_copies``).

End to end: `scrapy crawl hwdla` against a ticket listing the test serves on 127.0.0.1. The
listing links one sort page per column and direction (``/list?sort=owner&asc=1``), and each
page carries the listing's "items per page" form with the sort in hidden fields, as a tracker's
report does, and says how it is sorted.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy import Selector

from hiddenweb.forms.extract import extract_forms

TICKETS = 12
COLUMNS = ["id", "summary", "owner", "status", "priority", "type", "component", "milestone"]
WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "amber", "frost", "cedar",
         "delta", "ember", "grove"]  # each ticket's summary


def form_on(html: str, url: str):
    return extract_forms(Selector(text=html, base_url=url), url)[0]


def test_a_copy_echoes_its_page_only_when_its_hidden_state_is_the_pages_query():
    html = ('<form action="{action}" method="{method}"><input name="max" value="100">'
            '<input type="hidden" name="sort" value="{sort}">'
            '<input type="hidden" name="__token" value="d4b36c716a3a8224b055b6f9">'
            '<input type="submit" value="Update"></form>')

    def echoes(page: str, sort: str = "owner", action: str = "/report/4",
               method: str = "get") -> bool:
        form = form_on(html.format(action=action, method=method, sort=sort), page)
        return form.echoes_page(page)

    assert echoes("http://h:8000/report/4?sort=owner")
    assert echoes("http://h:8000/report/4?sort=owner&asc=1&max=100")  # more view state
    assert not echoes("http://h:8000/report/4")  # the listing itself: its form is explored
    assert not echoes("http://h:8000/report/4?sort=status")  # state the page did not ask for
    assert not echoes("http://h:8000/report/4?sort=owner", action="/report/5")  # another page
    assert not echoes("http://h:8000/report/4?sort=owner", action="http://h:9000/report/4")
    assert not echoes("http://h:8000/report/4?sort=owner", method="post")
    assert echoes("http://h:8000/report/4?sort=", sort="")  # an empty sort is asked for too
    plain = form_on('<form action="/s"><input name="q"><input type="submit"></form>',
                    "http://h/s?q=x")
    assert not plain.echoes_page("http://h/s?q=x")  # no hidden state: one signature anyway


class ListingSite(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        type(self).log.append(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if url.path == "/":
            body = '<h1>Tracker</h1><a href="/list">All tickets</a>'
        elif url.path == "/list":
            if not query.get("max", "100").isdigit():
                return self._send(b"max must be a number", status=400)
            sort, asc = query.get("sort", ""), query.get("asc", "")
            links = "".join(f'<a href="/list?{urlencode({"sort": c, "asc": a})}">{c}</a> '
                            for c in COLUMNS for a in ("1", "0"))
            order = sorted(range(TICKETS), reverse=asc == "0") if sort else range(TICKETS)
            rows = "".join(f'<li><a href="/ticket/{i}">Ticket {i}</a></li>' for i in order)
            hidden = "".join(f'<input type="hidden" name="{k}" value="{v}">'
                             for k, v in (("sort", sort), ("asc", asc)) if k in query)
            caption = f"<p>Sorted by {sort}, {'ascending' if asc == '1' else 'descending'}</p>" \
                if sort else ""  # each sort page shows something of its own
            body = (f'<h1>Tickets</h1><p>{links}</p>{caption}<ul>{rows}</ul>'
                    f'<form action="/list" method="get"><label>Max items per page '
                    f'<input type="text" name="max" value="100"></label>{hidden}'
                    f'<input type="submit" value="Update"></form>')
        elif url.path.startswith("/ticket/") and url.path[8:].isdigit():
            i = int(url.path[8:])
            body = f"<h1>Ticket {i}</h1><p>Summary: {WORDS[i]} trouble number {i}</p>"
        else:
            return self._send(b"not found", status=404)
        self._send(f"<html><body>{body}</body></html>".encode())


def test_a_listings_sort_pages_do_not_each_bring_a_form_to_submit(tmp_path: Path):
    """With the knob on, the listing's form is explored from the listing itself and none of
    its 16 sort pages' copies is submitted; off, each copy is (16 first submissions at
    least). Both arms read every ticket."""
    sent, stats = {}, {}
    for arm, on in (("on", True), ("off", False)):
        with serve(ListingSite) as url:
            run = run_crawl(tmp_path / arm, "-a", f"seed={url}/", settings={
                "HIDDENWEB_BROWSER": "never", "HIDDENWEB_CLOSE_STALE": 0,
                "HIDDENWEB_LAB": {"form_view_copies": on}})
            assert run.returncode == 0, run.stderr[-2000:]
            log = list(ListingSite.log)
        stats[arm] = run.stats
        sent[arm] = [p for p in log if p.startswith("/list?") and "max=" in p]
        assert {p.split("?")[0] for p in log if p.startswith("/ticket/")} \
            == {f"/ticket/{i}" for i in range(TICKETS)}, arm
    copies_sent = [p for p in sent["on"] if "sort=" in p]
    assert copies_sent == [], copies_sent
    assert stats["on"]["hiddenweb/forms/view_copies"] == len(COLUMNS) * 2
    assert len({p for p in sent["off"] if "sort=" in p}) >= len(COLUMNS) * 2
    assert "hiddenweb/forms/view_copies" not in stats["off"]
    assert len(sent["on"]) + len(COLUMNS) * 2 <= len(sent["off"]), (sent["on"], sent["off"])
