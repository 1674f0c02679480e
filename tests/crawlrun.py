"""``scrapy crawl hwdla`` in a subprocess, the most faithful end-to-end check (ENVIRONMENT.md):
the feed and the final stats (``HIDDENWEB_STATS_FILE``) of one run, for the tests' own wrappers.
Every run turns the visit store off and keeps tokens on items (``HIDDENWEB_KEEP_TOKENS``: the
tests resolve POST items against a proving ground's truth, which checks their CSRF tokens);
anything else is the caller's ``settings``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hiddenweb.config import setting_args
from hiddenweb.estimate import ENDED_BY_ITSELF

ROOT = Path(__file__).resolve().parent.parent
#: the finish reasons of a crawl that ended by itself: nothing left ("finished"), or only forms
#: the stopping rule retired ("hiddenweb_exhausted", HIDDENWEB_STOP_MASS)
ENDED = ENDED_BY_ITSELF


@dataclass
class CrawlRun:
    items: list[dict]
    stats: dict | None  # None when the crawl did not get as far as closing
    stderr: str
    returncode: int


def run_crawl(out_dir: Path, *args: str, settings: dict | None = None,
              timeout: int = 600, env: dict[str, str] | None = None) -> CrawlRun:
    """Run ``scrapy crawl hwdla *args`` with ``-s`` for each of ``settings``, in ``out_dir``
    (``env``: variables set for the crawl, beside this process's)."""
    out, stats = out_dir / "items.jsonl", out_dir / "stats.json"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", *args, "-O", f"{out}:jsonlines",
           "-s", "HIDDENWEB_STORE_ENABLED=0", "-s", f"HIDDENWEB_STATS_FILE={stats}",
           "-s", "HIDDENWEB_KEEP_TOKENS=1"]
    cmd += setting_args(settings)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings", **(env or {})}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return CrawlRun(items, json.loads(stats.read_text()) if stats.exists() else None,
                    proc.stderr, proc.returncode)


def _run(tmp_path: Path, *args: str, settings: dict | None = None) -> CrawlRun:
    return run_crawl(tmp_path, *args, settings={"LOG_LEVEL": "INFO",
                                                "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
                                                **(settings or {})})


def crawl(tmp_path: Path, *args: str, settings: dict | None = None) -> tuple[list[dict], str, int]:
    run = _run(tmp_path, *args, settings=settings)
    return run.items, run.stderr, run.returncode


#: the settings of a crawl that reads the site to its end: the crawl-level stopping rule
#: (hiddenweb.stale, tested in tests/spider/test_close_stale.py) off. The tests that compare
#: the hidden pages two crawls end with need it: where a run of 100 pages with no new word
#: falls depends on the crawl's order, which the setting under test changes, so one crawl may
#: close stale and the other read on (test_dla_wait failed so in a clean-clone CI on
#: 2026-11-27: "hiddenweb_exhausted" against "hiddenweb_stale")
READ_ALL = {"HIDDENWEB_CLOSE_STALE": 0}


def hidden_found(served_site, tmp_path: Path, settings: dict) -> tuple[dict[str, int], dict]:
    """Crawl the served site from its home page with ``settings``: the hidden truth pages
    found (key → the download count when first seen) and the crawl's final stats."""
    run = _run(tmp_path, "-a", f"seed={served_site.url}/", settings=settings)
    assert run.returncode == 0, run.stderr[-3000:]
    truth = truth_of(served_site.site)
    found: dict[str, int] = {}
    for item in run.items:
        if item["status"] == 200:
            key = resolve(served_site.site, item)
            if key in truth and truth[key]["hidden"]:
                found.setdefault(key, item["downloads"])
    return found, run.stats or {}


def hidden_found_on_off(served_site, tmp_path: Path, setting: str
                        ) -> tuple[dict[str, int], dict, dict[str, int], dict]:
    """:func:`hidden_found` over plain HTTP with the boolean lab knob ``setting`` on, then
    off: ``(on, on_stats, off, off_stats)``. Both read the site to its end (:data:`READ_ALL`)."""
    runs = [hidden_found(served_site, tmp_path / name, {"HIDDENWEB_LAB": {setting: value},
                                                        "HIDDENWEB_BROWSER": "never",
                                                        **READ_ALL})
            for name, value in (("on", True), ("off", False))]
    return (*runs[0], *runs[1])


def truth_of(site):
    return {page["key"]: page for page in site.truth()}


def resolve(site, item):
    form = (item.get("reached_by") or {}).get("form")
    data = list(form["fields"].items()) if form and item["method"] == "POST" else None
    return site.resolve(item["method"], item["url"], data)


def browser_crawl(tmp_path: Path, site: str, download_timeout: int = 20,
                  **settings: Any) -> CrawlRun:
    """A crawl of a test's small site (``site``: its root URL) with the browser: a short
    render timeout, generous download and closing bounds for a loaded machine, and no guessed
    URL sources (``HIDDENWEB_URL_GUESSES``, on by default): a test of what the browser reaches
    must not pass by a script's quoted path read over plain HTTP."""
    return run_crawl(tmp_path, "-a", f"seed={site}/", timeout=300, settings={
        "HIDDENWEB_BROWSER_TIMEOUT": "5", "DOWNLOAD_TIMEOUT": str(download_timeout),
        "CLOSESPIDER_TIMEOUT": "150", "LOG_LEVEL": "INFO", "HIDDENWEB_URL_GUESSES": "0",
        **settings})
