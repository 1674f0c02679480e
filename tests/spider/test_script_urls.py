"""Which quoted strings of a script are URLs to guess (:func:`hiddenweb.urlsources.script_urls`):
paths that a script could request, not the pieces of regex literals or routers' patterns that
minified libraries are full of (a Docsify crawl asked for ``/g,`` and ``/:dels``)."""

from __future__ import annotations

from hiddenweb.urlsources import script_urls


def test_paths_a_script_names_are_guessed():
    script = ('location.href = "/script-page"; var w = \'/wiki/Special:Search\';'
              ' load("../up/one.html"); var abs = "http://127.0.0.1:8080/api/items";')
    assert script_urls(script) == ["/script-page", "/wiki/Special:Search", "../up/one.html",
                                   "http://127.0.0.1:8080/api/items"]


def test_quotes_inside_a_regex_literal_are_no_string():
    minified = ('a.replace(/"/g,"&quot;")+\'"\';c.replace(/`/g,"@QM@");'
                'Yn(/\'/g,"&#39;");var p = "/real-path";')
    assert script_urls(minified) == ["/real-path"]


def test_a_routers_pattern_is_no_url():
    script = ('router.get("/users/:id", show); x["/".concat(n,"/:dels")] = 1;'
              ' route("/posts/:slug/edit"); var ok = "/posts/latest";')
    assert script_urls(script) == ["/posts/latest"]
