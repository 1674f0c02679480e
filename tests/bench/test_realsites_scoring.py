"""The real-site benchmark's scorers, fed request logs and app data with known answers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hiddenweb.bench.realsites.scoring import Entry, Truth, Unit, params, read_log, score
from hiddenweb.bench.realsites.sites.datasette import Datasette
from hiddenweb.bench.realsites.sites.dokuwiki import DokuWiki
from hiddenweb.bench.realsites.sites.roundup import Roundup
from hiddenweb.bench.realsites.sites.sqliteweb import SqliteWeb
from hiddenweb.bench.realsites.sites.tiddlywiki import TiddlyWiki
from hiddenweb.bench.realsites.sites.trac import Trac

FORM = "application/x-www-form-urlencoded"


def get(path: str, body: str = "", status: int = 200) -> Entry:
    return Entry(0, "GET", path, status, body=body)


def post(path: str, form: str = "", status: int = 200, ctype: str = FORM) -> Entry:
    return Entry(0, "POST", path, status, req_body=form, req_ctype=ctype)


def test_score_counts_kinds_ignores_errors_and_unknown_ids_and_finds_the_90_mark():
    truth = Truth.of([Unit("a", "link"), Unit("b", "link"), Unit("c", "form"),
                      Unit("d", "js", allowed=False)])
    shows = {"/1": {"a"}, "/2": {"zzz"}, "/3": {"b", "c"}, "/4": {"a"}, "/5": {"d"}}
    script = Entry(0, "GET", "/app.js", 200, ctype="application/javascript")
    entries = [get("/1"), get("/2"), Entry(0, "GET", "/5", 404), get("/3"), post("/x"),
               script, get("/4"), get("/5")]
    s = score(entries, truth, lambda e: shows.get(e.path, set()),
              lambda e: "post" if e.method == "POST" else None)
    assert s.found == {"link": 2, "form": 1, "js": 1, "allowed": 3, "total": 4}
    assert s.requests == 8 and s.dangerous == 1 and s.dangerous_by_reason == {"post": 1}
    # first found at requests 1 (a), 4 (b, c), 8 (d): 90 % of 4 units is the 4th
    assert s.requests_to_90 == 8
    assert s.documents == 7 and s.documents_to_90 == 7  # the script is no document
    assert s.curve == [(1, 1, 1), (4, 4, 3), (8, 7, 4)]
    assert truth.by_kind() == {"link": 2, "form": 1, "js": 1, "allowed": 3, "total": 4}


def test_score_of_nothing_and_the_90_mark_when_ten_units_come_one_by_one():
    truth = Truth.of(Unit(str(i), "link") for i in range(10))
    s = score([get(f"/{i}") for i in range(10)], truth, lambda e: {e.path[1:]}, lambda e: None)
    assert s.requests_to_90 == 9 and s.found["total"] == 10
    empty = score([], truth, lambda e: set(), lambda e: None)
    assert empty.requests == 0 and empty.requests_to_90 is None and empty.curve == []


def test_unit_kind_is_checked():
    with pytest.raises(ValueError, match="kind"):
        Unit("x", "hidden")


def test_params_merge_query_urlencoded_and_multipart_fields():
    assert params(post("/a?x=1&y=", "x=2&z=3")) == {"x": ["1", "2"], "y": [""], "z": ["3"]}
    multipart = ('--b\r\nContent-Disposition: form-data; name="do"\r\n\r\nlogin\r\n--b--')
    assert params(post("/a", multipart, ctype="multipart/form-data; boundary=b")) == {
        "do": ["login"]}


def test_read_log_reads_the_proxy_format(tmp_path: Path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"i": 1, "t": 0.1, "method": "GET", "path": "/a?b=1",
                               "status": 200, "ctype": "text/html", "req_ctype": "",
                               "req_body": "", "body": "car-0001", "extra": 1}) + "\n\n")
    (entry,) = read_log(log)
    assert entry.route == "/a" and entry.ok and entry.body == "car-0001"


def test_datasette_truth_kinds_tokens_and_dangerous(tmp_path: Path):
    con = sqlite3.connect(tmp_path / "vega.db")
    con.execute("create table cars (ref text)")
    con.execute("create table stocks (ref text)")
    con.executemany("insert into cars values (?)", [("car-0001",), ("car-0002",)])
    con.execute("insert into stocks values ('stk-0001')")
    con.commit()
    con.close()
    site = Datasette()
    truth = site.truth(tmp_path)
    assert truth.by_kind() == {"link": 2, "form": 1, "js": 0, "allowed": 3, "total": 3}
    assert site.found_in(get("/x", "<td>car-0002</td> stk-0001 xcar-0003 car-12")) == {
        "car-0002", "stk-0001"}
    assert site.dangerous(post("/vega/add_note", "note=")) == "POST /vega/add_note"
    assert site.dangerous(get("/vega/stocks_by_symbol?symbol=MSFT")) is None


def test_roundup_resolved_issues_are_form_units_and_posts_are_dangerous(tmp_path: Path):
    db = tmp_path / "tracker" / "db"
    db.mkdir(parents=True)
    con = sqlite3.connect(db / "db")
    con.execute("create table _issue (_title text, _status text)")
    con.executemany("insert into _issue values (?, ?)", [
        ("[iss-0001] open", "1"), ("[iss-0002] done", "8"), ("no ref", "2")])
    con.commit()
    con.close()
    site = Roundup()
    truth = site.truth(tmp_path)
    assert truth.units["iss-0001"].kind == "link" and truth.units["iss-0002"].kind == "form"
    assert len(truth.units) == 2
    assert site.dangerous(post("/", "__login_name=&%40action=Login")) == "POST @action=Login"
    assert site.dangerous(post("/user", "%40action=register")) == "POST @action=register"
    assert site.dangerous(get("/issue?@action=search&status=8")) is None
    # its own page names it in its title; a listing that shows it is not its page
    issue = get("/issue2", "<title>issue2: [iss-0002] done - Tracker</title> iss-0001")
    listing = get("/issue?@sort=id", "<title>List of issues - Tracker</title> iss-0002")
    assert site.own_page(issue) == {"iss-0002"} and site.own_page(listing) == set()
    both = score([listing, issue, get("/issue1", "<title>issue1: [iss-0001]</title>", 404)],
                 truth, site.found_in, site.dangerous, site.own_page)
    assert both.found["total"] == 2 and both.own_pages == 1  # the 404 is not read
    assert score([listing], truth, site.found_in, site.dangerous).own_pages is None


def test_trac_wiki_pages_by_url_tickets_by_token_and_what_is_dangerous(tmp_path: Path):
    (tmp_path / "env" / "db").mkdir(parents=True)
    con = sqlite3.connect(tmp_path / "env" / "db" / "trac.db")
    con.execute("create table wiki (name text, version int)")
    con.executemany("insert into wiki values (?, ?)", [("WikiStart", 1), ("WikiStart", 2),
                                                       ("Trac Guide", 1)])
    con.execute("create table ticket (summary text)")
    con.execute("insert into ticket values ('[tkt-0007] a bug')")
    con.commit()
    con.close()
    site = Trac()
    assert set(site.truth(tmp_path).units) == {"wiki:WikiStart", "wiki:Trac Guide", "tkt-0007"}
    assert site.found_in(get("/")) == {"wiki:WikiStart"}
    assert site.found_in(get("/wiki/Trac%20Guide?version=1", "tkt-0007")) == {
        "wiki:Trac Guide", "tkt-0007"}
    assert site.own_page(get("/ticket/7", "<title>#7 ([tkt-0007] a bug) – Demo</title>")) == {
        "tkt-0007"}
    assert site.own_page(get("/report/6", "<title>{6} All (tkt-0007)</title>")) == set()
    assert site.own_page(get("/wiki/Trac%20Guide?version=1")) == {"wiki:Trac Guide"}
    assert site.own_page(get("/")) == {"wiki:WikiStart"}
    assert site.own_page(get("/wiki/WikiStart?action=history")) == set()
    assert site.dangerous(get("/login")) == "GET /login"
    assert site.dangerous(post("/prefs", "tz=UTC")) == "POST /prefs"
    assert site.dangerous(get("/prefs")) is None  # the form, not a change
    assert site.dangerous(post("/batchmodify", "selected_tickets=")) == "POST /batchmodify"
    assert site.dangerous(post("/wiki/WikiStart?version=1", "action=diff&version=1")) is None
    assert site.dangerous(post("/query", "status=closed")) is None
    assert site.dangerous(get("/wiki/WikiStart?action=edit")) == "GET /wiki/WikiStart?action=edit"
    assert site.dangerous(post("/ticket/3", "comment=hi")) == "POST /ticket/3"


def test_sqliteweb_reading_queries_are_safe_writes_and_drops_are_not(tmp_path: Path):
    con = sqlite3.connect(tmp_path / "db.sqlite")
    con.execute("create table seattle_weather (ref text)")
    con.execute("create table iris (ref text)")
    con.execute("insert into seattle_weather values ('wx-0001')")
    con.execute("insert into iris values ('iris-0001')")
    con.commit()
    con.close()
    site = SqliteWeb()
    assert set(site.truth(tmp_path).units) == {"wx-0001", "iris-0001"}
    assert site.dangerous(post("/iris/query/", "sql=SELECT+*+FROM+iris")) is None
    assert site.dangerous(post("/iris/query/", "sql=delete+from+iris")) == \
        "POST /iris/query/ (writing SQL)"
    assert site.dangerous(post("/iris/drop/", "")) == "POST /drop/"
    assert site.dangerous(post("/iris/delete/WyJpcmlzLTAwMDEiXQ==/", "")) == "POST /delete/"
    assert site.dangerous(post("/create-table/", "table_name=x")) == "POST /create-table/"
    assert site.dangerous(post("/iris/export/", "format=json")) is None
    assert site.dangerous(get("/iris/drop/")) is None  # the confirmation page only


def test_tiddlywiki_text_urls_are_units_and_writes_are_dangerous(tmp_path: Path):
    (tmp_path / "titles.json").write_text(json.dumps(["HelloThere", "Quick Start"]))
    site = TiddlyWiki()
    assert site.truth(tmp_path).by_kind()["js"] == 2
    assert site.found_in(get("/recipes/default/tiddlers/Quick%20Start")) == {"Quick Start"}
    assert site.found_in(get("/HelloThere")) == {"HelloThere"}
    assert site.found_in(get("/recipes/default/tiddlers.json")) == set()
    assert site.found_in(get("/")) == set()
    put = Entry(0, "PUT", "/recipes/default/tiddlers/%24%3A%2FStoryList", 204)
    assert site.dangerous(put) == "PUT system tiddler (its own syncer)"
    assert site.dangerous(Entry(0, "DELETE", "/bags/default/tiddlers/HelloThere", 204)) == \
        "DELETE tiddler"
    assert site.dangerous(get("/recipes/default/tiddlers/HelloThere")) is None


def test_dokuwiki_pages_by_token_and_its_acting_forms(tmp_path: Path):
    pages = tmp_path / "www" / "data" / "pages" / "ns"
    pages.mkdir(parents=True)
    (pages / "a.txt").write_text("Reference dw-0001.")
    (pages / "b.txt").write_text("Reference dw-0002, see dw-0001.")
    site = DokuWiki()
    assert set(site.truth(tmp_path).units) == {"dw-0001", "dw-0002"}
    assert site.dangerous(post("/doku.php", "do=login&u=&p=")) == "POST do=login"
    assert site.dangerous(post("/doku.php?id=x&do=register", "email=")) == "POST do=register"
    assert site.dangerous(post("/doku.php?id=x&do=media&tab_files=search", "q=a")) is None
    assert site.dangerous(post("/doku.php?id=x&do=media", "mediado=delete")) == \
        "POST media delete"
    assert site.dangerous(get("/doku.php?id=x&do=revert")) == "GET do=revert"
    assert site.dangerous(get("/doku.php?id=x&do=login")) is None  # the form, not a login
    assert site.dangerous(post("/lib/exe/ajax.php", "call=qsearch&q=a")) is None
    assert site.dangerous(post("/lib/exe/ajax.php", "call=lock&id=x")) == "ajax call=lock"


def test_wivet_kinds_take_the_plainest_path_a_path_as_hard_as_its_hardest_step(tmp_path: Path):
    from hiddenweb.bench.realsites.sites.wivet import Wivet, kinds

    pages, inner = tmp_path / "pages", tmp_path / "innerpages"
    pages.mkdir()
    inner.mkdir()
    (pages / "1.php").write_text(
        '<a href="../innerpages/<?php tc(\'1_aa\'); ?>.php">x</a>'
        '<script>location.href = "../innerpages/1_bb.php";</script>'
        '<form action="../innerpages/1_cc.php"><input name=q></form>'
        '<form method="post" action="../innerpages/1_bc.php"><input name="ip">'
        '<input type="submit" value="Continue"></form>'
        '<a href="#" onclick="go(\'1_ee\')">y</a>')
    (inner / "1_aa.php").write_text('<a href="1_dd.php">next</a>')
    (inner / "1_bb.php").write_text('<a href="1_ff.php">after a script</a>')
    (inner / "1_cc.php").write_text('<a href="1_dd.php">also</a><a href="1_ac.php">on</a>')
    (inner / "1_bc.php").write_text('<a href="1_bd.php">behind a refused form</a>'
                                    '<a href="1_ac.php">and one reached besides</a>')
    for name in ("1_dd", "1_ee", "1_ff", "1_ac", "2_ad", "1_bd"):
        (inner / f"{name}.php").write_text("<p>case</p>")
    # an unknown POST form (no word the safety policy knows) is never sent: what only it
    # reaches is not allowed
    assert kinds(tmp_path) == {
        "1_aa": ("link", True), "1_bb": ("js", True), "1_cc": ("form", True),
        "1_dd": ("link", True), "1_ee": ("js", True), "1_ff": ("js", True),
        "1_ac": ("form", True), "2_ad": ("js", True), "1_bc": ("form", False),
        "1_bd": ("form", False)}
    site = Wivet()
    assert site.found_in(get("/innerpages/1_aa.php")) == {"1_aa"}
    assert site.dangerous(get("/logout.php")) == "GET logout.php"
    assert site.dangerous(get("/offscanpages/remove-all-stats.php")) == \
        "GET remove-all-stats.php"
    assert site.dangerous(get("/pages/1.php")) is None


def test_docsify_serves_its_docs_from_the_pinned_package_and_counts_its_markdown_pages(
        tmp_path: Path):
    from hiddenweb.bench.realsites.sites.docsify import Docsify

    docs = tmp_path / "src" / "docs"
    (docs / "_media").mkdir(parents=True)
    (docs / "index.html").write_text(
        '<link rel="stylesheet" href="//cdn.jsdelivr.net/npm/docsify@5/dist/themes/core.min.css">'
        '<script src="//cdn.jsdelivr.net/npm/docsify-plugin-carbon@1"></script>\n'
        "<script>window.$docsify = {loadSidebar: true, plugins: [\n"
        "  DocsifyCarbon.create('X', 'y'),\n  function (hook) {},\n]};</script>\n"
        '<script src="//cdn.jsdelivr.net/npm/docsify@5/dist/docsify.min.js"></script>\n'
        '<script src="//cdn.jsdelivr.net/npm/docsify@5/dist/plugins/gtag.min.js"></script>\n'
        '<script src="https://cdn.jsdelivr.net/npm/vue@3/dist/vue.global.prod.js"></script>')
    for name in ("README.md", "_sidebar.md", "_navbar.md", "guide.md", "_media/example.md"):
        (docs / name).write_text("# page")
    package = tmp_path / "npm" / "node_modules" / "docsify" / "dist"
    (package / "plugins").mkdir(parents=True)
    (package / "docsify.min.js").write_text("// docsify")
    site = Docsify(str(tmp_path / "src"))
    site.src, site.prefix = tmp_path / "src", tmp_path / "npm"
    data = tmp_path / "data"
    data.mkdir()
    site.build(data)
    html = (data / "www" / "index.html").read_text()
    assert "//" not in html.replace("/_docsify/", "")  # nothing off this machine
    assert '<script src="/_docsify/docsify.min.js"></script>' in html
    assert "themes/core.min.css" in html and "function (hook) {}" in html
    assert "DocsifyCarbon" not in html and "gtag" not in html
    assert (data / "www" / "_docsify" / "docsify.min.js").exists()
    assert set(site.truth(data).units) == {"README.md", "guide.md", "_media/example.md"}
    assert site.found_in(get("/guide.md")) == {"guide.md"}
    assert site.found_in(get("/_media/example.md")) == {"_media/example.md"}
    assert site.found_in(get("/")) == set()
    assert site.dangerous(post("/guide.md")) == "POST /guide.md"
    assert site.dangerous(get("/guide.md")) is None


def test_the_naive_browser_crawl_aborts_whatever_is_off_loopback():
    from types import SimpleNamespace

    from hiddenweb.bench.realsites.crawlers import BROWSER, off_loopback

    assert BROWSER["PLAYWRIGHT_ABORT_REQUEST"].endswith(".off_loopback")
    assert off_loopback(SimpleNamespace(url="https://tiddlywiki.com/x.png"))
    assert not off_loopback(SimpleNamespace(url="http://127.0.0.1:8080/static/app.js"))


def test_state_changes_name_dropped_created_and_changed_tables_and_files(tmp_path: Path):
    import shutil

    from hiddenweb.bench.realsites.state import sqlite_changes, tree_changes

    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    con = sqlite3.connect(before / "db.sqlite")
    con.execute("create table a (x)")
    con.execute("create table b (x)")
    con.execute("create table sessions (x)")
    con.executemany("insert into a values (?)", [(1,), (2,)])
    con.commit()
    con.close()
    (before / "pages").mkdir()
    (before / "pages" / "one.txt").write_text("one")
    (before / "pages" / "two.txt").write_text("two")
    shutil.copytree(before, after)
    assert sqlite_changes(before / "db.sqlite", after / "db.sqlite") == []
    assert tree_changes(before / "pages", after / "pages") == []
    con = sqlite3.connect(after / "db.sqlite")
    con.execute("update a set x = 3 where x = 2")
    con.execute("drop table b")
    con.execute("create table c (x)")
    con.execute("insert into sessions values ('s')")
    con.commit()
    con.close()
    assert sqlite_changes(before / "db.sqlite", after / "db.sqlite", ["sess*"]) == [
        "table a: 2 → 2 rows (1 removed or changed, 1 added or changed)",
        "table b dropped (0 rows)", "table c created (0 rows)"]
    (after / "pages" / "one.txt").write_text("edited")
    (after / "pages" / "two.txt").unlink()
    (after / "pages" / "three.txt").write_text("new")
    (after / "pages" / "x.lock").write_text("")
    assert tree_changes(before / "pages", after / "pages", ["*.lock"]) == [
        "pages/one.txt changed", "pages/three.txt added", "pages/two.txt removed"]


def test_crawler_arms_are_cut_at_commas_outside_their_json():
    from hiddenweb.bench.realsites.cli import split_crawlers

    arm = 'hwdla@HIDDENWEB_LAB={"dla_previews": false, "browser_judge_acted": false}'
    assert split_crawlers(f"naive,naive-browser,{arm},hwdla") == [
        "naive", "naive-browser", arm, "hwdla"]
    assert split_crawlers("hwdla") == ["hwdla"]


def test_issue_24_bars_compare_hwdla_with_the_naive_browser_of_the_same_run():
    from hiddenweb.bench.realsites import report

    def crawl(name, js, wall, pages=0, useful=None, dangerous=0):
        return {"crawler": name, "found": {"link": 0, "form": 0, "js": js, "total": js,
                                           "allowed": js},
                "wall_seconds": wall, "browser_pages": pages, "useful_renders": useful,
                "dangerous": dangerous, "downloads": 1, "requests": 1, "requests_to_90": 1}

    truth = {"link": 0, "form": 0, "js": 20, "total": 20, "allowed": 20}
    results = [
        {"name": "spa", "truth": truth, "origin": "npm", "pins": [], "hidden": "",
         "crawls": [crawl("naive", 0, 5.0), crawl("naive-browser", 10, 40.0, 30),
                    crawl("hwdla", 19, 16.0, 12, 10)]},
        {"name": "short", "truth": truth, "origin": "npm", "pins": [], "hidden": "",
         "crawls": [crawl("naive-browser", 19, 10.0, 3),
                    crawl("hwdla", 18, 12.0, 13, 10, dangerous=1)]},
        {"name": "no-browser-arm", "truth": truth, "origin": "npm", "pins": [], "hidden": "",
         "crawls": [crawl("hwdla", 20, 9.0)]},
        {"name": "skipped", "skipped": "not installed"},
    ]
    got = {b["site"]: b for b in report.bars(results)}
    assert set(got) == {"spa", "short"}
    spa = got["spa"]
    assert spa["js_met"] and spa["renders_met"] and spa["wall_met"] and spa["dangerous_met"]
    assert spa["precision"] == 0.83 and spa["wall_ratio"] == 0.4
    short = got["short"]  # fewer JS-only units than the naive browser, 13 > 1.2 x 10 pages
    assert not short["js_met"] and not short["renders_met"] and not short["wall_met"]
    assert not short["dangerous_met"]
    md = report.markdown(results, {"command": "c", "date": "d", "machine": "m", "code": "x",
                                   "caps": {"pages": 1, "seconds": 1}, "total_seconds": 1})
    assert "## Issue 24's bars" in md
    assert "| spa | 19 / 10 / 20 | met | 10 / 12 (0.83) | met | 16.0 / 40.0 (0.40) | met | 0 |" \
        in md
