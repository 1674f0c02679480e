"""Chromium SIGKILLed during a crawl (issue 31): the crawl goes on and finds what it would have.

Serves the demo site (``hiddenweb site serve``, 300 pages, seed 7), crawls it with the browser on
(``HIDDENWEB_BROWSER=auto``) once uninterrupted, then again while Chromium's browser process (a
descendant of the crawl whose command line has ``--remote-debugging-pipe`` and no ``--type=``)
is SIGKILLed ``--kills`` times, at evenly spread moments of the uninterrupted run's wall time
(after each kill, the next waits for the relaunched Chromium). Prints, for each run, the wall
time, finish reason, hidden pages found (plain and browser-only) and the browser stats; then the
hidden pages the killed run lost or gained against the uninterrupted one. Repeat with
``--repeat`` (kills land at other moments of other crawls)::

    PYTHONPATH=$PWD .venv/bin/python -m hiddenweb.bench.browserkill [--kills 3] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hiddenweb.bench.coverage import Truth, read_items, resolve_item, serve_site
from hiddenweb.bench.provingground.site import DEMO_PAGES, DEMO_SEED, SiteModel

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
STATS = ("launched", "relaunches", "retries", "crashes", "timeouts", "failures", "fallbacks",
         "pages", "needed", "stuck_cancelled")


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def chromium_of(crawl_pid: int) -> int | None:
    """The browser process (not a renderer, GPU or utility process) under the crawl."""
    for pid in descendants(crawl_pid):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"--remote-debugging-pipe" in a for a in cmd) \
                and not any(a.startswith(b"--type=") for a in cmd):
            return pid
    return None


def crawl(seed_url: str, out: Path, kill_at: list[float]) -> dict[str, Any]:
    stats_path = out.with_suffix(".stats.json")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", f"seed={seed_url}/",
           "-O", f"{out}:jsonlines", "-s", "HIDDENWEB_STORE_ENABLED=0",
           "-s", f"HIDDENWEB_STATS_FILE={stats_path}", "-s", "HIDDENWEB_BROWSER=auto",
           # items are scored against the truth, which checks the forms' CSRF tokens
           "-s", "HIDDENWEB_KEEP_TOKENS=1", "-s", "LOG_LEVEL=INFO"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "hiddenweb.settings"}
    log = out.with_suffix(".log").open("w")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
    kills: list[float] = []
    try:
        for moment in kill_at:
            while proc.poll() is None and time.monotonic() - started < moment:
                time.sleep(0.05)
            pid = None
            while proc.poll() is None and pid is None:  # the relaunch comes with a request
                pid = chromium_of(proc.pid)
                if pid is None:
                    time.sleep(0.05)
            if pid is None:
                break
            os.kill(pid, signal.SIGKILL)
            kills.append(round(time.monotonic() - started, 1))
        proc.wait(timeout=1800)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    wall = time.monotonic() - started
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    return {"wall": round(wall, 1), "kills_at": kills, "returncode": proc.returncode,
            "finish_reason": stats.get("finish_reason"), "items": read_items(out),
            "stats": {k: stats.get(f"hiddenweb/browser/{k}", 0) for k in STATS}}


def hidden(site: SiteModel, truth: Truth, items: list[dict]) -> tuple[set[str], set[str]]:
    keys = {resolve_item(site, i) for i in items if i.get("status") == 200}
    return keys & truth.hidden, keys & truth.hidden_browser


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--pages", type=int, default=DEMO_PAGES)
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    args = parser.parse_args()
    site = SiteModel(pages=args.pages, seed=args.seed)
    truth = Truth.of(site)
    tmp = Path(tempfile.mkdtemp(prefix="hiddenweb-browserkill-"))
    with serve_site(args.pages, args.seed) as url:
        base = crawl(url, tmp / "uninterrupted.jsonl", [])
        plain, browser = hidden(site, truth, base["items"])
        print(f"uninterrupted: {base['wall']} s, {base['finish_reason']}, {len(base['items'])} "
              f"items, hidden {len(plain)}/{len(truth.hidden)} + browser-only "
              f"{len(browser)}/{len(truth.hidden_browser)}; {base['stats']}", flush=True)
        moments = [base["wall"] * (i + 1) / (args.kills + 1) for i in range(args.kills)]
        for n in range(args.repeat):
            run = crawl(url, tmp / f"killed-{n}.jsonl", moments)
            k_plain, k_browser = hidden(site, truth, run["items"])
            lost = sorted((plain | browser) - (k_plain | k_browser))
            gained = sorted((k_plain | k_browser) - (plain | browser))
            print(f"killed at {run['kills_at']} s: {run['wall']} s, {run['finish_reason']}, "
                  f"{len(run['items'])} items, hidden {len(k_plain)}/{len(truth.hidden)} + "
                  f"browser-only {len(k_browser)}/{len(truth.hidden_browser)}; {run['stats']}; "
                  f"lost {len(lost)} {lost[:10]}, gained {len(gained)} {gained[:10]}", flush=True)
    print(f"logs and feeds in {tmp}")


if __name__ == "__main__":
    main()
