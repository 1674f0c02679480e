"""The distributed benchmark: K crawler processes share one crawl on Redis (issue 27).

``hiddenweb bench distributed --pages N --seed S --workers K[,K2…] --json`` serves the proving
ground (as ``bench coverage`` does, in a child process) with a latency on every answer
(``--latency``, 0.1 s) and runs, each worker capped at ``--concurrency`` requests in flight
(2: a polite crawler; one worker then uses well under a core, so the ratio measures
coordination, not this machine's cores), without the browser (``HIDDENWEB_BROWSER=never``):

1. one process without Redis (the baseline: ``single_worker_*``);
2. for each K: a ``redis-server`` of its own (127.0.0.1, a free port, a temporary directory, no
   persistence) and K ``scrapy crawl hwdla`` processes with ``HIDDENWEB_REDIS_URL``; with
   ``--kill`` (or for a K written ``Kk``: ``--workers 1,4,4k`` runs 4 workers twice, the second
   time with a kill) and K >= 2, one worker is SIGKILLed once the crawl has served 30 % of the
   baseline's requests (``HIDDENWEB_REDIS_LEASE`` = :data:`LEASE`).

JSON keys (one object per K): ``workers``, ``pages``, ``seed``, ``pages_downloaded`` (requests
the site answered, less each process's own robots.txt), ``duplicate_downloads`` (requests the
site answered more than once, same method, target and body, less the robots.txt of each process,
Scrapy's retries of the site's 500s and the stale rule's rechecks), ``hidden_found``,
``hidden_coverage``, ``downloads_to_90`` (the workers' items merged by time, each counted at the
sum of the workers' downloads then), ``pages_per_second`` (over ``crawl_seconds``: from the
first worker's start to the last one's finish, Scrapy's ``start_time`` and ``finish_time``; the
processes' start-up is left out, as it is the same for one process whatever the crawl),
``wall_seconds`` (the bench's, start-ups included), ``killed`` (the victim's pid or null),
``victim_leases`` (requests it held when killed), ``handed_back`` (requests the others took back
from leases and the dead lane), ``lost_requests_after_kill`` (requests still queued or leased
when the crawl ended, plus victim leases never handed back), ``redis_peak_bytes``
(``used_memory_peak``), ``finish_reasons``, and the baseline's
``single_worker_{pages_downloaded,duplicate_downloads,hidden_coverage,
downloads_to_90,pages_per_second,crawl_seconds,wall_seconds}``. ``--memory N`` measures instead
the Redis memory of N pending requests and N fingerprints (:func:`redis_memory`).

The visit store: the baseline writes ``single.db``, the K workers of a run one store together
(``k<K>.db``, through SQLite's lock, as workers on one host do). ``store_matches_single``: every
page the workers read (their feeds) is in it once, with the frequency and ttl the baseline's
store gives it where both crawls read it, and it is consistent (:func:`compare_stores`).
``store_same_pages``: the two stores hold the same pages; they need not, as the crawls need not
read the same pages (the trap guard is each worker's own): ``store_only_here``,
``store_only_single`` count the difference. Also ``store_pages``, ``store_visits``,
``store_frequency``, ``store_weightage`` (seconds spent: a timing) and the baseline's
``single_worker_store_{pages,visits,frequency,weightage}``; ``store_frequency_differs`` (pages
both read whose frequency or ttl differs), ``store_repeats`` (pages visited more than once),
``store_missing_read_pages`` (pages in a feed and not in the store), ``store_problems``
(:meth:`~hiddenweb.store.VisitStore.check`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hiddenweb.bench.coverage import (
    PROJECT_DIR,
    Truth,
    crawl_command,
    read_items,
    score,
    serve_site,
    server_stats,
)
from hiddenweb.bench.provingground.site import SiteModel
from hiddenweb.bench.realsites.servers import free_port
from hiddenweb.bench.revision import code_revision

#: the victim is killed once the crawl has served this share of the baseline's requests
KILL_AT = 0.3
#: ``HIDDENWEB_REDIS_LEASE`` of the workers: a dead worker's requests are handed back this soon
LEASE = 5.0


@contextmanager
def redis_server(workdir: Path | None = None) -> Iterator[str]:
    """A ``redis-server`` on 127.0.0.1 (free port, temporary directory, no persistence);
    yields its URL; RuntimeError when the binary is missing or does not answer."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found (apt-get install -y redis-server)")
    tmp = Path(tempfile.mkdtemp(prefix="hiddenweb-redis-", dir=workdir))
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp)],
                            stdout=(tmp / "redis.log").open("w"), stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        import redis

        client = redis.Redis.from_url(url)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None:
                    raise RuntimeError(f"redis-server exited; log: {tmp / 'redis.log'}") from None
                time.sleep(0.05)
        else:
            raise RuntimeError("redis-server did not answer within 5 s")
        client.close()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def worker_settings(concurrency: int, redis_url: str | None) -> dict[str, str]:
    settings = {"CONCURRENT_REQUESTS": str(concurrency),
                "CONCURRENT_REQUESTS_PER_DOMAIN": str(concurrency),
                "HIDDENWEB_BROWSER": "never", "LOGSTATS_INTERVAL": "60",
                "HIDDENWEB_REDIS_LEASE": str(LEASE)}
    if redis_url:
        settings["HIDDENWEB_REDIS_URL"] = redis_url
    else:
        del settings["HIDDENWEB_REDIS_LEASE"]
    return settings


