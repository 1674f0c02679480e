import pytest

from hiddenweb.pagetext import template_key
from hiddenweb.spiders.hwdla import parse_seed


@pytest.mark.parametrize("seed", [None, "", "127.0.0.1:8000", "ftp://h/", "http://", "http:///x"])
def test_bad_seeds_are_refused_with_an_example(seed):
    with pytest.raises(ValueError, match="seed"):
        parse_seed(seed)


def test_malformed_port():
    with pytest.raises(ValueError, match="port"):
        parse_seed("http://127.0.0.1:99999999/")


def test_good_seed_kept():
    assert parse_seed(" http://127.0.0.1:8000/ ") == "http://127.0.0.1:8000/"


def test_template_key_folds_numbers_and_query_order():
    assert template_key("http://h:1/calendar?month=2026-11") == "h/calendar"
    assert template_key("http://h/c/3/r/17?b=1&a=2") == template_key("http://h/c/9/r/2?a=5")


def test_shape_ignores_numbers_order_navigation_and_echoed_query():
    from parsel import Selector

    from hiddenweb.pagetext import shape_fingerprint

    def page(h1, items, nav):
        body = f"<h1>{h1}</h1><ul>{''.join(f'<li>{i}</li>' for i in items)}</ul><a>{nav}</a>"
        return Selector(text=f"<html><body>{body}</body></html>")

    a = shape_fingerprint(page("Catalog (colour=red)", ["anvil", "widget"], "x"),
                          "http://h/catalog?colour=red")
    b = shape_fingerprint(page("Catalog (colour=blue)", ["widget", "anvil"], "y 2"),
                          "http://h/catalog?colour=blue&sort=price")
    c = shape_fingerprint(page("Catalog (colour=blue)", ["widget"], "y"),
                          "http://h/catalog?colour=blue")
    assert a == b != c
