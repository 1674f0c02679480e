"""Benchmark (and test driver) of the visit store: synthetic page items through the real pipeline.

``python -m hiddenweb.bench.store --db PATH [--items N] [--urls U] [--batch-size B]`` builds a
Scrapy crawler (``scrapy.utils.test.get_crawler``) with :class:`VisitStorePipeline`, feeds it ``N``
items spread over ``U`` URLs and prints items/s, to compare with a crawl's ~200 pages/s (paper 002,
§5: the store is the crawler's ``CRAWLER`` table). ``--progress`` prints ``committed K`` after every
committed batch; the concurrency and SIGKILL tests run this module as real OS processes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from typing import Any

from scrapy.utils.test import get_crawler

from hiddenweb.pipelines.visitstore import VisitStorePipeline


def synthetic_items(n: int, urls: int, seed_time: float = 1.7e9) -> Iterator[dict[str, Any]]:
    """``n`` page items over ``urls`` URLs; every 7th is an error, every 3rd reached by a form."""
    for i in range(n):
        page = i % urls
        form = page % 3 == 0
        yield {
            "url": f"http://bench.invalid/page{page}",
            "final_url": f"http://bench.invalid/page{page}",
            "method": "GET",
            "status": None if i % 7 == 0 else 200,
            "error": "timeout" if i % 7 == 0 else None,
            "depth": page % 5,
            "referrer": "http://bench.invalid/",
            "reached_by": {"kind": "form" if form else "link", "form": None},
            "form_only": form,
            "title": f"Page {page}",
            "fingerprint": f"{page:040x}",
            "fetch_seconds": 0.25 + (i % 4) * 0.25,
            "fetched_at": seed_time + i,
            "content_type": "text/html",
            "cache_control": "max-age=3600" if page % 2 else None,
            "expires": None,
        }


def run(
    db: str,
    items: int,
    urls: int,
    batch_size: int = 100,
    crawl_id: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Feed the items through the pipeline (open, process_item…, close); return stats and rate."""
    crawler = get_crawler(
        settings_dict={
            "HIDDENWEB_STORE_PATH": db,
            # no event loop runs here: flush by size only
            "HIDDENWEB_LAB": {"store_batch_size": batch_size, "store_flush_interval": 0},
        }
    )
    crawler.stats.open_spider()
    pipeline = VisitStorePipeline.from_crawler(crawler)
    if crawl_id:
        pipeline.crawl_id = crawl_id
    if progress:
        flush = pipeline.flush

        def reporting_flush() -> bool:
            ok = flush()
            if ok:
                print(f"committed {crawler.stats.get_value('hiddenweb/store/visits', 0)}")
                sys.stdout.flush()
            return ok

        pipeline.flush = reporting_flush  # type: ignore[method-assign]
    start = time.perf_counter()
    pipeline.open_spider()
    for item in synthetic_items(items, urls):
        pipeline.process_item(item)
    pipeline.close_spider()
    seconds = time.perf_counter() - start
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("hiddenweb/")}
    return {"items": items, "seconds": seconds, "items_per_s": items / seconds, "stats": stats}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hiddenweb.bench.store", description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--urls", type=int, default=2_000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--crawl-id")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.db, args.items, args.urls, args.batch_size, args.crawl_id, args.progress)
    print(
        f"{result['items']} items in {result['seconds']:.3f} s: "
        f"{result['items_per_s']:,.0f} items/s (batch {args.batch_size}, {args.urls} URLs) "
        f"{result['stats']}"
    )
    failed = result["stats"].get("hiddenweb/failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
