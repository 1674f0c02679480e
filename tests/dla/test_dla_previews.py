"""A form's answer that only lists pages the crawl has queued is a preview, not a find
(:mod:`hiddenweb.dla.previews`): unit tests of the verdict, and real crawls of a small wiki
served on 127.0.0.1.

The wiki (written here, no app's names) has an index linking every article, and on every page
a site search (GET) whose answers list the matching articles, a snippet of each and a link to
it, ten to a page with a link to the next. Each answer shows snippets no page showed yet (the
articles are still queued), so judged by its text it is a new hidden page and the search is
rewarded; with previews penalised (``dla_previews``, the default) they are not. What that buys
on real sites (a Trac's search, 465 of 781 requests) is measured by ``hiddenweb bench
realsites`` (``docs/benchmarks.md``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from html import escape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from crawlrun import _run  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve

from hiddenweb.dla.feedback import feedback
from hiddenweb.dla.previews import Previews

ARTICLES = 60
PER_PAGE = 10
ACTION = {"hiddenweb_action": {"page": "x", "kinds": ["k"]}}


def word(n: int, salt: str) -> str:
    """A word of letters only (the trap guard reads digits as ids)."""
    code = int(hashlib.sha1(f"{salt}{n}".encode()).hexdigest(), 16)
    letters = []
    for _ in range(6):
        code, c = divmod(code, 26)
        letters.append(chr(97 + c))
    return "".join(letters)


NAMES = [word(n, "name") for n in range(ARTICLES)]
#: words many articles share: a search for one lists a score of articles, over pages
COMMON = ["garden", "river", "stone", "market", "winter", "harbour", "bridge", "orchard"]


def text_of(n: int) -> str:
    shared = {COMMON[n % 8], COMMON[(3 * n + 1) % 8], COMMON[(5 * n + 2) % 8]}
    return " ".join([*sorted(shared), *(word(n * 10 + k, "text") for k in range(12))])


def page(title: str, body: str) -> bytes:
    search = ('<form action="/search" method="get"><label>Search <input name="q" '
              'type="search"></label><button type="submit">Search</button></form>')
    return (f"<!doctype html><html><head><title>{escape(title)}</title></head><body>"
            f"<h1>{escape(title)}</h1>{body}{search}<a href='/'>index</a></body></html>"
            ).encode()


class Wiki(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/":
            body = page("Index", "<ul>" + "".join(
                f'<li><a href="/article/{name}">{name}</a></li>' for name in NAMES) + "</ul>")
        elif parts.path.startswith("/article/") and parts.path[9:] in NAMES:
            n = NAMES.index(parts.path[9:])
            body = page(NAMES[n], f"<p>{text_of(n)}</p>")
        elif parts.path == "/search":
            q = (query.get("q") or [""])[0].strip().lower()
            start = int((query.get("start") or ["0"])[0] or 0)
            hits = [n for n in range(ARTICLES) if q and q in text_of(n).split()]
            shown = hits[start:start + PER_PAGE]
            rows = "".join(f'<li><a href="/article/{NAMES[n]}">{NAMES[n]}</a>'
                           f"<p>{text_of(n)}</p></li>" for n in shown)
            more = (f'<a href="/search?q={quote(q)}&start={start + PER_PAGE}">next</a>'
                    if start + PER_PAGE < len(hits) else "")
            body = page(f"Search: {q}", f"<ol>{rows}</ol>{more}" if hits else
                        "<p>No articles match.</p>")
        else:
            return self._send(b"not found", status=404)
        self._send(body)


@pytest.fixture(scope="module")
def wiki() -> Iterator[str]:
    with serve(Wiki) as url:
        yield url


# -- the verdict ---------------------------------------------------------------------------
def test_an_answer_listing_only_queued_pages_is_a_preview() -> None:
    p = Previews()
    p.page_read("http://s/")
    assert not p.judge("http://s/", ["http://s/a/1", "http://s/a/2"], answer=False)
    # its links met before, not read: a preview; its own next page does not count
    assert p.judge("http://s/search?q=x", ["http://s/a/1", "http://s/search?q=x&start=10",
                                           "http://s/"], answer=True)
    # the same page reached by a link is not an answer: never a preview
    assert not p.judge("http://s/list", ["http://s/a/1"], answer=False)


def test_an_answer_with_a_page_not_met_before_is_not_a_preview() -> None:
    p = Previews()
    p.judge("http://s/", ["http://s/a/1"], answer=False)
    assert not p.judge("http://s/search?q=x", ["http://s/a/1", "http://s/a/9"], answer=True)
    # met now: the next answer listing both is a preview
    assert p.judge("http://s/search?q=y", ["http://s/a/9#top", "http://s/a/1"], answer=True)


def test_an_answer_pointing_only_at_pages_read_is_judged_by_its_text() -> None:
    """A canned query's rows that no page links, beside links to pages read: content."""
    p = Previews()
    p.judge("http://s/", ["http://s/", "http://s/about"], answer=False)
    p.page_read("http://s/", "http://s/about")
    assert not p.judge("http://s/query?sym=a", ["http://s/", "http://s/about"], answer=True)
    assert not p.judge("http://s/query?sym=b", [], answer=True)


def test_a_preview_is_penalised_and_other_answers_are_not() -> None:
    new = {"status": 200, "form_only": True, "new_content": True, "novel": True}
    assert feedback(ACTION, **new) == "reward"
    assert feedback(ACTION, **new, preview=True) == "penalty"
    assert feedback(ACTION, **new, preview=True, new_forms=1) == "reward"  # a new form pays


# -- real crawls ---------------------------------------------------------------------------
def crawl(wiki: str, tmp_path: Path, previews: bool, steps: int = 0) -> tuple[list[dict], dict]:
    run = _run(tmp_path, "-a", f"seed={wiki}/",
               settings={"HIDDENWEB_BROWSER": "never", "HIDDENWEB_CLOSE_STALE": 0,
                         "HIDDENWEB_LAB": {"dla_previews": previews, "dla_max_steps": steps}})
    assert run.returncode == 0, run.stderr[-3000:]
    return sorted(run.items, key=lambda item: item["downloads"]), run.stats or {}


def articles(items: list[dict]) -> set[str]:
    return {urlsplit(i["url"]).path for i in items
            if i["status"] == 200 and urlsplit(i["url"]).path.startswith("/article/")}


def searches(items: list[dict]) -> int:
    return sum(urlsplit(i["url"]).path == "/search" for i in items)


def test_search_answers_listing_queued_articles_are_penalised(wiki: str, tmp_path: Path) -> None:
    """The verdict reaches the learning in a real crawl: the search's answers that list only
    articles the index already linked are penalised, not rewarded; every article is read."""
    items, stats = crawl(wiki, tmp_path / "on", True)
    assert len(articles(items)) == ARTICLES
    assert searches(items) >= 5
    assert stats["hiddenweb/dla/previews"] >= 5
    assert stats.get("hiddenweb/dla/feedback/reward", 0) <= 2


def test_without_the_rule_the_same_answers_are_rewarded(wiki: str, tmp_path: Path) -> None:
    """The regression: each answer's snippets are text no page showed yet (the articles wait
    in the frontier), so judged by its text alone every answer that lists articles pays."""
    items, stats = crawl(wiki, tmp_path / "off", False)
    assert len(articles(items)) == ARTICLES
    assert "hiddenweb/dla/previews" not in stats
    assert stats["hiddenweb/dla/feedback/reward"] >= 5


def test_a_preview_is_no_new_page_for_its_forms_explorer(wiki: str, tmp_path: Path) -> None:
    """An answer judged a preview teaches the search's explorer nothing (lab knob
    ``form_previews_known``): no value paid, no word learnt from its links' labels, so the
    search is sent fewer times; every article is read either way (the index links them)."""
    runs = {}
    for arm, knob in (("on", True), ("off", False)):
        run = _run(tmp_path / arm, "-a", f"seed={wiki}/", settings={
            "HIDDENWEB_BROWSER": "never", "HIDDENWEB_CLOSE_STALE": 0,
            "HIDDENWEB_LAB": {"form_previews_known": knob}})
        assert run.returncode == 0, run.stderr[-3000:]
        assert len(articles(run.items)) == ARTICLES, arm
        runs[arm] = run.stats or {}
    on, off = runs["on"], runs["off"]
    print({arm: {k: v for k, v in s.items() if k.startswith("hiddenweb/forms/")}
           for arm, s in runs.items()})
    assert on["hiddenweb/forms/answers_preview"] >= 1
    assert "hiddenweb/forms/answers_preview" not in off
    assert on.get("hiddenweb/forms/answers_new", 0) < off["hiddenweb/forms/answers_new"]
    assert on["hiddenweb/forms/submissions"] < off["hiddenweb/forms/submissions"]
