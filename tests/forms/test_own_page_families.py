"""The copies of a POST form that posts back to its own page are one family across pages
(``FormInfo.family_across_pages``, ``StoppingRule.family_of``, lab knob
``form_own_page_families``): once two copies are done with no new page, a copy met on another
page is sent once, with its page's defaults.

End to end: ``scrapy crawl hwdla`` against a wiki the test serves on 127.0.0.1. Each article
(its own URL template: a name, not a number) shows a diff's display options, a POST form to
the article's own path that stores them and sends the reader back to the article (303), as a
wiki or tracker's diff view does.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy import Selector

from hiddenweb.forms.extract import extract_forms

ARTICLES = ["Apple", "River", "Stone", "Cloud", "Maple", "Tiger", "Amber", "Frost", "Cedar",
            "Delta", "Ember", "Grove"]
OPTIONS = """<form method="post" action="/wiki/{name}?version=1">
<input type="hidden" name="__FORM_TOKEN" value="a815f3ed46f4309c18851863">
<input type="hidden" name="action" value="diff">
<label for="style">View differences</label>
<select id="style" name="style"><option value="inline">inline</option>
<option value="sidebyside" selected>side by side</option></select>
<label><input type="radio" name="contextall" value="0" checked> Show</label>
<label><input type="text" name="contextlines" size="2" value="2"> lines around each change</label>
<label><input type="radio" name="contextall" value="1"> Show the changes in full context</label>
<fieldset><legend>Ignore:</legend>
<label><input type="checkbox" name="ignoreblanklines"> Blank lines</label>
<label><input type="checkbox" name="ignorecase"> Case changes</label>
<label><input type="checkbox" name="ignorewhitespace"> White space changes</label></fieldset>
<input type="submit" name="update" value="Update"></form>"""


def test_a_form_that_posts_back_to_its_page_is_one_family_across_pages():
    def form(page: str, action: str, method: str = "post"):
        html = f'<form method="{method}" action="{action}"><input name="n"></form>'
        return extract_forms(Selector(text=html, base_url=page), page)[0]

    a = form("http://h:8000/wiki/Apple?action=diff", "/wiki/Apple?version=1")
    b = form("http://h:8000/wiki/River", "")  # no action: its own page
    assert a.posts_to_its_page() and b.posts_to_its_page()
    assert a.family != b.family and a.family_across_pages == b.family_across_pages
    assert not form("http://h:8000/wiki/Apple", "/search").posts_to_its_page()
    assert not form("http://h:8000/wiki/Apple", "http://h:9000/wiki/Apple").posts_to_its_page()
    assert not form("http://h:8000/wiki/Apple", "/wiki/Apple", "get").posts_to_its_page()


class WikiSite(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        type(self).log.append(("GET", self.path))
        if path == "/":
            body = f'<h1>Wiki</h1><a href="/wiki/{ARTICLES[0]}">Start</a>'
        elif path.startswith("/wiki/") and path[6:] in ARTICLES:
            name = path[6:]
            i = ARTICLES.index(name)  # each article links the next: they are met one by one
            after = f'<a href="/wiki/{ARTICLES[i + 1]}">Next</a>' if i + 1 < len(ARTICLES) else ""
            body = (f"<h1>{name}</h1><p>The article about {name.lower()} and its changes.</p>"
                    + OPTIONS.format(name=name) + after)
        else:
            return self._send(b"not found", status=404)
        self._send(f"<html><body>{body}</body></html>".encode())

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        type(self).log.append(("POST", self.path))
        path = urlsplit(self.path).path
        if path.startswith("/wiki/") and path[6:] in ARTICLES:  # stored; back to the article
            return self._send(b"", status=303, headers={"Location": path})
        self._send(b"not found", status=404)


def _crawl_arms(tmp_path: Path, site: type[WikiSite], knob: str
                ) -> tuple[dict[str, list[tuple[str, str]]], dict[str, dict]]:
    """Crawl ``site`` with the lab knob ``knob`` on, then off (no browser, no stale rule):
    each arm's log of the requests the site answered (method, path) and its stats."""
    logs, stats = {}, {}
    for arm, on in (("on", True), ("off", False)):
        with serve(site) as url:
            run = run_crawl(tmp_path / arm, "-a", f"seed={url}/", settings={
                "HIDDENWEB_BROWSER": "never", "HIDDENWEB_CLOSE_STALE": 0,
                "HIDDENWEB_LAB": {knob: on}})
            assert run.returncode == 0, run.stderr[-2000:]
            logs[arm] = list(site.log)
        stats[arm] = run.stats
    return logs, stats


