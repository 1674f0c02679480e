"""The visit store in shared mode: the workers of one crawl, on a real ``redis-server``, write
one real SQLite store; a page of the crawl is one visit, however many workers wrote it and
however many times (a page handed back after its worker died is emitted again)."""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.test import get_crawler

from hiddenweb.bench.store import synthetic_items
from hiddenweb.pipelines.visitstore import VisitStorePipeline
from hiddenweb.store import VisitStore


def pipeline(db: Path, **settings) -> VisitStorePipeline:
    crawler = get_crawler(settings_dict={"HIDDENWEB_STORE_PATH": str(db),
                                         "HIDDENWEB_LAB": {"store_flush_interval": 0,
                                                           "store_batch_size": 4},
                                         **settings})
    crawler.stats.open_spider()
    return VisitStorePipeline.from_crawler(crawler)


def figures(db: Path) -> tuple[dict, dict]:
    with VisitStore(db, readonly=True) as store:
        assert store.check() == []
        pages = {r["url"]: (r["frequency"], r["ttl"]) for r in store.rank("frequency")}
        return store.counts(), pages


def test_two_workers_and_a_repeat_count_each_page_once(redis_url, redis_client, tmp_path):
    items = list(synthetic_items(20, urls=20))  # one crawl: each page once
    single = pipeline(tmp_path / "single.db")
    single.open_spider()
    for item in items:
        single.process_item(item)
    single.close_spider()

    shared = {"HIDDENWEB_REDIS_URL": redis_url}
    one, two = (pipeline(tmp_path / "shared.db", **shared) for _ in range(2))
    one.open_spider()
    two.open_spider()
    for item in items[:15]:
        one.process_item(item)
    for item in items[10:]:  # 10..14 again: handed back after `one` read them
        two.process_item(item)
    one.close_spider()
    two.close_spider()

    assert figures(tmp_path / "shared.db") == figures(tmp_path / "single.db")
    assert one.crawl_id == two.crawl_id
    assert sum(w.crawler.stats.get_value("hiddenweb/store/duplicates", 0)
               for w in (one, two)) == 5  # whichever wrote second
    assert figures(tmp_path / "shared.db")[0] == {"visits": 20, "pages": 20, "frequency": 20}


def test_a_second_crawl_of_one_store_counts_again(redis_url, redis_client, tmp_path):
    """A new shared crawl (its keys deleted, or another HIDDENWEB_REDIS_KEY) is a new visit."""
    items = list(synthetic_items(6, urls=6))
    for key in ("first", "second"):
        writer = pipeline(tmp_path / "s.db", HIDDENWEB_REDIS_URL=redis_url,
                          HIDDENWEB_REDIS_KEY=key)
        writer.open_spider()
        for item in items:
            writer.process_item(item)
        writer.close_spider()
    counts, pages = figures(tmp_path / "s.db")
    assert counts == {"visits": 12, "pages": 6, "frequency": 12}
    assert {f for f, _ in pages.values()} == {2}


def test_write_now_outside_shared_mode(tmp_path):
    writer = pipeline(tmp_path / "s.db")
    writer.open_spider()
    assert writer.write_now()  # nothing buffered
    writer.process_item(next(synthetic_items(1, urls=1)))
    assert writer.write_now()
    assert figures(tmp_path / "s.db")[0]["visits"] == 1
    writer.close_spider()
    assert writer.write_now()  # closed: nothing more to write
