"""Which quoted strings of a script are URLs to guess (:func:`hiddenweb.urlsources.script_urls`):
paths that a script could request, not the pieces of regex literals or routers' patterns that
minified libraries are full of (a Docsify crawl asked for ``/g,`` and ``/:dels``); and the URLs
click code, SVG links, embedded documents, citations and a page's JSON data blocks name."""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy.http import HtmlResponse

from hiddenweb.safety import judge_link
from hiddenweb.urlsources import reply_urls, script_urls


def test_paths_a_script_names_are_guessed():
    script = ('location.href = "/script-page"; var w = \'/wiki/Special:Search\';'
              ' load("../up/one.html"); var abs = "http://127.0.0.1:8080/api/items";')
    assert script_urls(script) == ["/script-page", "/wiki/Special:Search", "../up/one.html",
                                   "http://127.0.0.1:8080/api/items"]


def test_a_relative_url_given_to_a_navigation_sink_is_a_url():
    """Without a leading ``/`` a string is a URL only where a script navigates or loads it;
    ``xhr.open("GET", …)``'s method, a prefix and ``String.replace`` are not."""
    script = ("location.href = 'view.php?id=3'; window.open('help.html', 'w');"
              " xhr.open('GET', 'api/x'); a.href = 'list?page=' + n; s.replace('a', 'b');"
              " document.forms[0].action = 'next'; location.replace(\"done.html\");"
              " var word = 'plain'; el.href = 'javascript:void(0)'; location.href = '#top';")
    assert script_urls(script) == ["view.php?id=3", "help.html", "next", "done.html"]


def test_quotes_inside_a_regex_literal_are_no_string():
    minified = ('a.replace(/"/g,"&quot;")+\'"\';c.replace(/`/g,"@QM@");'
                'Yn(/\'/g,"&#39;");var p = "/real-path";')
    assert script_urls(minified) == ["/real-path"]


def test_a_routers_pattern_is_no_url():
    script = ('router.get("/users/:id", show); x["/".concat(n,"/:dels")] = 1;'
              ' route("/posts/:slug/edit"); var ok = "/posts/latest";')
    assert script_urls(script) == ["/posts/latest"]


def handler_found(body: str) -> list[tuple[str, str, str, dict[str, str]]]:
    page = HtmlResponse("http://127.0.0.1:8080/list", body=f"<html><body>{body}</body></html>",
                        encoding="utf-8")
    return [(urlsplit(f.url).path, f.source, f.label, dict(f.marks))
            for f in reply_urls(page, "127.0.0.1")]


def test_click_code_names_urls_as_a_script_does():
    """``on*`` attributes and ``javascript:`` URLs are read as script: the URLs a click opens,
    labelled with the element's text; a prefix, a write and another host are not, nor a
    form's ``javascript:`` action or ``onsubmit`` (its submission, judged as a form's)."""
    found = handler_found(
        '<tr onclick="document.location = \'/rows/7\'"><td>Row</td><td>seven</td></tr>'
        '<a href="javascript:openWindow(\'../popup.html\', 300)">Show popup</a>'
        '<form action="javascript:go(\'/search\')" onsubmit="go(\'/find\')">'
        '<input name=q></form>'
        '<div onmouseover="load(\'/item?id=\' + id)">prefix</div>'
        '<span onclick="$.post(\'/vote\', {up: 1})">Vote</span>'
        '<img onclick="location=\'http://example.org/elsewhere\'" alt="off">')
    assert found == [("/rows/7", "handler", "Row seven", {}),
                     ("/popup.html", "handler", "Show popup", {})]


def test_click_code_that_asks_first_is_marked_and_refused():
    found = handler_found('<button onclick="if (confirm(\'Remove it?\')) location.href ='
                          ' \'/items/3/remove\'">Remove</button>'
                          '<a href="#" onclick="return confirm() && go(\'/run\')">Run</a>')
    assert found == [("/items/3/remove", "handler", "Remove", {"data-confirm": "Remove it?"}),
                     ("/run", "handler", "Run", {"data-confirm": "confirm"})]
    for path, _, label, marks in found:
        verdict = judge_link(f"http://127.0.0.1:8080{path}", label, marks)
        assert not verdict.allowed and verdict.reason == "destructive"


def test_svg_links_embedded_documents_citations_and_data_blocks():
    found = handler_found(
        '<svg><a xlink:href="/chart/2024"><text>2024</text></a></svg>'
        '<object data="/viewer/doc"></object><embed src="/plugin/page">'
        '<object data="/movie.swf"></object>'
        '<q cite="/sources/4">q</q><img src="/a.png" longdesc="/describe/a">'
        '<script type="application/ld+json">{"@type": "Article", "url": "/story/9",'
        ' "author": {"url": "http://127.0.0.1:9/people/ann"}, "name": "/not a path"}</script>'
        '<script type="importmap">{"imports": {"ui": "/static/ui.mjs"}}</script>'
        '<script type="text/template"><a href="/tpl">x</a> "/template-string"</script>')
    assert [(p, s) for p, s, *_ in found] == [
        ("/viewer/doc", "embed"), ("/plugin/page", "embed"), ("/movie.swf", "embed"),
        ("/sources/4", "cite"), ("/describe/a", "cite"), ("/chart/2024", "svg"),
        ("/story/9", "json"), ("/people/ann", "json"), ("/static/ui.mjs", "json")]
    assert found[5][2] == "2024"  # a Flash movie is read for its URLs (source swf)
