"""The crawlers of the real-site benchmark: three ``scrapy`` subprocesses with caps, and a peer.

* ``naive``: :mod:`~hiddenweb.bench.realsites.naive_spider` with Scrapy's defaults
  (``ROBOTSTXT_OBEY`` on, as ``scrapy startproject`` writes it, and the same concurrency as the
  project's: 16 requests, 8 per domain);
* ``naive-browser``: the same with every request rendered in Debian's Chromium through
  scrapy-playwright (the launch flags of :data:`hiddenweb.browser.config.CHROMIUM_ARGS`; page
  resources off 127.0.0.1 aborted, :func:`off_loopback`);
* ``hwdla``: ``scrapy crawl hwdla -a seed=…`` from the project checkout with its defaults
  (the visit store written into the crawl's own directory; its browser aborts images, media,
  fonts and styles by itself, and no setting of it is changed).

The peer, not in the default run (:data:`PEERS`):

* ``blackwidow``: Black Widow (IEEE S&P 2021, GitHub SecuringWeb/BlackWidow), the research crawler
  ``docs/benchmarks.md`` compares reach with: its ``crawl.py`` unchanged, from a checkout given
  with ``--source blackwidow=GIT-URL-OR-PATH``, run headless in Debian's Chromium through
  Debian's ``chromium-driver`` and Selenium 3 in a venv of its own (:func:`install_peer`,
  :data:`BLACKWIDOW_PINS`; :mod:`~hiddenweb.bench.realsites.blackwidow_launch`). It has no cap
  of its own: it is killed at the time cap (``finish_reason`` ``killed_at_time_cap``). It fills
  every form with attack strings and logs in where it can: run it only against these local apps,
  each crawl on a fresh copy of the app's data, as every crawler here.

Every ``scrapy`` crawl is capped by ``CLOSESPIDER_PAGECOUNT`` and ``CLOSESPIDER_TIMEOUT`` (the
runner's caps), and killed if it outlives the timeout by a minute. :func:`run_crawler` returns
the wall time, the exit code, the final Scrapy stats and the pages rendered in Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from hiddenweb.bench.coverage import PROJECT_DIR
from hiddenweb.bench.realsites.install import apt_packages, git_source, pip_venv
from hiddenweb.browser.config import CHROMIUM_ARGS

CRAWLERS = ("naive", "naive-browser", "hwdla")
#: crawlers run only when named in ``--crawlers``, each from a checkout given with ``--source``
PEERS = ("blackwidow",)
#: Black Widow's venv: Selenium 3 (its API), ``urllib3`` before 2 (which Selenium 3 needs), and
#: what ``tldextract`` (imported by its modules) pulls in
BLACKWIDOW_PINS = ["selenium==3.141.0", "urllib3==1.26.20", "tldextract==5.4.0",
                   "requests==2.34.2", "requests-file==3.0.1", "idna==3.20", "filelock==4.3.1",
                   "certifi==2026.10.19.post1", "charset-normalizer==3.5.3"]
LAUNCHER = Path(__file__).with_name("blackwidow_launch.py")
NAIVE = Path(__file__).with_name("naive_spider.py")
COMMON = {"CONCURRENT_REQUESTS": "16", "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
          "LOG_LEVEL": "INFO", "LOGSTATS_INTERVAL": "30", "TELNETCONSOLE_ENABLED": "0"}
BROWSER = {
    "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "DOWNLOAD_HANDLERS": json.dumps({
        "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
        "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"}),
    "PLAYWRIGHT_LAUNCH_OPTIONS": json.dumps({
        "executable_path": "/usr/bin/chromium", "headless": True, "args": list(CHROMIUM_ARGS)}),
    "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": "8",
    "PLAYWRIGHT_ABORT_REQUEST": "hiddenweb.bench.realsites.crawlers.off_loopback",
}


def off_loopback(request) -> bool:
    """``PLAYWRIGHT_ABORT_REQUEST`` of the naive browser crawl: nothing leaves 127.0.0.1 (a page
    resource on another host is aborted; the crawl's own links are same-host already)."""
    return urlsplit(request.url).hostname not in ("127.0.0.1", "localhost")


@dataclass
class Caps:
    """Per crawl: ``CLOSESPIDER_PAGECOUNT`` and ``CLOSESPIDER_TIMEOUT``. The defaults keep a
    full run (7 apps, 3 crawlers) near 25 minutes on 2 cores: plain crawls end on the page
    cap, Chromium and hwdla crawls mostly on the time cap."""

    pages: int = 1000
    seconds: int = 80


@dataclass
class Peer:
    """An installed peer crawler: the Python of its venv and its checkout."""

    python: Path
    checkout: Path


def install_peer(name: str, source: str) -> Peer:
    """Install peer ``name`` from ``source`` (a git URL or a local path): Debian's
    ``chromium-driver``, a clone of the checkout and a venv with :data:`BLACKWIDOW_PINS`
    (:mod:`hiddenweb.bench.realsites.install`; each reused when already there)."""
    if name != "blackwidow":
        raise ValueError(f"unknown peer crawler {name!r}; known: {', '.join(PEERS)}")
    apt_packages(["chromium-driver"])
    checkout = git_source(name, source)
    venv = pip_venv(name, BLACKWIDOW_PINS)
    return Peer(venv / "bin" / "python", checkout)


@dataclass
class CrawlResult:
    crawler: str
    wall_seconds: float
    returncode: int
    stats: dict
    browser_pages: int | None  # None: not known (a peer loads every page in Chromium)
    log_tail: str

    @property
    def downloads(self) -> int | None:
        """The crawler's responses; None for a peer, which keeps no Scrapy stats."""
        if variant(self.crawler)[0] in PEERS:
            return None
        return int(self.stats.get("downloader/response_count", 0))


def variant(crawler: str) -> tuple[str, dict[str, str]]:
    """``hwdla@NAME=VALUE+NAME=VALUE``: the crawler ``hwdla`` (or a find strategy,
    ``ls2f@…``) with those settings (an arm of an A/B measured in the same run); a plain name
    has none."""
    base, _, spec = crawler.partition("@")
    settings = {}
    for part in filter(None, spec.split("+")):
        name, sep, value = part.partition("=")
        if not sep or not name:
            raise ValueError(f"{crawler!r}: expected {base}@NAME=VALUE[+NAME=VALUE]")
        settings[name] = value
    return base, settings


def command(crawler: str, seed: str, workdir: Path, caps: Caps, peer: Peer | None = None
            ) -> tuple[list[str], Path, dict]:
    """The command line, working directory and environment of one crawl (``peer``: the
    installed peer, for a peer crawler)."""
    crawler, extra = variant(crawler)
    if crawler in PEERS:
        if peer is None:
            raise ValueError(f"{crawler}: give --source {crawler}=GIT-URL-OR-PATH")
        if extra:
            raise ValueError(f"{crawler}: a peer crawler takes no settings")
        copy = workdir / crawler  # it writes logs and payload files beside its code
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(peer.checkout, copy, ignore=shutil.ignore_patterns(".git"))
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"  # its progress lines reach the log as they are printed
        # Chromium's own background traffic off (updates, sync), as in the project's browser
        env["BLACKWIDOW_CHROMIUM_ARGS"] = json.dumps(list(CHROMIUM_ARGS))
        return [str(peer.python), str(LAUNCHER), str(copy), seed], copy, env
    stats = workdir / "stats.json"
    settings = {**COMMON, "CLOSESPIDER_PAGECOUNT": str(caps.pages),
                "CLOSESPIDER_TIMEOUT": str(caps.seconds)}
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_DIR),
                                                    env.get("PYTHONPATH", "")) if p)
    if crawler in ("naive", "naive-browser"):
        settings["ROBOTSTXT_OBEY"] = "True"
        if crawler == "naive-browser":
            settings.update(BROWSER)
        cmd = [sys.executable, "-m", "scrapy", "runspider", str(NAIVE), "-a", f"seed={seed}",
               "-a", f"stats={stats}", "-a", f"browser={int(crawler == 'naive-browser')}"]
        cwd = workdir  # no scrapy.cfg there: Scrapy's defaults, not the project's
    elif crawler == "hwdla":
        settings.update({"HIDDENWEB_STATS_FILE": str(stats),
                         "HIDDENWEB_STORE_PATH": str(workdir / "hiddenweb.db")})
        cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={seed}"]
        cwd = PROJECT_DIR
        env["SCRAPY_SETTINGS_MODULE"] = "hiddenweb.settings"
    else:
        raise ValueError(f"unknown crawler {crawler!r}; known: {', '.join(CRAWLERS)}")
    settings.update(extra)
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    return cmd, cwd, env