def merged(runs: list[list[dict]]) -> list[dict]:
    """The items of several workers in one order (by ``fetched_at``), each with ``downloads``
    = the sum, over the workers, of their downloads at that time."""
    tagged = sorted(((item.get("fetched_at") or 0.0, w, item)
                     for w, items in enumerate(runs) for item in items),
                    key=lambda t: (t[0], t[1]))
    last = [0] * len(runs)
    out = []
    for _, w, item in tagged:
        last[w] = max(last[w], item.get("downloads") or 0)
        out.append({**item, "downloads": sum(last)})
    return out


def crawl_seconds(stats: list[dict]) -> float:
    """From the first worker's ``start_time`` to the last one's ``finish_time`` (Scrapy's
    stats): the crawl itself, without the processes' start-up (4 Scrapy processes starting at
    once on 2 cores take about 10 s before the first request)."""
    from datetime import datetime

    starts = [datetime.fromisoformat(s["start_time"]) for s in stats if "start_time" in s]
    ends = [datetime.fromisoformat(s["finish_time"]) for s in stats if "finish_time" in s]
    return (max(ends) - min(starts)).total_seconds() if starts and ends else 0.0


def site_counts(base_url: str, processes: int, retries: int = 0) -> tuple[int, int]:
    """(downloads, duplicate downloads) from the site's side: each process also fetches its own
    robots.txt besides the crawl's, and ``retries`` (Scrapy's retries of the site's deliberate
    500s, and the stale rule's rechecks: pages read again on purpose, ``hiddenweb.stale``) are
    no duplicates of the crawl."""
    stats = server_stats(base_url)
    requests, distinct = stats["requests"], stats["distinct_requests"]
    return requests - processes, requests - distinct - processes - retries


def store_figures(path: Path) -> dict[str, Any]:
    """The store's counts, its total weightage and, per page key, ``(frequency, ttl)``."""
    from hiddenweb.store import VisitStore

    with VisitStore(path, readonly=True) as store:
        pages = {key: (frequency, ttl) for key, frequency, ttl in store.conn.execute(
            "SELECT key, frequency, ttl FROM pages")}
        weightage = store.conn.execute("SELECT coalesce(sum(weightage), 0) FROM pages"
                                       ).fetchone()[0]
        return {**store.counts(), "weightage": round(weightage, 2), "by_key": pages,
                "problems": store.check()}


def compare_stores(single: dict[str, Any], here: dict[str, Any], read: set[str]
                   ) -> dict[str, Any]:
    """The K workers' store (``here``, :func:`store_figures`) against the single process's:
    ``store_matches_single`` when every page the workers read (``read``: their feeds' page
    keys) is in it once, with the frequency and ttl the single process's store gives it where
    both crawls read it, and it is consistent (:meth:`VisitStore.check`). Which pages the two
    crawls read is the crawl's affair (``store_same_pages``; ``store_only_here`` and
    ``store_only_single`` count the difference)."""
    a, b = single["by_key"], here["by_key"]
    differs = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only_here, only_single = sorted(b.keys() - a.keys()), sorted(a.keys() - b.keys())
    repeats = sum(1 for f, _ in b.values() if f > 1)
    single_repeats = sum(1 for f, _ in a.values() if f > 1)
    missing = read - b.keys()
    return {"store_matches_single": not (differs or missing or here["problems"])
            and repeats == single_repeats,
            "store_same_pages": not (only_here or only_single),
            "store_pages": here["pages"], "store_visits": here["visits"],
            "store_frequency": here["frequency"], "store_weightage": here["weightage"],
            "store_only_here": len(only_here), "store_only_single": len(only_single),
            "store_frequency_differs": len(differs), "store_repeats": repeats,
            "store_missing_read_pages": len(missing), "store_problems": len(here["problems"])}


def feed_keys(items: list[dict]) -> set[str]:
    """The visit store's page keys of feed items."""
    from hiddenweb.store import visit_from_item

    return {visit_from_item(item, "").key for item in items if item.get("url")}


def fresh_store(path: Path) -> Path:
    """``path``, its SQLite files of an earlier run (a reused ``--workdir``) deleted."""
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        path.with_name(name).unlink(missing_ok=True)
    return path


def _start(cmd: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    with log.open("w") as fh:
        return subprocess.Popen(cmd, cwd=PROJECT_DIR, env=env, stdout=fh,
                                stderr=subprocess.STDOUT)


def _reset(base_url: str) -> None:
    import urllib.request

    req = urllib.request.Request(f"{base_url}/__hw/reset", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10):
        pass


def baseline(base_url: str, site: SiteModel, truth: Truth, tmp: Path,
             concurrency: int) -> dict[str, Any]:
    """One process, no Redis."""
    _reset(base_url)
    out = tmp / "single.jsonl"
    fresh_store(out.with_suffix(".db"))
    started = time.monotonic()
    proc = _start(crawl_command("hwdla", base_url, out, 0, None,
                                worker_settings(concurrency, None)), tmp / "single.log")
    proc.wait()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"single-process crawl failed; log: {tmp / 'single.log'}")
    stats = json.loads(out.with_suffix(".stats.json").read_text())
    downloads, duplicates = site_counts(base_url, 1, stats.get("retry/count", 0)
                                        + stats.get("hiddenweb/stale/rechecks", 0))
    scored = score(site, truth, read_items(out))
    seconds = crawl_seconds([stats])
    return {"single_worker_pages_downloaded": downloads,
            "single_worker_duplicate_downloads": duplicates,
            "single_worker_hidden_coverage": scored["hidden_coverage"],
            "single_worker_downloads_to_90": scored["downloads_to_90"],
            "single_worker_pages_per_second": round(downloads / seconds, 2) if seconds else None,
            "single_worker_crawl_seconds": round(seconds, 2),
            "single_worker_wall_seconds": round(wall, 2),
            "single_worker_served": stats.get("hiddenweb/dla/dequeued", downloads),
            "single_store": store_figures(out.with_suffix(".db"))}


