"""The hwdla spider end to end: `scrapy crawl` in a subprocess against a served proving-ground
site (a real HTTP server on 127.0.0.1), scored against the site's ground truth."""

from __future__ import annotations

import socket

import pytest
from crawlrun import READ_ALL, crawl, resolve, truth_of  # tests/ is on sys.path

ITEM_KEYS = {"url", "final_url", "method", "status", "error", "depth", "referrer", "reached_by",
             "form_only", "title", "fingerprint", "fetch_seconds", "fetched_at", "content_type",
             "cache_control", "expires", "downloads"}


@pytest.fixture(scope="module")
def demo_crawl(served_site, tmp_path_factory):
    served_site.reset_stats() if hasattr(served_site, "reset_stats") else None
    # read to its end: a stale close can come before the trap guard has seen enough calendar
    # pages to trap the template (under load, 1 run in 3 here, and one clean-clone CI)
    items, log, code = crawl(tmp_path_factory.mktemp("crawl"), "-a", f"seed={served_site.url}/",
                             settings=READ_ALL)
    assert code == 0, log[-3000:]
    return items, log, served_site.stats()


def test_items_follow_the_schema(demo_crawl):
    items, _, _ = demo_crawl
    assert items
    for item in items:
        assert ITEM_KEYS <= set(item), set(item) ^ ITEM_KEYS
    home = items[0]
    assert home["depth"] == 0 and home["reached_by"]["kind"] == "seed" and not home["form_only"]


def test_finds_hidden_pages_only_through_forms(served_site, demo_crawl):
    items, _, _ = demo_crawl
    truth = truth_of(served_site.site)
    hidden = {k for k, p in truth.items() if p["hidden"] and not p["needs_browser"]}
    found = {resolve(served_site.site, i) for i in items if i["status"] == 200} & hidden
    assert len(found) >= 0.5 * len(hidden), (len(found), len(hidden))
    for item in items:
        key = resolve(served_site.site, item) if item["status"] == 200 else None
        if key in hidden:
            assert item["form_only"], item["url"]  # a hidden page is never reached by links alone
    forms = [i for i in items if i["reached_by"]["kind"] == "form"]
    assert forms and all(i["reached_by"]["form"]["fields"] for i in forms)
    assert {i["reached_by"]["form"]["form_class"] for i in forms} <= {"search", "filter"}


def test_well_behaved_no_traps_no_robots_no_offsite(demo_crawl):
    items, log, stats = demo_crawl
    assert stats["trap_submissions"] == {"login": 0, "contact": 0, "delete": 0}
    assert stats["robots_disallowed_fetches"] == 0
    assert not [i for i in items if "/private" in i["url"]]
    assert all("127.0.0.1" in i["url"] for i in items)
    # the "Log in" and "Delete account" links are not even followed (docs/safety.md)
    assert "hiddenweb/safety/refused/login" in log and "hiddenweb/safety/refused/destructive" in log
    assert "hiddenweb/safety/links_refused" in log


def test_infinite_calendar_is_bounded(demo_crawl):
    items, log, _ = demo_crawl
    calendar = [i for i in items if "/calendar" in i["url"]]
    assert 0 < len(calendar) <= 80, len(calendar)
    assert "hiddenweb/trapguard/templates_trapped" in log


def test_unreachable_seed_gives_a_clear_error_and_an_item(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    items, log, code = crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{port}/",
                             settings={"ROBOTSTXT_OBEY": "0", "RETRY_TIMES": "0"})
    assert "Seed unreachable" in log
    assert len(items) == 1 and items[0]["status"] is None and "refused" in items[0]["error"].lower()


def test_missing_seed_fails_with_usage_message(tmp_path):
    items, log, code = crawl(tmp_path)
    assert code != 0 and "hwdla needs a start URL" in log and items == []
