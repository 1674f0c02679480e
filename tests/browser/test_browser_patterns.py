"""Issue 31: a page cannot hang a browser crawl. One crawl per pattern of
:mod:`patterns` (self-navigation on a timer and on load, auto-submits driven by the crawler's own
page actions, ``beforeunload``, dialogs, ``window.open``, downloads, endless loading, a renderer
crash, a form answered by a script's fetch, Chromium killed twice under one page): each finishes
by itself, reaches every page (the URLs a page navigated to by itself included), within a few
download timeouts (20 s here).
``python tests/browser/patterns.py --runs 10`` runs each ten times and prints the figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crawlrun import ENDED  # tests/ is on sys.path (rootdir)
from patterns import CRAWL_SETTINGS, PATTERNS, crawl, expected

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="scripts/install.sh installs it")

# what each pattern must show in the stats (hiddenweb/browser/...: at least)
SHOWS = {
    "timer": {"self_navigations": 3, "found_urls": 3},
    "onload": {"self_navigations": 4, "found_urls": 4},
    "autosubmit": {},
    "beforeunload": {"dialogs": 1},
    "dialogs": {"dialogs": 3},
    "popup": {"found_urls": 2},
    "download": {"self_navigations": 1},
    "endless": {},
    "crash": {"crashes": 1, "retries": 1},
    "xhr": {},
    "relaunch": {"relaunches": 2},
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_browser_crawl_of_the_pattern_finishes_with_every_page(tmp_path, pattern):
    run, reached, wall, server = crawl(pattern, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats["finish_reason"] in ENDED, run.stderr[-3000:]
    assert expected(pattern) <= reached, sorted(expected(pattern) - reached)
    bound = float(CRAWL_SETTINGS["DOWNLOAD_TIMEOUT"])
    assert wall < 6 * bound, wall
    for key, least in SHOWS[pattern].items():
        assert run.stats.get(f"hiddenweb/browser/{key}", 0) >= least, (key, run.stats)
    assert "hiddenweb/browser/stuck_cancelled" not in run.stats
    if pattern in ("autosubmit", "beforeunload", "xhr"):  # submitted by the crawler, in Chromium
        assert run.stats["hiddenweb/forms/browser_forms"] >= 1
