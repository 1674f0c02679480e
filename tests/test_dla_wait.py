"""The DLA scheduler's waiting for answers in flight, in real crawls of the demo site (a real
HTTP server on 127.0.0.1, the engine's real downloader and scraper): it holds requests back
only with ``HIDDENWEB_DLA_WAIT`` on, and a crawl that waits ends with the same hidden pages."""

from __future__ import annotations

from test_spider_e2e import hidden_found  # tests/ is on sys.path (rootdir)


def test_a_crawl_waits_only_when_asked_and_finds_the_same_pages(served_site, tmp_path):
    runs = {name: hidden_found(served_site, tmp_path / name,
                               {"HIDDENWEB_DLA_WAIT": wait, "HIDDENWEB_BROWSER": "never"})
            for name, wait in (("on", 0.5), ("off", 0))}
    (on, on_stats), (off, off_stats) = runs["on"], runs["off"]
    assert on_stats.get("hiddenweb/dla/waits", 0) > 0
    assert "hiddenweb/dla/waits" not in off_stats
    # waiting changes when a request goes, never whether it goes: nothing is left pending
    assert on_stats["hiddenweb/dla/dequeued"] == on_stats["hiddenweb/dla/enqueued"]
    assert on_stats["finish_reason"] == off_stats["finish_reason"] == "finished"
    assert len(off) > 50 and set(on) == set(off)
