"""``scrapy crawl hwdla`` in a subprocess, the most faithful end-to-end check (ENVIRONMENT.md):
the feed and the final stats (``HIDDENWEB_STATS_FILE``) of one run, for the tests' own wrappers.
Every run turns the visit store off; anything else is the caller's ``settings``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hiddenweb.config import setting_args

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class CrawlRun:
    items: list[dict]
    stats: dict | None  # None when the crawl did not get as far as closing
    stderr: str
    returncode: int


def run_crawl(out_dir: Path, *args: str, settings: dict | None = None,
              timeout: int = 600) -> CrawlRun:
    """Run ``scrapy crawl hwdla *args`` with ``-s`` for each of ``settings``, in ``out_dir``."""
    out, stats = out_dir / "items.jsonl", out_dir / "stats.json"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", *args, "-O", f"{out}:jsonlines",
           "-s", "HIDDENWEB_STORE_ENABLED=0", "-s", f"HIDDENWEB_STATS_FILE={stats}"]
    cmd += setting_args(settings)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return CrawlRun(items, json.loads(stats.read_text()) if stats.exists() else None,
                    proc.stderr, proc.returncode)