def distributed(base_url: str, site: SiteModel, truth: Truth, tmp: Path, workers: int,
                concurrency: int, kill_after: int | None) -> dict[str, Any]:
    """K workers on a fresh Redis, one visit store; one SIGKILLed after ``kill_after``
    requests served."""
    import redis

    _reset(base_url)
    with redis_server(tmp) as url:
        client = redis.Redis.from_url(url)
        prefix = "hw:{hwdla}:"
        run = f"k{workers}{'-kill' if kill_after is not None else ''}"
        outs = [tmp / f"{run}-worker{i}.jsonl" for i in range(workers)]
        db = fresh_store(tmp / f"{run}.db")
        started = time.monotonic()
        procs = [_start(crawl_command("hwdla", base_url, out, 0, None,
                                      {**worker_settings(concurrency, url),
                                       "HIDDENWEB_STORE_PATH": str(db)}),
                        out.with_suffix(".log")) for out in outs]
        killed, victim_leases, peak = None, 0, 0
        while any(p.poll() is None for p in procs):
            if kill_after is not None and killed is None:
                served = int(client.hget(prefix + "counts", "served") or 0)
                if served >= kill_after:
                    victim = procs[0]
                    victim.send_signal(signal.SIGKILL)
                    killed = victim.pid
                    victim_leases = sum(1 for info in client.hvals(prefix + "lease:info")
                                        if f":{victim.pid}:" in info.decode())
            time.sleep(0.05)
        wall = time.monotonic() - started
        counts = {k.decode(): int(v) for k, v in client.hgetall(prefix + "counts").items()}
        left = sum(int(v) for v in client.hvals(prefix + "pending")) \
            + int(client.zcard(prefix + "leases"))
        peak = int(client.info("memory")["used_memory_peak"])
        client.close()
    failed = [p.pid for p in procs if p.returncode != 0 and p.pid != killed]
    if failed:
        raise RuntimeError(f"workers {failed} failed; logs in {tmp}")
    all_stats = [json.loads(out.with_suffix(".stats.json").read_text()) for out in outs
                 if out.with_suffix(".stats.json").exists()]  # not the killed worker's
    reasons = [stats.get("finish_reason") for stats in all_stats]
    retries = sum(stats.get("retry/count", 0) + stats.get("hiddenweb/stale/rechecks", 0)
                  for stats in all_stats)  # read again on purpose: no duplicates
    seconds = crawl_seconds(all_stats)
    downloads, duplicates = site_counts(base_url, workers, retries)
    items = [read_items(out) for out in outs]
    scored = score(site, truth, merged(items), downloads)
    store = store_figures(db)
    handed = counts.get("handed_back", 0)
    return {"workers": workers, "pages_downloaded": downloads,
            "duplicate_downloads": duplicates, "hidden_found": scored["hidden_found"],
            "hidden_total": scored["hidden_total"],
            "hidden_coverage": scored["hidden_coverage"],
            "downloads_to_90": scored["downloads_to_90"],
            "pages_per_second": round(downloads / seconds, 2) if seconds else None,
            "crawl_seconds": round(seconds, 2), "wall_seconds": round(wall, 2),
            "killed": killed, "victim_leases": victim_leases, "handed_back": handed,
            "lost_requests_after_kill": left + max(0, victim_leases - handed),
            "redis_peak_bytes": peak, "finish_reasons": reasons,
            "requests_served": counts.get("served", 0), "store": store,
            "read": feed_keys([item for run in items for item in run])}


