"""Throughput of ``hwdla`` against a bare Scrapy spider, same site, same settings, one run.

The site is the proving ground without forms, scripts or traps (``--no-forms --no-js
--no-traps``): plain linked pages, the case where hwdla's extra work (form discovery, page
fingerprints, trap guard, item building) is pure overhead. All crawls write JSON lines.

Four crawls of the same site, one after the other: the bare spider (outside the project, with
Scrapy's own defaults: its scheduler, no hiddenweb component; same concurrency, robots.txt
obeyed), ``hwdla`` with the visit store off, ``hwdla`` on Scrapy's scheduler instead of the DLA
scheduler (store off), and ``hwdla`` with the store on (a fresh store in the run's temporary
directory). Ratios: ``hwdla`` / bare pages per second, DLA / Scrapy's scheduler pages per
second, and the store's share of the wall time. On a shared machine one crawl's pages per second
moves by 5-10 % from run to run, more than the scheduler costs (its own code is about 1.5 % of
the crawl's CPU time in a profile, issue 3), so ``--repeat N`` runs the four crawls N times in
turn and reports each ratio as the median over the rounds of that round's ratio (a round's
crawls run minutes apart at most, so they share the machine's state), with every round's in
``*_rounds``.

``run_browser`` (``--browser``): the site keeps its script-built links (``--no-forms
--no-traps``; about 1 public page in 10 has links only a script adds), crawled twice by
``hwdla``: ``HIDDENWEB_BROWSER=never`` (the plain-HTTP crawl of the same site), then ``auto``
(the pages whose scripts build links rendered again in Chromium), one after the other in one run.
Ratio: auto / never *site pages* per second — distinct pages crawled (items), so a page fetched
over plain HTTP and rendered again counts once (downloads per second are printed too); plus the
share of pages that needed the browser, Chromium's peak RSS and PSS (summed over its processes,
sampled every 0.5 s from ``/proc``: :mod:`hiddenweb.bench.procmem`) and the load average.

Both results carry ``code``: the checkout the crawls ran from and its commit
(:mod:`hiddenweb.bench.revision`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hiddenweb.bench.coverage import COMMON_SETTINGS, PROJECT_DIR, read_items, serve_site
from hiddenweb.bench.procmem import ChromiumRSS
from hiddenweb.bench.revision import code_revision
from hiddenweb.config import setting_args

BARE = Path(__file__).with_name("barespider.py")


def _crawl(cmd: list[str], out: Path, stats: Path | None = None, project: bool = True) -> dict:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    cwd = PROJECT_DIR
    if not project:  # Scrapy's defaults: no scrapy.cfg above cwd, no settings module
        env.pop("SCRAPY_SETTINGS_MODULE")
        cwd = out.parent
    settings = {**COMMON_SETTINGS, "LOG_LEVEL": "WARNING"}
    if stats is not None:
        settings["HIDDENWEB_STATS_FILE"] = str(stats)
    cmd += setting_args(settings)
    started = time.monotonic()
    proc = subprocess.Popen(cmd + ["-O", f"{out}:jsonlines"], cwd=cwd, env=env)
    with ChromiumRSS(proc.pid) as chromium:
        if proc.wait() != 0:
            raise subprocess.CalledProcessError(proc.returncode, cmd)
    wall = time.monotonic() - started
    items = pages = len(read_items(out))
    if stats is not None:  # downloads, emitted or not
        pages = json.loads(stats.read_text()).get("hiddenweb/downloads", pages)
    return {"pages": pages, "wall_seconds": round(wall, 2),
            "pages_per_second": round(pages / wall, 1), "site_pages": items,
            "site_pages_per_second": round(items / wall, 1),
            "chromium_peak_rss_mb": chromium.peak_mb, "chromium_peak_pss_mb": chromium.peak_pss_mb}


def run_browser(pages: int, seed: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="hiddenweb-throughput-"))
    load_before = os.getloadavg()
    with serve_site(pages, seed, ["--no-forms", "--no-traps"]) as url:
        hwdla = [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={url}/",
                 "-s", "HIDDENWEB_STORE_ENABLED=0"]
        runs = {}
        for mode in ("never", "auto"):
            runs[mode] = _crawl([*hwdla, "-s", f"HIDDENWEB_BROWSER={mode}"], tmp / f"{mode}.jl",
                                tmp / f"{mode}.stats.json")
    stats = json.loads((tmp / "auto.stats.json").read_text())
    rendered = stats.get("hiddenweb/browser/pages", 0)
    return {
        "runs": [{"browser": mode, **r} for mode, r in runs.items()],
        "ratio": runs["auto"]["site_pages_per_second"] / runs["never"]["site_pages_per_second"],
        "download_ratio": runs["auto"]["pages_per_second"] / runs["never"]["pages_per_second"],
        "browser_share": rendered / max(1, runs["auto"]["site_pages"]),
        "load_average_before_after": [round(x, 2) for x in (*load_before, *os.getloadavg())],
        "chromium_peak_rss_mb": runs["auto"]["chromium_peak_rss_mb"],
        "chromium_peak_pss_mb": runs["auto"]["chromium_peak_pss_mb"],
        "code": code_revision(PROJECT_DIR),
    }


def run(pages: int, seed: int, repeat: int = 1) -> dict:
    """The four crawls (module docstring), ``repeat`` rounds of them in turn; each ratio is the
    median over the rounds of that round's ratio (``*_rounds``: every round's, in order)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    tmp = Path(tempfile.mkdtemp(prefix="hiddenweb-throughput-"))
    runs: list[dict] = []
    rounds: dict[str, list[float]] = {"ratio": [], "scheduler_ratio": [], "store_overhead": []}
    with serve_site(pages, seed, ["--no-forms", "--no-js", "--no-traps"]) as url:
        scrapy = [sys.executable, "-m", "scrapy"]
        hwdla = [*scrapy, "crawl", "hwdla", "-a", f"seed={url}/"]
        off = ["-s", "HIDDENWEB_STORE_ENABLED=0"]
        for n in range(repeat):
            bare = _crawl([*scrapy, "runspider", str(BARE), "-a", f"seed={url}/",
                           "-s", "ROBOTSTXT_OBEY=1"], tmp / f"bare-{n}.jl", project=False)
            plain = _crawl([*hwdla, *off], tmp / f"hwdla-{n}.jl")
            fifo = _crawl([*hwdla, *off, "-s", "SCHEDULER=scrapy.core.scheduler.Scheduler"],
                          tmp / f"hwdla-scrapy-scheduler-{n}.jl")
            stored = _crawl([*hwdla, "-s", f"HIDDENWEB_STORE_PATH={tmp / f'store-{n}.db'}"],
                            tmp / f"hwdla-store-{n}.jl")
            runs += [{"round": n + 1, "spider": "bare", **bare},
                     {"round": n + 1, "spider": "hwdla (store off)", **plain},
                     {"round": n + 1, "spider": "hwdla, Scrapy's scheduler", **fifo},
                     {"round": n + 1, "spider": "hwdla (store on)", **stored}]
            rounds["ratio"].append(plain["pages_per_second"] / bare["pages_per_second"])
            rounds["scheduler_ratio"].append(plain["pages_per_second"]
                                             / fifo["pages_per_second"])
            rounds["store_overhead"].append(stored["wall_seconds"] / plain["wall_seconds"] - 1)
    return {
        "runs": runs,
        **{key: statistics.median(values) for key, values in rounds.items()},
        **{f"{key}_rounds": [round(v, 4) for v in values] for key, values in rounds.items()},
        "repeat": repeat,
        "code": code_revision(PROJECT_DIR),
    }