def run_crawler(crawler: str, seed: str, workdir: Path, caps: Caps,
                tick: Callable[[], None] | None = None, peer: Peer | None = None
                ) -> CrawlResult:
    """Run one capped crawl of ``seed``; ``tick`` is called about every second (progress)."""
    workdir.mkdir(parents=True, exist_ok=True)
    cmd, cwd, env = command(crawler, seed, workdir, caps, peer)
    is_peer = variant(crawler)[0] in PEERS
    log = workdir / "crawl.log"
    start = time.monotonic()
    capped = False
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            while proc.poll() is None:
                # a peer has no cap of its own: it stops at the time cap
                if time.monotonic() - start > caps.seconds + (0 if is_peer else 60):
                    capped = True
                    proc.kill()
                    break
                if tick:
                    tick()
                time.sleep(1)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            try:  # Chromium and the node driver, should they outlive the crawl
                os.killpg(proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
    wall = time.monotonic() - start
    stats_file = workdir / "stats.json"
    try:
        stats = json.loads(stats_file.read_text())
    except (OSError, ValueError):
        stats = {}
    browser_pages: int | None = int(stats.get("playwright/page_count", 0)) \
        if variant(crawler)[0] != "hwdla" else \
        int(stats.get("hiddenweb/browser/pages", 0))
    returncode = proc.returncode
    if is_peer:  # no stats of its own; every page it loads is a Chromium page, counted by none
        stats = {"finish_reason": "killed_at_time_cap" if capped else "finished"}
        returncode = 0 if capped else returncode
        browser_pages = None
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    return CrawlResult(crawler, round(wall, 1), returncode, stats, browser_pages, tail)
