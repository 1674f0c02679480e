"""Throughput of ``hwdla`` against a bare Scrapy spider, same site, same settings, one run.

The site is the proving ground without forms, scripts or traps (``--no-forms --no-js
--no-traps``): plain linked pages, the case where hwdla's extra work (form discovery, page
fingerprints, trap guard, item building) is pure overhead. All crawls write JSON lines.

Three crawls of the same site, one after the other: the bare spider, ``hwdla`` with the visit
store off, ``hwdla`` with it on (a fresh store in the run's temporary directory). Ratios:
``hwdla`` (store off) / bare pages per second, and the store's share of the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hiddenweb.bench.coverage import COMMON_SETTINGS, PROJECT_DIR, read_items, serve_site

BARE = Path(__file__).with_name("barespider.py")


def _crawl(cmd: list[str], out: Path) -> dict:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    settings = {**COMMON_SETTINGS, "LOG_LEVEL": "WARNING"}
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    started = time.monotonic()
    subprocess.run(cmd + ["-O", f"{out}:jsonlines"], cwd=PROJECT_DIR, env=env, check=True)
    wall = time.monotonic() - started
    pages = len(read_items(out))
    return {"pages": pages, "wall_seconds": round(wall, 2),
            "pages_per_second": round(pages / wall, 1)}


def run(pages: int, seed: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="hiddenweb-throughput-"))
    with serve_site(pages, seed, ["--no-forms", "--no-js", "--no-traps"]) as url:
        scrapy = [sys.executable, "-m", "scrapy"]
        hwdla = [*scrapy, "crawl", "hwdla", "-a", f"seed={url}/"]
        bare = _crawl([*scrapy, "runspider", str(BARE), "-a", f"seed={url}/"], tmp / "bare.jl")
        plain = _crawl([*hwdla, "-s", "HIDDENWEB_STORE_ENABLED=0"], tmp / "hwdla.jl")
        stored = _crawl([*hwdla, "-s", f"HIDDENWEB_STORE_PATH={tmp / 'store.db'}"],
                        tmp / "hwdla-store.jl")
    return {
        "runs": [{"spider": "bare", **bare}, {"spider": "hwdla (store off)", **plain},
                 {"spider": "hwdla (store on)", **stored}],
        "ratio": plain["pages_per_second"] / bare["pages_per_second"],
        "store_overhead": stored["wall_seconds"] / plain["wall_seconds"] - 1,
    }