def _posts_with_every_diff_read(logs: dict[str, list[tuple[str, str]]], stats: dict[str, dict]
                                ) -> dict[str, Counter[str]]:
    """Each arm's POSTs by article, once it is checked that the arm read every article's diff
    and sent every article's copy at least once."""
    posts = {}
    for arm, log in logs.items():
        posts[arm] = Counter(urlsplit(p).path for m, p in log if m == "POST")
        diffs = {urlsplit(p).path for m, p in log if m == "GET" and "action=diff" in p}
        assert diffs == {f"/wiki/{n}" for n in ARTICLES}, arm  # every diff read
        assert set(posts[arm]) == {f"/wiki/{n}" for n in ARTICLES}, arm
    print(posts, {arm: {k: v for k, v in s.items() if "forms/" in k} for arm, s in stats.items()})
    return posts


def test_a_display_options_form_on_every_article_is_explored_on_two_and_sent_once_on_the_rest(
        tmp_path: Path):
    """On: every article's copy is sent at least once (its defaults), and once two copies
    are done with nothing new the others are sent once each; off, each copy is explored
    (several POSTs each). Both arms read every article."""
    logs, stats = _crawl_arms(tmp_path, WikiSite, "form_own_page_families")
    posts = {}
    for arm, log in logs.items():
        posts[arm] = Counter(urlsplit(p).path for m, p in log if m == "POST")
        assert {urlsplit(p).path for m, p in log if m == "GET"} \
            >= {f"/wiki/{n}" for n in ARTICLES}, arm
        assert set(posts[arm]) == {f"/wiki/{n}" for n in ARTICLES}, arm  # each sent
    once = [p for p, n in posts["on"].items() if n == 1]
    # how many copies are explored before two are done depends on how the answers and the
    # next articles interleave: 3 or 4 in runs alone
    assert len(once) >= len(ARTICLES) // 2, posts["on"]
    assert stats["on"]["hiddenweb/forms/family_spent"] == len(once)
    on_stats = stats["on"]
    assert on_stats.get("hiddenweb/forms/inert", 0) \
        + on_stats.get("hiddenweb/forms/own_page_empty", 0) >= 2  # copies done, counted
    assert min(posts["off"].values()) >= 3, posts["off"]
    assert "hiddenweb/forms/family_spent" not in stats["off"]
    assert "hiddenweb/forms/own_page_empty" not in stats["off"]
    assert sum(posts["on"].values()) * 5 <= sum(posts["off"].values()) * 3, (posts["on"],
                                                                              posts["off"])


class DiffWikiSite(WikiSite):
    """The wiki, but the display options send the reader to the article's diff view (303),
    a page of its own: the defaults' answer is a new page on every article, and the other
    values' answers show that diff again (the same URL, or with ``contextall=1`` the same text),
    as Trac's diff options on a page's first version do."""

    def do_GET(self) -> None:  # noqa: N802
        split = urlsplit(self.path)
        name = split.path[6:]
        if split.path.startswith("/wiki/") and name in ARTICLES and "action=diff" in split.query:
            type(self).log.append(("GET", self.path))
            return self._send(f"<html><body><h1>Changes of {name}</h1><p>Added: the article "
                              f"about {name.lower()} and its changes.</p></body></html>".encode())
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        type(self).log.append(("POST", self.path))
        path = urlsplit(self.path).path
        if path.startswith("/wiki/") and path[6:] in ARTICLES:
            full = "&contextall=1" if "contextall=1" in body else ""
            return self._send(b"", status=303,
                              headers={"Location": f"{path}?action=diff&version=1{full}"})
        self._send(b"not found", status=404)


def test_a_family_whose_defaults_give_each_pages_diff_is_judged_by_its_other_values(
        tmp_path: Path):
    """Each copy's defaults' answer is its article's diff, a new page: judged by all its
    answers (lab knob ``form_family_values`` off) the family is spent late, if at all, and
    copy after copy is explored; judged by the answers to its other values, which show the
    diff again, two copies done spend it, and the others are sent once each. Every article's
    diff is read either way."""
    logs, stats = _crawl_arms(tmp_path, DiffWikiSite, "form_family_values")
    posts = _posts_with_every_diff_read(logs, stats)
    once = [p for p, n in posts["on"].items() if n == 1]
    assert len(once) >= len(ARTICLES) // 2, posts["on"]
    assert stats["on"]["hiddenweb/forms/family_spent"] == len(once)
    # off, the family is spent late (its copies' inert ends count): more copies are explored,
    # and more POSTs sent (on 26 and 40 against 73 and 73 in two runs)
    explored = {arm: sum(n >= 3 for n in posts[arm].values()) for arm in posts}
    assert explored["off"] > explored["on"], posts
    assert sum(posts["on"].values()) * 3 <= sum(posts["off"].values()) * 2, posts