def run(pages: int, seed: int, workers: list[int], latency: float = 0.1,
        concurrency: int = 2, kill: bool | list[bool] = False,
        workdir: Path | None = None) -> list[dict[str, Any]]:
    """The baseline, then each K of ``workers`` (module docstring); one dict per K. ``kill``:
    for every K, or one flag per K of ``workers``."""
    kills = kill if isinstance(kill, list) else [kill] * len(workers)
    site = SiteModel(pages=pages, seed=seed)
    truth = Truth.of(site)
    tmp = Path(workdir or tempfile.mkdtemp(prefix="hiddenweb-distributed-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results = []
    with serve_site(pages, seed, ["--latency", str(latency)]) as base_url:
        base = baseline(base_url, site, truth, tmp, concurrency)
        for k, kill_k in zip(workers, kills, strict=True):
            kill_after = int(KILL_AT * base["single_worker_served"]) if kill_k and k > 1 else None
            result = distributed(base_url, site, truth, tmp, k, concurrency, kill_after)
            single, here = base["single_store"], result.pop("store")
            result.update(compare_stores(single, here, result.pop("read")))
            result.update({f"single_worker_store_{key}": single[key]
                           for key in ("pages", "visits", "frequency", "weightage")})
            results.append({"pages": pages, "seed": seed, "latency": latency,
                            "concurrency": concurrency, **result,
                            **{key: v for key, v in base.items()
                               if key not in ("single_worker_served", "single_store")},
                            "workdir": str(tmp), "code": code_revision(PROJECT_DIR)})
    return results


def sample_request(i: int) -> Any:
    """A request as the spider makes them on a large site: a link (odd ``i``) or a form's
    submission (even), with the meta the scheduler and the forms add (as captured from a
    proving-ground crawl's queues: 530-950 bytes pickled)."""
    from scrapy import Request

    base = "https://catalogue.example.org"
    page = f"{base}/c/{i // 37}/items?page={i % 37}"
    headers = {"Referer": page}
    if i % 2:
        kinds = [f"url:catalogue.example.org/item/{{n}}/{'abcdefgh'[i % 8]}", "links:public"]
        meta = {"hiddenweb_reached_by": {"kind": "link", "form": None},
                "hiddenweb_form_only": False, "hiddenweb_source": "link",
                "hiddenweb_action": {"kind": "link", "page": page, "label": f"Item {i}",
                                     "form": None},
                "depth": 4, "hiddenweb_dla_kinds": kinds}
        return Request(f"{base}/item/{i}/{'abcdefgh'[i % 8]}", headers=headers, meta=meta)
    sig = f"GET /c/{i % 50}/search [q,region]"
    fields = {"q": f"word{i % 5000}", "region": f"r{i % 12}"}
    kinds = [f"form:{sig}", f"fv:q=word{i % 5000}", f"fv:region=r{i % 12}", "word:search"]
    meta = {"hiddenweb_reached_by": {"kind": "form", "form": {
                "action": f"{base}/c/{i % 50}/search", "method": "GET", "fields": fields,
                "form_class": "search", "signature": sig, "redacted": ["csrf"]}},
            "hiddenweb_form_only": True,
            "hiddenweb_action": {"kind": "form", "page": page, "label": "Search",
                                 "form": {"signature": sig, "fields": fields}},
            "hiddenweb_explore": sig, "hiddenweb_explore_data": fields,
            "hiddenweb_origin": f"GET /c/{i % 50}/search", "depth": 3,
            "hiddenweb_dla_kinds": kinds}
    return Request(f"{base}/c/{i % 50}/search?q={fields['q']}&region={fields['region']}"
                   f"&csrf={i:016x}", headers=headers, meta=meta)


def redis_memory(n: int = 100_000) -> dict[str, Any]:
    """Redis memory of ``n`` pending requests (:func:`sample_request`, in the shared frontier,
    half in a worker's lane), and of ``n`` request and ``n`` page-content fingerprints; bytes
    per item and extrapolated to 10**6; and the rate of the enqueue and pop scripts from one
    client (round trips on loopback included)."""
    import pickle

    import redis

    from hiddenweb.dla.kinds import parent_kind
    from hiddenweb.dla.redis_frontier import SHARED, RedisFrontier

    with redis_server() as url:
        client = redis.Redis.from_url(url)
        frontier = RedisFrontier(client, "hw:{mem}:", "w1", 30.0)

        def used() -> int:
            return int(client.info("memory")["used_memory"])

        start = used()
        sizes = 0
        prepared = []
        for i in range(n):
            request = sample_request(i)
            payload = pickle.dumps(request.to_dict(), protocol=4)
            sizes += len(payload)
            ks = request.meta["hiddenweb_dla_kinds"]
            prepared.append((payload, ks, {k: p for k in ks if (p := parent_kind(k))}))
        began = time.perf_counter()
        for i, (payload, ks, parents) in enumerate(prepared):
            frontier.enqueue(SHARED if i % 2 else "w1", payload, ks, parents, {}, False, None)
        enqueue_rate = n / (time.perf_counter() - began)
        requests_bytes = used() - start
        start = used()
        for key in ("dupefilter", "seen"):
            pipe = client.pipeline(transaction=False)
            for i in range(n):
                pipe.sadd(f"hw:{{mem}}:{key}", hashlib.sha1(f"{key}{i}".encode()).hexdigest())
                if i % 10_000 == 9_999:
                    pipe.execute()
            pipe.execute()
        fingerprint_bytes = used() - start
        groups = sum(int(v) for v in [client.zcard("hw:{mem}:frontier:*"),
                                      client.zcard("hw:{mem}:frontier:w1")])
        pops = min(n, 10_000)  # served and leased, one script each, as a worker does
        began = time.perf_counter()
        for _ in range(pops):
            frontier.pop(["w1", SHARED], [], False, 0.0, 0.0, 0)
        pop_rate = pops / (time.perf_counter() - began)
        client.close()
    scale = 1_000_000 / n
    return {"measured_at": n, "payload_bytes_mean": round(sizes / n, 1), "groups": groups,
            "pending_requests_bytes": requests_bytes,
            "bytes_per_pending_request": round(requests_bytes / n, 1),
            "pending_requests_bytes_per_million": round(requests_bytes * scale),
            "fingerprints_bytes": fingerprint_bytes,
            "bytes_per_fingerprint": round(fingerprint_bytes / (2 * n), 1),
            "fingerprints_bytes_per_million": round(fingerprint_bytes * scale / 2),
            "enqueues_per_second": round(enqueue_rate), "pops_per_second": round(pop_rate)}
