"""Microbenchmark: scheduling cost per request of the DLA scheduler vs Scrapy's default one.

Run: ``python -m hiddenweb.bench.microbench [--sizes 10000 100000 1000000] [--ops 20000]
[--no-memory]``.

For each size ``N`` the scheduler is filled with ``N`` real :class:`scrapy.Request` objects
(pages of 16 links over 5 URL templates and 4 form submissions drawn from 50 LVS values, with
``hiddenweb_action`` meta), then ``--ops`` steady-state steps are timed, each one
``enqueue_request`` + ``next_request`` + one feedback (``learn``) for the request dequeued 16
steps earlier (responses come back late and out of order, as with ``CONCURRENT_REQUESTS=16``),
so ``N`` requests stay pending; the best of 10 chunks is reported (robust to a busy machine).
Memory: ``tracemalloc`` during the fill, divided by ``N``
(Request objects, their meta and the dupefilter's fingerprints included, for both schedulers),
and the size of one page automaton with 20 actions. Scrapy's ``Scheduler`` (default memory
queues, ``ScrapyPriorityQueue``) runs the same steps without feedback; the DLA also runs with
lab knob ``dla_transfer`` off (a heap group per page: the heap grows with pending).
"""

from __future__ import annotations

import argparse
import gc
import random
import time
import tracemalloc
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.utils.test import get_crawler
from tqdm import tqdm

from hiddenweb.dla.automaton import Automaton
from hiddenweb.dla.scheduler import DLAScheduler

SITE = "http://bench.example"
LAG = 16
CHUNKS = 10  # the steady state is timed in chunks; the best chunk is reported (shared machine)
_VALUES = [f"value{i}" for i in range(50)]


class _BenchSpider(Spider):
    name = "dla-microbench"


def requests(rng: random.Random, start_page: int = 0) -> Iterator[Request]:
    """An endless stream of requests, 20 per page: 16 links and 4 form submissions."""
    page = start_page
    while True:
        url = f"{SITE}/page/{page}"
        for j in range(16):
            action = {"kind": "link", "page": url, "label": f"Section {'abcde'[j % 5]} more",
                      "form": None}
            yield Request(f"{SITE}/{'abcde'[j % 5]}/{page}-{j}",
                          meta={"hiddenweb_action": action})
        for value in rng.sample(_VALUES, 4):
            action = {"kind": "form", "page": url, "label": "Search",
                      "form": {"signature": "bench.example/search|q", "fields": {"q": value}}}
            yield Request(f"{SITE}/search?q={value}&from={page}",
                          meta={"hiddenweb_action": action})
        page += 1


def _scheduler(kind: str) -> Any:
    # DownloaderAwarePriorityQueue (Scrapy's default) needs a running engine: the baseline uses
    # ScrapyPriorityQueue over the default LIFO memory queues (one queue: all priorities are 0)
    crawler = get_crawler(_BenchSpider, {
        "LOG_ENABLED": False, "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
        "HIDDENWEB_LAB": {"dla_transfer": kind != "dla-off"}})
    crawler.spider = crawler._create_spider()
    scheduler = (Scheduler if kind == "scrapy" else DLAScheduler).from_crawler(crawler)
    scheduler.open(crawler.spider)
    return scheduler


def _learner(scheduler: Any, rng: random.Random) -> Callable[[Request], None]:
    if not isinstance(scheduler, DLAScheduler):
        return lambda request: None

    def learn(request: Request) -> None:
        is_form = request.meta["hiddenweb_action"]["kind"] == "form"
        outcome = "reward" if is_form and rng.random() < 0.3 else "penalty"
        scheduler.learn(request.meta, request.url, outcome)

    return learn


def measure(kind: str, size: int, ops: int, bar: tqdm, memory: bool = True) -> dict[str, float]:
    rng = random.Random(size)
    stream = requests(rng)
    gc.collect()
    if memory:
        tracemalloc.start()
    scheduler = _scheduler(kind)
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(size):
        scheduler.enqueue_request(next(stream))
        bar.update(1)
    mem = tracemalloc.get_traced_memory()[0] - base if memory else float("nan")
    tracemalloc.stop()
    steady = [next(stream) for _ in range(ops)]
    learn = _learner(scheduler, rng)
    inflight: deque[Request] = deque()
    gc.collect()
    chunk = max(1, ops // CHUNKS)
    best = float("inf")
    for start in range(0, ops, chunk):
        part = steady[start:start + chunk]
        t0 = time.perf_counter()
        for request in part:
            scheduler.enqueue_request(request)
            inflight.append(scheduler.next_request())
            if len(inflight) > LAG:
                learn(inflight.popleft())
        best = min(best, (time.perf_counter() - t0) / len(part))
        bar.update(len(part))
    assert len(scheduler) == size
    return {"us": best * 1e6, "bytes": mem / size,
            "automata": len(getattr(scheduler, "pages", ())),
            "kinds": len(getattr(scheduler, "kind_la", ()))}


def automaton_bytes(count: int = 10_000, actions: int = 20) -> float:
    keys = [f"url:bench.example/{i}/{{n}}-{{n}}" for i in range(actions)]
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    automata = []
    for _ in range(count):
        la = Automaton(b=0.01)
        for key in keys:
            la.add_action(key)
        automata.append(la)
    mem = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return mem / count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--no-memory", action="store_true",
                        help="skip tracemalloc (5-10x faster fill; bytes columns show nan)")
    args = parser.parse_args(argv)
    total = 3 * sum(args.sizes) + 3 * len(args.sizes) * args.ops
    rows = []
    with tqdm(total=total, unit="req", desc="microbench") as bar:
        for size in args.sizes:
            dla = measure("dla", size, args.ops, bar, not args.no_memory)
            off = measure("dla-off", size, args.ops, bar, False)
            scrapy = measure("scrapy", size, args.ops, bar, not args.no_memory)
            rows.append((size, dla, off, scrapy))
    per_la = float("nan") if args.no_memory else automaton_bytes()
    print()
    print("| pending | DLA µs/request | DLA transfer-off µs/request | Scrapy µs/request | "
          "DLA bytes/pending | Scrapy bytes/pending | DLA automata | DLA kinds |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, dla, off, scrapy in rows:
        print(f"| {size:,} | {dla['us']:.1f} | {off['us']:.1f} | {scrapy['us']:.1f} | "
              f"{dla['bytes']:,.0f} | {scrapy['bytes']:,.0f} | {dla['automata']:,} | "
              f"{dla['kinds']:,} |")
    print(f"\nbytes per page automaton (20 actions, keys not counted): {per_la:,.0f}")
    print(f"µs/request = enqueue_request + next_request (+ one feedback for DLA, lag {LAG}); "
          f"best of {CHUNKS} chunks of {args.ops // CHUNKS:,} steady-state steps")


if __name__ == "__main__":
    main()
