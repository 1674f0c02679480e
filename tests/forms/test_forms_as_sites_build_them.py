"""Forms as real sites build them (issue 23), end to end: ``scrapy crawl hwdla`` over plain HTTP
against a small site written for this test, served on 127.0.0.1 by a server that logs every
request. Each kind of form hides pages that only its right submission reaches; what the crawl
found is read from the server's own log:

* a search box whose field no LVS label matches (``ticker``), case-sensitive values listed in a
  table column on another page (a site's vocabulary, not the LVS);
* a form with no field to fill (a "Show all" button and a hidden field): sent with its defaults;
* a neutral POST form (sort options, "Apply"): sent;
* a post-back: choosing a ``zone`` posts the form back (``onchange="this.form.submit()"``) with a
  view-state token; only the reply offers that zone's ``depot`` options and a new token; zone +
  depot + the reply's token give the results;
* a control outside the ``<form>`` joined by ``form="id"``, whose value the server requires;
* a form inside a same-site ``<iframe>``;
* a second submit button with its own ``formaction``; a group of checkboxes of one name;
* an ``<isindex>`` (HTML 2's searchable index): its answer is ``/glossary?keywords``;
* a date box (``type=date``) that answers only a real date;
* unsafe forms beside them (a login, a delete, a POST that inserts a note) and an item's
  read-only view in a POST form with no control, that must not be sent.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from urllib.parse import parse_qs, unquote_plus, urlsplit

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve  # tests/ is on sys.path (rootdir)
from parsel import Selector

from hiddenweb.forms.extract import ISINDEX, extract_forms, keywords_url
from hiddenweb.forms.lvs import LVS, LVSLabel
from hiddenweb.forms.records import rejected
from hiddenweb.forms.values import field_domains, typed_values
from hiddenweb.forms.vocabulary import SiteVocabulary, placeholder_example

TICKERS = ["ALPHA", "BRAVO", "CHARLIE"]
ZONES = {"north": ["oslo", "bergen"], "south": ["rome", "naples", "bari"]}


def page(body: str, title: str = "Shop") -> bytes:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


VIEW_STATE = "dDwtMTY3MzQ4NjY5OTs7Pg"  # token-like: not part of the form's signature


def zone_form(zone: str = "", token: str = VIEW_STATE) -> str:
    zones = "".join(f'<option value="{z}"{" selected" if z == zone else ""}>{z}</option>'
                    for z in ZONES)
    depots = "".join(f'<option value="{d}">{d}</option>' for d in ZONES.get(zone, []))
    return ('<form method="post" action="/stock"><p>Stock by zone</p>'
            f'<input type="hidden" name="__STATE" value="{token}">'
            '<select name="zone" onchange="this.form.submit()">'
            f'<option value="">----------</option>{zones}</select>'
            f'<select name="depot"><option value="">Select…</option>{depots}</select>'
            '<input type="submit" value="Show stock"></form>')


HOME = page(
    '<a href="/tickers">Tickers</a> <a href="/quote">Quote</a> <a href="/catalog">Catalog</a>'
    ' <a href="/stock">Stock</a> <a href="/codes">Codes</a> <a href="/account">Account</a>'
    ' <a href="/library">Library</a> <a href="/glossary">Glossary</a>'
    ' <a href="/events">Events</a>')
TICKER_TABLE = page(
    "<table><tr><th>Ticker</th><th>Company</th></tr>"
    + "".join(f"<tr><td>{t}</td><td>{t.title()} Corporation</td></tr>" for t in TICKERS)
    + "</table>")
QUOTE = page('<form action="/quote/run"><label for="t">Ticker</label>'
             '<input id="t" name="ticker" required><button>Run query</button></form>')
CATALOG = page('<form action="/catalog/all"><input type="hidden" name="view" value="all">'
               '<button>Show all</button></form>'
               '<form method="post" action="/catalog/sorted"><select name="order">'
               '<option>name</option><option>date</option></select><button>Apply</button>'
               '</form><iframe src="/framed"></iframe>')
LIBRARY = page('<form action="/library/find"><label>Title <input name="title"></label>'
               '<button>Find</button><button formaction="/library/old">Find in the archive'
               '</button></form><form action="/issues"><label><input type="checkbox" '
               'name="status" value="open" checked>open</label><label><input type="checkbox" '
               'name="status" value="closed">closed</label><button>Filter</button></form>')
TERMS = ["bracken", "osmunda"]
GLOSSARY = page(f"<h1>Glossary of ferns</h1><p>It explains {' and '.join(TERMS)}.</p>"
                '<isindex prompt="Look up a term">')
EVENTS = page('<form action="/events/on"><label>Day <input type="date" name="day" required>'
              '</label><button>Show</button></form>')
FRAMED = page('<form action="/framed/go"><select name="shelf"><option>top</option>'
              '<option>low</option></select><button>Go</button></form>')
CODES = page('<form id="lookup" action="/codes/find"><button>Look up</button></form>'
             '<p>Region code: <input form="lookup" name="region" value="R7"></p>')
ACCOUNT = page('<form method="post" action="/login"><input name="user">'
               '<input type="password" name="pw"><button>Sign in</button></form>'
               '<form method="post" action="/account/delete"><input type="hidden" name="id" '
               'value="1"><button>Delete my account</button></form>'
               '<form method="post" action="/notes/add"><pre>insert into notes (note) values '
               '(:note)</pre><label for="n">note</label><input id="n" name="note">'
               '<input type="submit" value="Run SQL"></form>'
               '<form method="post" action="/item7"><table><tr><th>Keywords</th><td>x</td>'
               '</tr></table></form>')


class Site(SiteHandler):
    log: list[tuple[str, str, dict]] = []

    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.log.append(("GET", url.path, query))
        path = url.path
        if path == "/robots.txt":
            return self._send(b"", status=404)
        if path == "/quote/run":
            ticker = query.get("ticker", "")
            if ticker in TICKERS:  # case-sensitive, as SQL's = is
                return self._send(page(f'<a href="/rec/quote-{ticker}">{ticker} prices</a>'))
            return self._send(page("No results"))
        if path == "/catalog/all" and query.get("view") == "all":
            return self._send(page('<a href="/rec/catalog-all">everything</a>'))
        if path == "/library/old":  # only the second button's formaction answers
            return self._send(page('<a href="/rec/library-old">older titles</a>'))
        if path == "/issues":
            return self._send(page("".join(f'<a href="/rec/issues-{v}">{v}</a>'
                                           for v in parse_qs(url.query).get("status", []))))
        if path == "/framed/go":
            return self._send(page(f'<a href="/rec/framed-{query.get("shelf")}">shelf</a>'))
        if path == "/codes/find" and query.get("region") == "R7":
            return self._send(page('<a href="/rec/codes-R7">region R7</a>'))
        if path == "/glossary" and url.query and "=" not in url.query:  # <isindex>'s keywords
            term = unquote_plus(url.query)
            if term in TERMS:
                return self._send(page(f'<a href="/rec/glossary-{term}">{term}</a>'))
            return self._send(page("No such term"))
        if path == "/events/on" and re.fullmatch(r"\d{4}-\d\d-\d\d", query.get("day", "")):
            return self._send(page('<a href="/rec/events-dated">that day</a>'))
        if path.startswith("/rec/"):
            return self._send(page(f"<h1>{path}</h1>", title=path))
        pages = {"/": HOME, "/tickers": TICKER_TABLE, "/quote": QUOTE, "/catalog": CATALOG,
                 "/stock": page(zone_form()), "/codes": CODES, "/account": ACCOUNT,
                 "/framed": FRAMED, "/library": LIBRARY, "/glossary": GLOSSARY, "/events": EVENTS}
        if path in pages:
            return self._send(pages[path])
        return self._send(page("Not found"), status=404)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in
                parse_qs(self.rfile.read(length).decode(), keep_blank_values=True).items()}
        path = urlsplit(self.path).path
        self.log.append(("POST", path, form))
        if path == "/catalog/sorted":
            return self._send(page(f'<a href="/rec/sorted-{form.get("order")}">sorted</a>'))
        if path == "/stock":
            zone, depot, token = form.get("zone", ""), form.get("depot", ""), form.get("__STATE")
            if zone in ZONES and depot in ZONES[zone] and token == f"{VIEW_STATE}-{zone}":
                return self._send(page(f'<a href="/rec/stock-{depot}">{depot} stock</a>'))
            if zone in ZONES:  # the post-back: the zone's depots and a new view state
                return self._send(page(zone_form(zone, f"{VIEW_STATE}-{zone}")))
            return self._send(page(zone_form()))
        return self._send(page("Gone"), status=410)  # login, delete: never to be reached


@pytest.fixture
def site():
    with serve(Site) as url:
        yield url


def test_every_kind_of_safe_form_is_sent_and_its_hidden_pages_reached(site, tmp_path: Path):
    run = run_crawl(tmp_path, "-a", f"seed={site}/",
                    settings={"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO"})
    assert run.returncode == 0, run.stderr[-3000:]
    reached = {path for _, path, _ in Site.log if path.startswith("/rec/")}
    expected = ({f"/rec/quote-{t}" for t in TICKERS} | {"/rec/catalog-all", "/rec/codes-R7"}
                | {f"/rec/stock-{d}" for depots in ZONES.values() for d in depots}
                | {"/rec/sorted-name", "/rec/framed-top", "/rec/framed-low"}
                | {"/rec/library-old", "/rec/issues-open", "/rec/issues-closed"}
                | {f"/rec/glossary-{t}" for t in TERMS} | {"/rec/events-dated"})
    assert expected <= reached, sorted(expected - reached)
    # a login, a delete, a POST that writes, an item's read-only view with no control
    assert not [p for _, p, _ in Site.log
                if p in ("/login", "/account/delete", "/notes/add", "/item7")]
    stats = run.stats or {}
    assert stats.get("hiddenweb/forms/post_backs") == len(ZONES)
    assert stats.get("hiddenweb/forms/defaults_only") == 1  # "Show all": nothing to vary
    # the first submission of every form sent was the page's own: the search box empty
    assert ("GET", "/quote/run", {"ticker": ""}) in Site.log


def test_extraction_reads_what_a_browser_would_send():
    html = ('<form id="f" action="/x"><select name="s"><option>a</option><option>b</option>'
            '</select><input type="radio" name="r" value="1"><input type="radio" name="r" '
            'value="2" checked><input type="checkbox" name="c" value="y" checked>'
            '<input name="q" list="dl" placeholder="e.g. Springfield"></form>'
            '<datalist id="dl"><option value="Boston"><option value="Austin"></datalist>'
            '<input form="f" name="out" value="7"><select name="z" onchange="submit()">'
            '<option>1</option></select>')
    form = extract_forms(Selector(text=html), "http://h/")[0]
    fields = {f.name: f for f in form.fields}
    assert fields["s"].default == "a"  # no option selected: the first
    assert fields["r"].default == "2" and fields["c"].default == "y"  # checked
    assert fields["q"].options == ["Boston", "Austin"]
    assert fields["out"].outside and fields["out"].default == "7"
    assert "z" not in fields  # outside, and not joined to the form
    group = extract_forms(Selector(text=LIBRARY.decode()), "http://h/")[1]
    status = group.fields[0]
    assert status.options == ["open", "closed"] and status.default == "open"
    assert dict(field_domains(group, LVS([]))[0])["status"] == ["open", None, "closed"]
    assert placeholder_example(fields["q"].descriptors[3]) == "Springfield"
    assert placeholder_example("Search…") is None
    domains, labels, unfillable = field_domains(form, LVS([]), SiteVocabulary())
    values = dict(domains)
    assert values["c"] == ["y", None]  # checked: its default state first
    assert values["q"][:4] == ["", "Springfield", "Boston", "Austin"] and not unfillable
    assert labels["q"].startswith("site:")


def test_a_date_box_gets_dates_in_its_own_format():
    html = ('<form action="/x"><input type="date" name="d" value="2020-02-02">'
            '<input type="month" name="m"><input type="time" name="t"><button>Go</button></form>')
    form = extract_forms(Selector(text=html), "http://h/")[0]
    values = dict(field_domains(form, LVS([]))[0])
    assert values["d"][0] == "2020-02-02" and re.fullmatch(r"\d{4}-\d\d-\d\d", values["d"][1])
    assert values["m"][0] == "" and re.fullmatch(r"\d{4}-\d\d", values["m"][1])
    assert values["t"] == ["", "12:00", "00:00"]
    assert typed_values("week", date(2026, 11, 26)) == ["2026-W48", "2026-W01", "2025-W01"]
    assert typed_values("datetime-local", date(2026, 1, 1)) == ["2026-01-01T12:00",
                                                                 "2025-01-01T12:00"]


def test_an_isindex_is_a_one_box_get_form_sent_as_keywords():
    html = ('<p>Ferns</p><isindex prompt="Look up a term"><isindex action="/other">'
            '<form action="/f"><isindex><input name="q"></form>')
    forms = extract_forms(Selector(text=html), "http://h/glossary?page=2#top")
    assert [f.fields[0].name for f in forms] == ["q", ISINDEX, ISINDEX]  # none inside a form
    first, second = forms[1], forms[2]
    assert (first.method, first.action) == ("GET", "http://h/glossary")
    assert first.text == "Look up a term"
    assert second.action == "http://h/other" and second.text.startswith("This is a searchable")
    assert first.signature != second.signature
    assert keywords_url(first, "http://h/glossary?isindex=royal+fern") == \
        "http://h/glossary?royal+fern"
    assert keywords_url(forms[0], "http://h/f?q=x") == "http://h/f?q=x"


def test_site_vocabulary_keeps_the_written_form_and_reads_table_columns():
    vocabulary = SiteVocabulary()
    new = vocabulary.add_page(Selector(text=TICKER_TABLE.decode()), "ALPHA BRAVO prices")
    assert ("ticker", "ALPHA") in new and ("company", "Bravo Corporation") in new
    assert vocabulary.values_for({"ticker"}) == TICKERS
    assert vocabulary.written("alpha") == "ALPHA"
    lvs = LVS([LVSLabel("keyword", ["keyword"], ["x"])])
    form = extract_forms(Selector(text=QUOTE.decode()), "http://h/")[0]
    domains, labels, unfillable = field_domains(form, lvs, vocabulary)
    assert dict(domains)["ticker"][:4] == ["", *TICKERS] and not unfillable


def test_a_text_box_the_page_fills_with_a_number_takes_numbers_only():
    """"Max items per page" is a text input whose page gives it 100: the site's labelled
    values that are words ("Maximum allowed size", from a wiki's table) and its frequent words
    are not offered to it, numbers are; a text box with a word keeps the site's words."""
    vocabulary = SiteVocabulary()
    table = ("<table><tr><th>Max</th><th>Note</th></tr><tr><td>Maximum allowed size</td>"
             "<td>other</td></tr><tr><td>250</td><td>x</td></tr></table>")
    for _ in range(3):
        vocabulary.add_page(Selector(text=table), "Maximum allowed size other tickets report")
    lvs = LVS([LVSLabel("keyword", ["keyword"], ["x"])])
    html = ('<form action="/report/4"><label>Max items per page <input type="text" name="max" '
            'value="{v}"></label><input type="submit" value="Update"></form>')
    number = extract_forms(Selector(text=html.format(v="100")), "http://h/")[0]
    domains, labels, _ = field_domains(number, lvs, vocabulary)
    assert dict(domains)["max"] == ["100", "250", "1", "10"]
    assert not lvs.get(labels["max"]).open  # no words learnt from its answers either
    word = extract_forms(Selector(text=html.format(v="open").replace("max", "state")
                                  .replace("Max items per page", "Status")), "http://h/")[0]
    lvs = LVS([LVSLabel("keyword", ["keyword"], ["x"])])
    domains, labels, _ = field_domains(word, lvs, vocabulary)
    assert "tickets" in dict(domains)["state"] and lvs.get(labels["state"]).open


def test_a_redirect_back_to_the_form_is_a_refusal_not_a_result():
    from scrapy.http import HtmlResponse

    back = HtmlResponse("http://h/quote#top", body=QUOTE)
    assert rejected({"redirect_urls": ["http://h/quote/run?ticker="]}, back, "http://h/quote")
    assert not rejected({}, back, "http://h/quote")  # the form's own page, not redirected to
    elsewhere = HtmlResponse("http://h/quote/list", body=QUOTE)
    assert not rejected({"redirect_urls": ["http://h/quote/run"]}, elsewhere, "http://h/quote")


def test_a_form_no_person_could_submit_is_not_submittable():
    from hiddenweb.forms.extract import submittable

    def form(html: str):
        return extract_forms(Selector(text=html), "http://h/")[0]

    # an item's read-only view, whose page has a submit-once script: not ours to submit
    assert not submittable(form('<form method="POST" action="issue7" onsubmit="return once()">'
                                '<table><tr><th>Keywords</th><td>x</td></tr></table></form>'))
    assert submittable(form('<form action="/s"><input name="q"></form>'))  # Enter submits it
    assert submittable(form('<form action="/s"><button>Show all</button></form>'))
    assert submittable(form('<form method="post" action="/s"><select name="a" '
                            'onchange="__doPostBack(\'a\',\'\')"><option>1</option></select>'
                            '</form>'))  # a post-back
