"""The proving ground: determinism, truth vs. what the real HTTP server serves, hidden pages
unreachable by links, the lost-sheep protocol's statistics, traps, stats, CLI."""

from __future__ import annotations

import json
import re
import signal
import statistics
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, deque
from pathlib import Path

import pytest

from hiddenweb.bench.provingground import vocab
from hiddenweb.bench.provingground.graph import ALPHA
from hiddenweb.bench.provingground.site import SiteModel

ROOT = Path(__file__).resolve().parents[2]
HREF = re.compile(r'<a href="([^"]*)"')


def fetch(base: str, method: str, url: str, data=None, timeout: float = 10):
    """(status, body, final url) of a request; redirects are not followed."""
    if isinstance(data, list):
        data = [tuple(kv) for kv in data]
    body = urllib.parse.urlencode(data or []).encode() if method == "POST" else None
    req = urllib.request.Request(urllib.parse.urljoin(base + "/", url), data=body, method=method)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode(), resp.headers
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), err.headers


@pytest.fixture(scope="module")
def site1k():
    return SiteModel(pages=1000, seed=1)


@pytest.fixture(scope="module")
def truth1k(site1k):
    return {p["key"]: p for p in site1k.truth()}


# --- determinism ---------------------------------------------------------------------------------

def sample_requests(site, truth, n=40):
    pages = list(truth.values())
    picked = pages[:: max(1, len(pages) // n)]
    return [(p["action"] or {"method": "GET", "url": p["url"], "data": []}) for p in picked]


def render(site, req):
    data = [tuple(kv) for kv in req["data"]]
    body = urllib.parse.urlencode(data).encode() if req["method"] == "POST" else None
    return site.render(req["method"], req["url"], body, {})


def test_same_pages_and_seed_give_the_same_site(site1k, truth1k):
    again = SiteModel(pages=1000, seed=1)
    assert list(again.truth()) == list(site1k.truth())
    reqs = sample_requests(site1k, truth1k)
    assert len(reqs) >= 30
    # render in reverse order on the new model: bytes do not depend on the order of requests
    second = {i: render(again, r) for i, r in reversed(list(enumerate(reqs)))}
    for i, r in enumerate(reqs):
        assert render(site1k, r) == second[i], r


def test_another_seed_gives_another_site(site1k):
    other = SiteModel(pages=1000, seed=2)
    assert list(other.truth()) != list(site1k.truth())
    assert other.render("GET", "/p/5", None, {}) != site1k.render("GET", "/p/5", None, {})


def test_sizes_follow_the_papers(truth1k):
    hidden = [p for p in truth1k.values() if p["hidden"]]
    assert 800 <= len(truth1k) <= 1200
    assert 0.4 <= len(hidden) / len(truth1k) <= 0.6  # like HWDLA's 29,395 / 58,251
    kinds = Counter(p["kind"] for p in hidden)
    assert kinds["result"] > 0 and kinds["detail"] > 0
    home = truth1k["p/0"]
    assert home["url"] == "/" and home["depth"] == 0 and home["action"] is None
    depths = Counter(p["depth"] for p in hidden)
    assert len(depths) >= 3  # hidden pages at several depths


# --- truth vs. the served site -------------------------------------------------------------------

def test_truth_chains_are_consistent(site1k, truth1k):
    for page in truth1k.values():
        a = page["action"]
        if a is None:
            continue
        parent = truth1k[a["from_key"]]
        assert page["depth"] == parent["depth"] + 1
        assert page["hidden"] == (page["kind"] != "public")
        if page["hidden"] and parent["kind"] == "public":
            assert a["via"] == "form"  # no link from a public page reaches a hidden page
        assert site1k.resolve(a["method"], a["url"], a["data"]) == page["key"]
        if not page["needs_browser"]:
            assert not parent["needs_browser"]  # the chain is replayable without a browser
        if page["needs_browser"]:
            continue
        html = render(site1k, parent["action"] or {"method": "GET", "url": "/", "data": []})
        if a["via"] == "link":
            assert f'href="{a["url"].replace("&", "&amp;")}"' in html[2].decode()
        else:  # a plain HTML form on the page, with this token
            action = a["url"].split("?")[0]
            token = dict(map(tuple, a["data"])).get("csrf") or a["url"].split("csrf=")[1][:16]
            assert f'action="{action}"' in html[2].decode()
            assert f'name="csrf" value="{token}"' in html[2].decode()


def test_truth_pages_are_served(served_site):
    site = served_site.site
    truth = list(site.truth())
    assert any(p["hidden"] and p["action"]["method"] == "POST" for p in truth)
    slow = {site.graph.url(u) for u in site.graph.slow}
    checked = 0
    for page in truth:
        req = page["action"] or {"method": "GET", "url": "/", "data": []}
        if req["url"] in slow:
            continue
        status, body, _ = fetch(served_site.url, req["method"], req["url"], req["data"])
        assert status == 200, (page, body[:300])
        assert "No results" not in body
        assert site.resolve(req["method"], req["url"], req["data"]) == page["key"]
        if req["method"] == "GET":  # the truth URL itself is a working request too
            assert fetch(served_site.url, "GET", page["url"])[0] == 200
        checked += 1
    assert checked >= len(truth) - len(slow)


def collection_of(site, kind):
    return next(c for c in site.collections if c.kind == kind and not c.js)


def test_search_values_synonyms_and_no_results(served_site):
    site = served_site.site
    col = collection_of(site, "search")
    name, token = col.fields["q"], col.tokens[col.hosts[0]]
    word = col.domain["q"][0]
    key = site.resolve("GET", f"{col.action}?{name}={word}&csrf={token}")
    assert key is not None
    variants = [word.upper(), f"  {word.capitalize()} ", word + "s"]
    variants += [alt for alt, w in vocab.SYNONYMS.items() if w == word]
    for v in variants:
        q = urllib.parse.urlencode([("csrf", col.tokens[col.hosts[-1]]), (name, v)])
        assert site.resolve("GET", f"{col.action}?{q}") == key, v
        status, body, _ = fetch(served_site.url, "GET", f"{col.action}?{q}")
        assert status == 200 and "items found" in body
    # an LVS value the collection does not index: a 200 "No results" page, not a truth page
    wrong = next(w for w in vocab.LVS_TABLES["keyword"][1] if w not in col.domain["q"])
    url = f"{col.action}?{name}={wrong}&csrf={token}"
    status, body, _ = fetch(served_site.url, "GET", url)
    assert status == 200 and "No results" in body and site.resolve("GET", url) is None


def test_form_token_is_checked(served_site):
    site = served_site.site
    for kind in ("search", "locate"):
        col = collection_of(site, kind)
        canon = next(iter(col.results))
        data = dict(canon)
        for bad in ({}, {"csrf": "0000"}):
            status, body, _ = fetch(served_site.url, col.method, col.action + (
                "?" + urllib.parse.urlencode(data | bad) if col.method == "GET" else ""),
                data | bad)
            assert status == 400 and site.resolve(col.method, col.action, data | bad) is None
        ok = data | {"csrf": col.tokens[col.hosts[-1]]}
        assert site.resolve("POST", col.action, ok) == col.key(canon, 1)


def test_locator_needs_city_and_its_region(served_site):
    site = served_site.site
    col = collection_of(site, "locate")
    (fc, city), (fr, region) = next(iter(col.results))
    token = col.main_token
    good = [(fc, city.upper()), (fr, region.lower()), ("csrf", token)]
    assert site.resolve("POST", col.action, good) == col.key(((fc, city), (fr, region)), 1)
    other = next(r for r in vocab.REGIONS if (city, r) not in {
        (c.lower(), x) for c, x in vocab.CITIES})
    wrong = [(fc, city), (fr, other), ("csrf", token)]
    status, body, _ = fetch(served_site.url, "POST", col.action, wrong)
    assert status == 200 and "No results" in body
    assert site.resolve("POST", col.action, wrong) is None


def test_archive_accepts_last_name_first(served_site):
    site = served_site.site
    col = collection_of(site, "archive")
    (fa, author), (fy, year) = next(iter(col.results))
    first, last = author.rsplit(" ", 1)
    data = {fa: f"{last.title()}, {first.title()}", fy: year, "csrf": col.main_token}
    assert site.resolve("POST", col.action, data) == col.key(((fa, author), (fy, year)), 1)


# --- hidden pages are unreachable by links -------------------------------------------------

def test_static_link_bfs_reaches_public_pages_and_no_hidden_page(site1k, truth1k):
    seen, keys = {"/"}, set()
    queue = deque(["/"])
    while queue and len(seen) < 20000:
        url = queue.popleft()
        status, headers, body = site1k.render("GET", url, None, {})
        if status != 200:
            continue
        keys.add(site1k.resolve("GET", url))
        for href in HREF.findall(body.decode()):
            href = href.replace("&amp;", "&")
            path = urllib.parse.urlsplit(href).path
            if not href.startswith("/") or path.startswith("/private/"):
                continue  # off-site or robots-disallowed
            if path in ("/calendar", "/catalog"):
                continue  # infinite trap spaces, tested below
            if href not in seen:
                seen.add(href)
                queue.append(href)
    hidden = {k for k, p in truth1k.items() if p["hidden"]}
    assert not keys & hidden
    public = {k for k, p in truth1k.items()
              if not p["hidden"] and not p["needs_browser"] and not p["disallowed"]}
    assert public <= keys, sorted(public - keys)[:10]
    js_only = {k for k, p in truth1k.items() if not p["hidden"] and p["needs_browser"]}
    assert js_only and not js_only & keys


def test_js_only_forms_and_links(site1k, truth1k):
    js_cols = [c for c in site1k.collections if c.js]
    assert js_cols
    html = site1k.render("GET", site1k.graph.url(js_cols[0].hosts[0]), None, {})[2].decode()
    assert "<script>" in html and f'action="{js_cols[0].action}"' not in html
    assert "<noscript" not in html
    assert any(p["hidden"] and p["needs_browser"] for p in truth1k.values())
    plain = SiteModel(pages=1000, seed=1, js=False)
    assert not any(p["needs_browser"] for p in plain.truth())
    assert not [c for c in plain.collections if c.js]


def test_dependent_select_options_come_from_a_script(served_site):
    site = served_site.site
    col = next(c for c in site.collections if c.style == "dependent")
    status, html, _ = fetch(served_site.url, "GET", site.graph.url(col.hosts[0]))
    form = html[html.index(f'id="form-c{col.cid}"'):].split("</form>")[0]
    assert status == 200 and f'name="{col.fields["city"]}"' in form
    assert not any(f'value="{city}"' in form for city, _ in col.domain["city"])
    assert f"/c/{col.cid}/options?region=" in html  # the script that fills the city select
    for region in col.domain["region"]:  # its endpoint: the cities with records in the region
        status, body, _ = fetch(served_site.url, "GET", col.options_url(region))
        assert status == 200 and [c for c, _ in json.loads(body)] == col.cities_in(region)
    mine = [p for p in site.truth() if p["key"].startswith(f"c{col.cid}/")]
    assert mine and all(p["hidden"] and p["needs_browser"] for p in mine)
    first = [p for p in mine if p["action"]["via"] == "form"]
    assert len(first) == len(col.results)  # one submission per (region, city) with records
    for p in first:
        a = p["action"]
        assert a["method"] == "POST" and site.resolve("POST", a["url"], a["data"]) == p["key"]
        status, body, _ = fetch(served_site.url, "POST", a["url"], a["data"])
        assert status == 200 and "Results for" in body
    assert fetch(served_site.url, "GET", f"/c/{col.cid}/step")[0] == 404  # no post-back step


def test_dependent_collections_leave_the_rest_of_the_site_as_it_was(site1k, truth1k):
    without = SiteModel(pages=1000, seed=1, dependent=False)
    dep = [c for c in site1k.collections if c.style == "dependent"]
    assert len(dep) == 1 and len(site1k.collections) == len(without.collections) + 1
    hosts = {site1k.graph.url(h) for c in dep for h in c.hosts}
    old = {p["key"]: p for p in without.truth()}
    assert set(old) < set(truth1k)
    for key, page in old.items():
        assert truth1k[key] == page
        if page["url"] not in hosts:  # only the dependent form's host pages gain something
            assert site1k.render("GET", page["url"]) == without.render("GET", page["url"]), key


# --- lost-sheep protocol statistics ---------------------------------------------------------------

def test_degrees_are_power_law_like():
    site = SiteModel(pages=10_000, seed=3)
    g = site.graph
    outdeg = [len(g.out[u]) for u in range(g.n_core)]
    indeg = Counter(v for u in range(g.n_core) for v in g.out[u])
    ins = [indeg.get(u, 0) for u in range(g.n_core)]
    assert max(ins) >= 20 * max(1, statistics.median(ins))
    assert max(outdeg) >= 10 * statistics.median(outdeg)
    # heavy tail: the top 1 % of pages hold a large share of the in-links
    top = sorted(ins, reverse=True)[: g.n_core // 100]
    assert sum(top) / sum(ins) > 0.1


def test_link_labels_use_target_words_with_probability_alpha(site1k):
    g = site1k.graph
    hits = total = 0
    for u in range(g.n_core):
        for v in g.out[u]:
            words = set(g.text(v))
            total += 1
            hits += all(w in words for w in g.label(u, v).split())
    assert total > 2000
    assert abs(hits / total - ALPHA) < 0.04, hits / total


# --- traps, errors, stats ------------------------------------------------------------------------

def test_traps_count_submissions(served_site):
    served_site.reset_stats()
    base = served_site.url
    assert fetch(base, "GET", "/login")[0] == 200
    for path, data in [("/login", {"username": "a", "password": "b"}),
                       ("/contact", {"name": "a", "email": "a@b.c", "message": "hi"}),
                       ("/account/delete", {"confirm": "yes"}), ("/contact", {})]:
        assert fetch(base, "POST", path, data)[0] == 200
        assert served_site.site.resolve("POST", path, data) is None
    stats = json.loads(fetch(base, "GET", "/__hw/stats")[1])
    assert stats["trap_submissions"] == {"login": 1, "contact": 2, "delete": 1}
    assert stats["requests"] == 5 and stats["offsite"] == 0
    fetch(base, "GET", "/robots.txt")
    fetch(base, "GET", served_site.site.graph.url(served_site.site.graph.n_nodes - 1))
    assert served_site.stats()["robots_disallowed_fetches"] == 1
    assert fetch(base, "POST", "/__hw/reset")[0] == 200
    assert served_site.stats()["requests"] == 0
    home = fetch(base, "GET", "/")[1]
    assert 'href="/login"' in home and "__hw" not in home and "Delete my account" not in home
    assert "Delete my account" in fetch(base, "GET", "/account/delete")[1]


def test_calendar_is_infinite_and_catalog_explodes(served_site):
    base, month, seen = served_site.url, "/calendar?month=2026-11", set()
    for _ in range(40):
        status, body, _ = fetch(base, "GET", month)
        assert status == 200 and served_site.site.resolve("GET", month) is None
        seen.add(month)
        month = re.search(r'href="([^"]+)">Next month', body).group(1)
    assert len(seen) == 40 and fetch(base, "GET", "/calendar?month=7777-07")[0] == 200
    site, urls, queue = served_site.site, {"/catalog"}, deque(["/catalog"])
    while queue and len(urls) < 3000:
        body = site.render("GET", queue.popleft(), None, {})[2].decode()
        for href in HREF.findall(body):
            href = href.replace("&amp;", "&")
            if href.startswith("/catalog") and href not in urls:
                urls.add(href)
                queue.append(href)
    assert len(urls) >= 1000


def test_errors_robots_and_redirect_loop(served_site):
    base = served_site.url
    robots = fetch(base, "GET", "/robots.txt")[1]
    assert "Disallow: /private/" in robots
    assert fetch(base, "GET", "/p/99999999")[0] == 404
    assert fetch(base, "GET", "/error/500")[0] == 500
    status, _, headers = fetch(base, "GET", "/loop/a")
    assert status == 302 and headers["Location"] == "/loop/b"
    assert fetch(base, "GET", "/loop/b")[2]["Location"] == "/loop/a"
    home = fetch(base, "GET", "/")[1]
    assert "http://offsite.invalid/" in home and "https://example.org/" in home
    site = served_site.site
    assert site.graph.slow and all(0.5 <= d <= 1.5 for d in site.graph.slow.values())
    url = site.graph.url(next(iter(site.graph.slow)))
    t = time.monotonic()
    assert fetch(base, "GET", url)[0] == 200 and time.monotonic() - t >= 0.45


# --- LVS, size, CLI ------------------------------------------------------------------------------

def test_lvs_file_holds_the_sites_values_and_more():
    lvs = tomllib.loads((ROOT / "hiddenweb" / "lvs_data" / "default.toml").read_text())
    for name, (labels, values) in vocab.LVS_TABLES.items():
        assert set(values) <= set(lvs[name]["values"]) and set(labels) <= set(lvs[name]["labels"])
    site = SiteModel(pages=2000, seed=5)
    lower = {v.lower() for t in lvs.values() for v in t["values"]}
    useful = [v for c in site.collections if c.kind != "filter"  # filters: finite domains
              for canon in c.results for _, v in canon[:1]]
    assert useful and all(v in lower for v in useful)
    assert len(useful) < 0.5 * len(lower)  # most LVS values give nothing on a given site


def test_large_site_builds_and_serves_a_deep_page():
    # how fast it builds is a benchmark figure, not a test: the machines are shared and noisy
    site = SiteModel(pages=100_000, seed=1)
    assert site.render("GET", "/p/49000", None, {})[0] == 200


def test_cli_serve_prints_the_url_and_stops_on_sigterm(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "hiddenweb.cli", "site", "serve", "--pages",
                             "200", "--seed", "3", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.fullmatch(r"Serving (http://127\.0\.0\.1:\d+)/ \(pages=200 seed=3\)\n", line)
        assert m, line
        assert fetch(m.group(1), "GET", "/")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    out = tmp_path / "truth.jsonl"
    subprocess.run([sys.executable, "-m", "hiddenweb.cli", "site", "truth", "--pages", "200",
                    "--seed", "3", "-o", str(out)], cwd=ROOT, check=True, capture_output=True)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows == list(SiteModel(pages=200, seed=3).truth())
