import pytest

from hiddenweb.dla.kinds import url_template
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


def test_template_key_folds_opaque_keys_not_words():
    """A record keyed by a base64 or hex string is one template with its siblings (sqlite-web's
    rows: each was a template of its own, so no template ever had a second page)."""
    rows = ["http://h/t/row/WyJ3eC0wMDAxIl0=/", "http://h/t/row/WyJpcmlzLTAwMDEiXQ%3D%3D/",
            "http://h/t/row/3f2a9c1e8b7d6a5f4e3d2c1b/",
            "http://h/t/row/123e4567-e89b-12d3-a456-426614174000/"]
    assert {template_key(u) for u in rows} == {"h/t/row/{id}/"}
    assert url_template(rows[0]) == url_template(rows[1]) == "h/t/row/{id}/"
    for word in ("WikiStart", "WikiStartPage", "introduction", "doku.php"):
        assert template_key(f"http://h/wiki/{word}") == f"h/wiki/{word}"
    assert template_key("http://h/blog/my-first-post-2024") == "h/blog/my-first-post-{n}"


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


def test_pages_differing_only_in_a_handler_or_a_frame_are_different_pages():
    from parsel import Selector

    from hiddenweb.pagetext import page_fingerprint

    def fp(body: str) -> str:
        return page_fingerprint("", Selector(text=f"<html><body>{body}</body></html>"))

    button = '<input type="button" value="click me" onclick="{}">'
    assert fp(button.format("showLink()")) != fp(button.format("doxhr()"))
    assert fp('<iframe src="/a"></iframe>') != fp('<iframe src="/b"></iframe>')
    assert fp(button.format("go()")) == fp(button.format("go()"))


def test_shape_tells_result_pages_apart_but_not_calendar_months():
    """Links that leave the template carry the records of a result list (the trap guard must
    not take its pages for a trap); links within it are navigation (a calendar's months)."""
    from parsel import Selector

    from hiddenweb.pagetext import shape_fingerprint

    def results(page, titles):
        links = "".join(f'<li><a href="/c/1/item/{i}">{t}</a></li>' for i, t in enumerate(titles))
        nav = f'<a href="/c/1/filter?cat=b&page={page + 1}">{page + 1}</a><a href="/">Home</a>'
        html = f"<html><body><h1>Results for b</h1><ul>{links}</ul>{nav}</body></html>"
        return shape_fingerprint(Selector(text=html), f"http://h/c/1/filter?cat=b&page={page}")

    assert results(1, ["Crystal Telescope"]) != results(2, ["Physics Satellite"])

    def month(m):
        nav = (f'<a href="/calendar?month=2024-{m - 1:02d}">Previous month</a>'
               f'<a href="/calendar?month=2024-{m + 1:02d}">Next month</a><a href="/">Home</a>')
        html = f"<html><body><h1>Events in 2024-{m:02d}</h1><p>No events.</p>{nav}</body></html>"
        return shape_fingerprint(Selector(text=html), f"http://h/calendar?month=2024-{m:02d}")

    assert month(3) == month(4) == month(5)


@pytest.mark.parametrize(("cls", "body", "ctype", "follows"), [
    ("JsonResponse", b'{"next": "/page/2", "items": [1, 2]}', b"application/json",
     ["http://127.0.0.1:1/page/2"]),
    ("TextResponse", b"just text, no markup", b"text/plain", []),
    ("Response", b"\x89PNG\r\n\x1a\n\x00\x00", b"image/png", []),
])
def test_a_non_html_reply_is_an_item_and_never_breaks_the_parse(cls, body, ctype, follows):
    """A JSON, plain-text or binary reply gives its item and the same-site URLs it names (a JSON
    value), nothing else; the parse runs to its end (a JSON reply once raised AttributeError in
    the link extractor, issue 30)."""
    import scrapy.http
    from scrapy.utils.test import get_crawler

    from hiddenweb.spiders.hwdla import HwdlaSpider

    crawler = get_crawler(HwdlaSpider, {"HIDDENWEB_BROWSER": "never"})  # JSON values: default
    spider = HwdlaSpider.from_crawler(crawler, seed="http://127.0.0.1:1/")
    crawler.stats.open_spider()
    url = "http://127.0.0.1:1/data"
    request = scrapy.Request(url, meta={"hiddenweb_form_only": False})
    kwargs = {"encoding": "utf-8"} if cls != "Response" else {}
    response = getattr(scrapy.http, cls)(url, body=body, request=request,
                                         headers={"Content-Type": ctype}, **kwargs)
    out = list(spider.parse(response))
    assert [type(o).__name__ for o in out] == ["PageItem"] + ["Request"] * len(follows)
    assert out[0]["content_type"] == ctype.decode() and out[0]["status"] == 200
    assert [o.url for o in out[1:]] == follows
    assert all(o.meta["hiddenweb_source"] == "json" for o in out[1:])


def test_links_served_last_on_a_form_answer_hold_no_blind_values():
    """A link on a form's answer is one its form's blind values wait for (``form_answers_first``),
    but not one served last (a JSON value, a guessed source, rel=nofollow): it would hold them
    until the crawl's end (with every guessed source on, Datasette's fifth stock symbol waited
    so)."""
    import scrapy.http
    from scrapy.utils.test import get_crawler

    from hiddenweb.spiders.hwdla import HwdlaSpider

    crawler = get_crawler(HwdlaSpider, {"HIDDENWEB_BROWSER": "never"})
    spider = HwdlaSpider.from_crawler(crawler, seed="http://127.0.0.1:1/")
    url = "http://127.0.0.1:1/find.json?q=a"
    request = scrapy.Request(url, meta={"hiddenweb_form_only": True,
                                        "hiddenweb_origin": "GET 127.0.0.1/find"})
    response = scrapy.http.TextResponse(url, body=b"{}", request=request, encoding="utf-8")
    content = spider.follow(response, "http://127.0.0.1:1/record/1", "one", "link")
    last = spider.follow(response, "http://127.0.0.1:1/record/2", "", "json",
                         nofollow=True, guess=True)
    assert "hiddenweb_reading" in content.meta
    assert "hiddenweb_reading" not in last.meta
    assert last.meta["hiddenweb_origin"] == content.meta["hiddenweb_origin"]
    assert last.meta["hiddenweb_action"]["nofollow"] and last.meta["hiddenweb_form_only"]
