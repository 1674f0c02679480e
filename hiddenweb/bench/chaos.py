"""``hiddenweb bench chaos``: a JOBDIR crawl SIGKILLed at K seeded random moments and resumed
each time, against an uninterrupted crawl of the same generated site.

Serves the proving ground's site (``--pages``, ``--seed``) in a child process; crawls it once with
a fresh ``JOBDIR`` to the end; then crawls it again with another fresh ``JOBDIR``, SIGKILLs the
crawl process (``kill -9``) at ``--kills`` moments and resumes it (same ``JOBDIR``, feed appended
with ``-o``) after each, until a run ends by itself. The moments are the server's request count
(``GET /__hw/stats``: the judge outside the crawler) crossing thresholds drawn with
``random.Random(--seed)`` over the first half of the uninterrupted run's request count, each
plus a random 0-0.3 s, so kills land during downloads, parsing, item writes and form feedback
alike. Both runs keep a visit store.

Keys of ``--json``: ``kills`` (kills done), ``lost_hidden_pages`` (hidden pages the uninterrupted
run found and the killed one did not), ``gained_hidden_pages``, ``duplicate_items`` (items of the
killed run's feed beyond the first with the same method, URL and form fields, minus the
uninterrupted run's own: what resuming emitted twice), ``duplicate_downloads`` (requests the
server answered more than once — same method, target and body — in the killed run, minus the
uninterrupted run's own: the re-downloads the kills cost, robots.txt once per resume
included), ``duplicate_examples`` (the killed run's keys emitted more than once, with their items),
``store_integrity`` (SQLite ``integrity_check`` of the killed run's visit store),
``hidden_found`` / ``hidden_total`` / ``hidden_coverage`` of both runs (``uninterrupted``,
``killed``), the killed run's exit codes, finish reason and segment walls, and ``code``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hiddenweb.bench.coverage import (
    PROJECT_DIR,
    Truth,
    read_items,
    resolve_item,
    serve_site,
    server_stats,
)
from hiddenweb.bench.provingground.site import SiteModel
from hiddenweb.bench.revision import code_revision
from hiddenweb.config import setting_args

SETTINGS = {
    "CONCURRENT_REQUESTS": "16", "CONCURRENT_REQUESTS_PER_DOMAIN": "16", "LOG_LEVEL": "INFO",
    "HIDDENWEB_KEEP_TOKENS": "1",  # items are scored against the truth (it checks CSRF tokens)
    # the crawl-level stopping rule keeps its words in memory, not in the JOBDIR: a resumed
    # crawl's rule starts over and ends elsewhere; both crawls run to their end to be compared
    "HIDDENWEB_CLOSE_STALE": "0",
}


def crawl_cmd(url: str, work: Path, browser: bool) -> list[str]:
    settings = {**SETTINGS, "JOBDIR": str(work / "job"),
                "HIDDENWEB_STORE_PATH": str(work / "visits.db"),
                "HIDDENWEB_STATS_FILE": str(work / "stats.json"),
                "HIDDENWEB_BROWSER": "auto" if browser else "never"}
    return [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={url}/",
            "-o", f"{work / 'items.jsonl'}:jsonlines", *setting_args(settings)]


def run_segment(cmd: list[str], log: Path, url: str, kill_at: int | None, rng: random.Random,
                bar: Any = None) -> dict[str, Any]:
    """One crawl process; SIGKILLed once the server has answered ``kill_at`` requests (None:
    runs to its end)."""
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    started = time.monotonic()
    with log.open("a") as fh:
        proc = subprocess.Popen(cmd, cwd=PROJECT_DIR, env=env, stdout=fh, stderr=subprocess.STDOUT)
        killed = False
        try:
            while proc.poll() is None:
                served = server_stats(url)["requests"]
                if bar is not None:
                    bar.n = served
                    bar.refresh()
                if kill_at is not None and served >= kill_at:
                    time.sleep(rng.uniform(0.0, 0.3))
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGKILL)
                        killed = True
                    proc.wait()
                    break
                time.sleep(0.05)
            proc.wait(timeout=3600)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {"killed": killed, "returncode": proc.returncode,
            "wall": round(time.monotonic() - started, 1)}


def item_key(site: SiteModel, item: dict) -> str:
    key = resolve_item(site, item) if item.get("status") == 200 else None
    if key is not None:
        return key
    form = (item.get("reached_by") or {}).get("form") or {}
    return json.dumps([item.get("method"), item.get("url"), form.get("fields")], sort_keys=True)


def duplicates(site: SiteModel, items: list[dict]) -> int:
    counts = Counter(item_key(site, i) for i in items)
    return sum(n - 1 for n in counts.values() if n > 1)


def duplicate_examples(site: SiteModel, items: list[dict], limit: int = 5) -> list[dict]:
    """Up to ``limit`` keys emitted more than once, each with its items' method, URL, status,
    form fields and download number: what a ``duplicate_items`` failure is read from."""
    by_key: dict[str, list[dict]] = {}
    for item in items:
        by_key.setdefault(item_key(site, item), []).append(item)
    return [{"key": key, "items": [
        {"method": i.get("method"), "url": i.get("url"), "final_url": i.get("final_url"),
         "status": i.get("status"), "downloads": i.get("downloads"), "source": i.get("source"),
         "fingerprint": i.get("fingerprint"), "referrer": i.get("referrer"),
         "fields": ((i.get("reached_by") or {}).get("form") or {}).get("fields")}
        for i in group]} for key, group in by_key.items() if len(group) > 1][:limit]


def hidden_of(site: SiteModel, truth: Truth, items: list[dict], browser: bool) -> set[str]:
    keys = {resolve_item(site, i) for i in items if i.get("status") == 200}
    return keys & (truth.hidden | truth.hidden_browser if browser else truth.hidden)


def integrity(path: Path) -> str:
    if not path.exists():
        return "missing"
    try:
        with sqlite3.connect(path) as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    except sqlite3.Error as exc:
        return f"error: {exc}"


def served_requests(url: str) -> tuple[int, int]:
    """(requests, repeats): what the site's server answered, and how many of those it had
    answered before."""
    served = server_stats(url)
    return served["requests"], served["requests"] - served["distinct_requests"]


def run(pages: int, kills: int, seed: int = 1, browser: bool = False, progress: bool = True,
        workdir: Path | None = None) -> dict[str, Any]:
    site = SiteModel(pages=pages, seed=seed)
    truth = Truth.of(site)
    tmp = Path(workdir or tempfile.mkdtemp(prefix="hiddenweb-chaos-"))
    rng = random.Random(seed)
    bar = None
    with serve_site(pages, seed) as url:
        base_dir, killed_dir = tmp / "uninterrupted", tmp / "killed"
        base_dir.mkdir(parents=True, exist_ok=True)
        killed_dir.mkdir(parents=True, exist_ok=True)
        if progress:
            from tqdm import tqdm

            bar = tqdm(desc="uninterrupted", unit="req", file=sys.stderr, dynamic_ncols=True)
        base = run_segment(crawl_cmd(url, base_dir, browser), base_dir / "crawl.log", url, None,
                           rng, bar)
        base_requests, base_repeats = served_requests(url)
        if bar is not None:
            bar.close()
        base_items = read_items(base_dir / "items.jsonl")
        # over the first half (70 % let a CI run's killed crawl end before its second moment):
        # the killed run, which learns less before each kill, may need
        # fewer requests in all (a kill later than its end would not happen)
        moments = sorted(rng.randrange(1, max(2, int(0.5 * base_requests)))
                         for _ in range(kills))
        urlopen_reset(url)
        if progress:
            bar = tqdm(desc=f"killed ({kills} kills)", unit="req", file=sys.stderr,
                       dynamic_ncols=True)
        segments: list[dict[str, Any]] = []
        cmd = crawl_cmd(url, killed_dir, browser)
        while True:
            done = sum(s["killed"] for s in segments)
            at = None
            if done < kills:  # at least one request of its own before each kill
                at = max(moments[done], server_stats(url)["requests"] + 1)
            if bar is not None:
                bar.set_postfix(kills=done, refresh=False)
            segment = run_segment(cmd, killed_dir / "crawl.log", url, at, rng, bar)
            segments.append(segment)
            if not segment["killed"]:
                break
        killed_requests, killed_repeats = served_requests(url)
        if bar is not None:
            bar.close()
    killed_items = read_items(killed_dir / "items.jsonl")
    base_hidden = hidden_of(site, truth, base_items, browser)
    killed_hidden = hidden_of(site, truth, killed_items, browser)
    total = len(truth.hidden | truth.hidden_browser if browser else truth.hidden)
    stats = json.loads((killed_dir / "stats.json").read_text()) \
        if (killed_dir / "stats.json").exists() else {}
    return {
        "pages": pages, "seed": seed, "browser": browser,
        "kills": sum(s["killed"] for s in segments),
        "lost_hidden_pages": len(base_hidden - killed_hidden),
        "gained_hidden_pages": len(killed_hidden - base_hidden),
        "duplicate_items": duplicates(site, killed_items) - duplicates(site, base_items),
        "duplicate_downloads": killed_repeats - base_repeats,
        "store_integrity": integrity(killed_dir / "visits.db"),
        "hidden_total": total,
        "uninterrupted": {"hidden_found": len(base_hidden),
                          "hidden_coverage": round(len(base_hidden) / total, 4) if total else None,
                          "items": len(base_items), "requests": base_requests,
                          "wall": base["wall"], "returncode": base["returncode"],
                          "store_integrity": integrity(base_dir / "visits.db")},
        "killed": {"hidden_found": len(killed_hidden),
                   "hidden_coverage": round(len(killed_hidden) / total, 4) if total else None,
                   "items": len(killed_items), "requests": killed_requests,
                   "walls": [s["wall"] for s in segments],
                   "returncodes": [s["returncode"] for s in segments],
                   "finish_reason": stats.get("finish_reason")},
        "lost_examples": sorted(base_hidden - killed_hidden)[:10],
        "duplicate_examples": duplicate_examples(site, killed_items),
        "workdir": str(tmp),
        "code": code_revision(PROJECT_DIR),
    }


def urlopen_reset(url: str) -> None:
    import urllib.request

    request = urllib.request.Request(f"{url}/__hw/reset", data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass
