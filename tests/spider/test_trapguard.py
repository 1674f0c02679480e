"""The template trap guard (hiddenweb.trapguard): which templates it stops following."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from hiddenweb.trapguard import TemplateTrapGuard

BASE = "http://127.0.0.1:8000/weather/content/"


def _table(query: str, rows: range) -> HtmlResponse:
    """A page of a table of numbers: its rows differ only in digits, each links to its row."""
    cells = "".join(f'<tr><td><a href="/weather/row/{r}/">{r}</a></td><td>{r * 7 % 31}.5</td>'
                    f"<td>rain</td></tr>" for r in rows)
    body = (f"<html><body><h1>weather</h1><table><tr><th>id</th><th>temp</th><th>kind</th></tr>"
            f'{cells}</table><a href="{BASE}?page=2">next</a><a href="/">home</a></body></html>')
    url = BASE + query
    return HtmlResponse(url, body=body.encode(), encoding="utf-8", request=Request(url))


def _guard() -> TemplateTrapGuard:
    crawler = get_crawler(settings_dict={"HIDDENWEB_TEMPLATE_BUDGET": 10})
    return TemplateTrapGuard.from_crawler(crawler)


def _read(guard: TemplateTrapGuard, response: HtmlResponse) -> None:
    guard.process_response(response.request, response)


def test_a_numeric_table_whose_pages_list_new_rows_is_not_a_trap():
    """Every page of the table has the same words once digits are left out (one shape), but
    lists rows no page listed before: all 40 pages are followed."""
    guard = _guard()
    for page in range(1, 41):
        _read(guard, _table(f"?page={page}", range(page * 50, page * 50 + 50)))
    assert not guard.trapped
    guard.process_request(Request(BASE + "?page=41"))  # not dropped


def test_sort_orders_of_rows_already_listed_are_a_trap():
    """The same 50 rows in 12 orders (and the words the same): nothing new after the first
    page, and the template is dropped once its budget of pages is read."""
    guard = _guard()
    _read(guard, _table("", range(50)))
    for column in range(1, 12):
        _read(guard, _table(f"?ordering={column}", range(49, -1, -1)))
    assert guard.trapped == {"127.0.0.1/weather/content/"}
    with pytest.raises(IgnoreRequest):
        guard.process_request(Request(BASE + "?ordering=-1"))


def test_a_trapped_template_still_takes_the_links_other_templates_hold():
    """Sort orders of one table are a trap (each page links the others); a link into that
    template from a page of another (the home page's "by year" link, an action found on a
    menu page) is let in, while the table's own links to itself are dropped."""
    guard = _guard()
    _read(guard, _table("", range(50)))
    for column in range(1, 12):
        _read(guard, _table(f"?ordering={column}", range(49, -1, -1)))
    assert guard.trapped == {"127.0.0.1/weather/content/"}
    from_home = Request(BASE + "?ordering=year", headers={"Referer": "http://127.0.0.1:8000/"})
    guard.process_request(from_home)  # not dropped
    found_on_menu = Request(BASE + "?ordering=day",
                            meta={"hiddenweb_action": {"page": "http://127.0.0.1:8000/menu"}})
    guard.process_request(found_on_menu)  # not dropped
    with pytest.raises(IgnoreRequest):
        guard.process_request(Request(BASE + "?ordering=-2", headers={"Referer": BASE + "?x=1"}))
    with pytest.raises(IgnoreRequest):
        guard.process_request(Request(BASE + "?ordering=-3"))  # found nowhere known
    assert guard.stats.get_value("hiddenweb/trapguard/let_in") == 2