def _lines(name: str, version: int) -> list[str]:
    """An article's text: its sixth line was edited in version 2."""
    words = ["roots", "bark", "leaves", "seeds", "soil", "light", "water", "birds", "frost",
             "summer"]
    out = [f"Line {k} of the {name.lower()} article tells of its {w}." for k, w in
           enumerate(words)]
    out[5] = f"The {name.lower()} article was {'drafted' if version == 1 else 'revised'} here."
    return out


class DiffViewsWikiSite(WikiSite):
    """Each article shows its text (version 2) and the diff's display options; the options
    send the reader (303) to a view of the diff that carries them in its URL: the lines around
    the change (``contextlines``, default 2), or all of them (``contextall=1``), inline or side
    by side. Every view is a page of its own with a set of texts of its own, but the only text
    no page showed before is the edited line's first version, which the defaults' answer
    shows: the other values' answers show the article's lines again, more or fewer of them."""

    def do_GET(self) -> None:  # noqa: N802
        split = urlsplit(self.path)
        name = split.path[6:]
        if not (split.path.startswith("/wiki/") and name in ARTICLES):
            return super().do_GET()
        type(self).log.append(("GET", self.path))
        i = ARTICLES.index(name)
        after = f'<a href="/wiki/{ARTICLES[i + 1]}">Next</a>' if i + 1 < len(ARTICLES) else ""
        new = _lines(name, 2)
        if "action=diff" not in split.query:
            text = "".join(f"<p>{line}</p>" for line in new)
            return self._send(f"<html><body><h1>{name}</h1>{text}"
                              f"{OPTIONS.format(name=name)}{after}</body></html>".encode())
        query = dict(parse_qsl(split.query))
        try:
            around = max(0, min(100, int(query.get("contextlines", "2"))))
        except ValueError:
            around = 2
        shown = range(10) if query.get("contextall") == "1" else range(5 - around, 6 + around)
        old = _lines(name, 1)[5]
        rows = []
        for k in shown:
            if not 0 <= k < 10:
                continue
            if k == 5:
                rows.append((old, new[5]))
            else:
                rows.append((new[k], new[k]))
        if query.get("style") == "inline":
            body = "".join(f"<del>{a}</del><ins>{b}</ins>" if a != b else f"<p>{a}</p>"
                           for a, b in rows)
        else:
            body = "<table>" + "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows) \
                + "</table>"
        self._send(f"<html><body><h1>Changes of {name}</h1>{body}</body></html>".encode())

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = dict(parse_qsl(self.rfile.read(length).decode()))
        type(self).log.append(("POST", self.path))
        path = urlsplit(self.path).path
        if path.startswith("/wiki/") and path[6:] in ARTICLES:
            view = {k: body[k] for k in ("style", "contextlines", "contextall") if k in body}
            return self._send(b"", status=303, headers={
                "Location": f"{path}?action=diff&version=2&{urlencode(sorted(view.items()))}"})
        self._send(b"not found", status=404)


def test_a_family_whose_values_show_its_diff_again_rearranged_is_spent(tmp_path: Path):
    """Each copy's other values answer new pages (other views of its article's diff: URLs and
    sets of texts of their own) that show no text the crawl had not shown. Judged by new pages
    (lab knob ``form_family_text`` off) no copy is ever done empty and every copy is explored;
    judged by new text, two copies done spend the family and the others are sent once each.
    Every article's diff is read either way."""
    logs, stats = _crawl_arms(tmp_path, DiffViewsWikiSite, "form_family_text")
    posts = _posts_with_every_diff_read(logs, stats)
    assert stats["on"]["hiddenweb/forms/answers_rearranged"] > 0
    assert "hiddenweb/forms/answers_rearranged" not in stats["off"]
    # how many copies are explored before the family is spent depends on how the answers and
    # the next articles interleave: 6 to 8 of the 12 were sent once in three runs alone (on
    # 49-66 POSTs, off 275)
    once = [p for p, n in posts["on"].items() if n == 1]
    assert len(once) >= len(ARTICLES) // 3, posts["on"]
    assert stats["on"]["hiddenweb/forms/family_spent"] == len(once)
    assert "hiddenweb/forms/family_spent" not in stats["off"], posts["off"]
    assert min(posts["off"].values()) >= 3, posts["off"]
    assert sum(posts["on"].values()) * 2 <= sum(posts["off"].values()), posts
