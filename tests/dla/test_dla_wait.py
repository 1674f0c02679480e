"""The DLA scheduler's waiting for answers in flight, in real crawls of the demo site (a real
HTTP server on 127.0.0.1, the engine's real downloader and scraper): it holds requests back
only with ``HIDDENWEB_DLA_WAIT`` on, and a crawl that waits ends with the same hidden pages;
on a site without forms (nothing ever pays) it never holds a request back."""

from __future__ import annotations

from pathlib import Path

from crawlrun import ENDED, READ_ALL, _run, hidden_found  # tests/ is on sys.path (rootdir)

from hiddenweb.bench.provingground.server import serve_in_thread
from hiddenweb.bench.provingground.site import SiteModel


def test_a_crawl_waits_only_when_asked_and_finds_the_same_pages(served_site, tmp_path):
    runs = {name: hidden_found(served_site, tmp_path / name,
                               {"HIDDENWEB_DLA_WAIT": wait, "HIDDENWEB_BROWSER": "never",
                                **READ_ALL})
            for name, wait in (("on", 0.5), ("off", 0))}
    (on, on_stats), (off, off_stats) = runs["on"], runs["off"]
    assert on_stats.get("hiddenweb/dla/waits", 0) > 0
    assert "hiddenweb/dla/waits" not in off_stats
    # waiting changes when a request goes, never whether it goes: nothing is left pending
    assert on_stats["hiddenweb/dla/dequeued"] == on_stats["hiddenweb/dla/enqueued"]
    assert on_stats["finish_reason"] == off_stats["finish_reason"] in ENDED  # by itself
    assert len(off) > 50 and set(on) == set(off)


def test_a_site_without_forms_is_read_at_full_concurrency(tmp_path: Path) -> None:
    """Every answer is a penalty: after some 540 of them ``links:public`` scores below the
    heap's rounding (1e-12). The crawl must still never wait (the throughput bench's site,
    smaller: with the scores of requests in flight compared unrounded it went one page at a
    time, half of Scrapy's scheduler's pages per second)."""
    server = serve_in_thread(SiteModel(pages=1600, seed=1, forms=False, js=False, traps=False))
    try:
        run = _run(tmp_path, "-a", f"seed={server.url}/",
                   settings={"HIDDENWEB_DLA_WAIT": 0.5, "HIDDENWEB_BROWSER": "never",
                             "HIDDENWEB_STORE_ENABLED": False,
                             "HIDDENWEB_CLOSE_STALE": 0})  # every page read: no stale close
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stderr[-3000:]
    stats = run.stats or {}
    assert stats["hiddenweb/dla/penalties"] > 600 and "hiddenweb/dla/rewards" not in stats
    assert "hiddenweb/dla/waits" not in stats
    assert stats["hiddenweb/dla/dequeued"] == stats["hiddenweb/dla/enqueued"]
