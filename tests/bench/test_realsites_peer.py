"""The real-site benchmark's peer crawler (Black Widow): how a crawl of it is started. Running
it needs its checkout from GitHub, which the tests cannot reach; ``docs/benchmarks.md`` has
the corpus run that does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hiddenweb.bench.coverage import PROJECT_DIR
from hiddenweb.bench.realsites.crawlers import LAUNCHER, Caps, CrawlResult, Peer, command
from hiddenweb.browser.config import CHROMIUM_ARGS


def _checkout(tmp_path: Path) -> Path:
    checkout = tmp_path / "src"
    (checkout / "js").mkdir(parents=True)
    (checkout / ".git").mkdir()
    (checkout / "crawl.py").write_text("print('crawl')\n")
    (checkout / "js" / "lib.js").write_text("// lib\n")
    return checkout


def test_a_peer_crawl_runs_the_launcher_in_its_own_venv_on_a_fresh_copy_of_its_checkout(
        tmp_path: Path):
    peer = Peer(tmp_path / "venv" / "bin" / "python", _checkout(tmp_path))
    work = tmp_path / "crawl"
    work.mkdir()
    (work / "blackwidow").mkdir()
    (work / "blackwidow" / "stale.txt").write_text("from an earlier crawl")
    cmd, cwd, env = command("blackwidow", "http://127.0.0.1:9/", work, Caps(), peer)
    assert cmd == [str(peer.python), str(LAUNCHER), str(work / "blackwidow"),
                   "http://127.0.0.1:9/"]
    assert cwd == work / "blackwidow"
    # its code and scripts, not its git data, nor what an earlier crawl left
    assert sorted(p.relative_to(cwd).as_posix() for p in cwd.rglob("*")) == [
        "crawl.py", "js", "js/lib.js"]
    assert json.loads(env["BLACKWIDOW_CHROMIUM_ARGS"]) == list(CHROMIUM_ARGS)
    assert "SCRAPY_SETTINGS_MODULE" not in cmd


def test_a_peer_crawl_needs_its_checkout_and_takes_no_settings(tmp_path: Path):
    with pytest.raises(ValueError, match="--source blackwidow="):
        command("blackwidow", "http://127.0.0.1:9/", tmp_path, Caps(), None)
    peer = Peer(Path(sys.executable), _checkout(tmp_path))
    with pytest.raises(ValueError, match="takes no settings"):
        command("blackwidow@DOWNLOAD_DELAY=1", "http://127.0.0.1:9/", tmp_path, Caps(), peer)


def test_the_benchmark_refuses_a_peer_without_its_source_before_it_installs_any_site(
        tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "hiddenweb.cli", "bench", "realsites", "--sites", "sqlite-web",
         "--crawlers", "hwdla,blackwidow", "--out", str(tmp_path)],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "give --source blackwidow=GIT-URL-OR-PATH" in done.stderr
    assert "installing" not in done.stderr  # nothing was installed or crawled


def test_a_peers_downloads_are_not_known_where_a_scrapy_crawls_are_counted():
    """Black Widow keeps no Scrapy stats: its downloads are unknown (— in the table), not 0;
    a Scrapy crawl that failed before its first response downloaded 0."""
    assert CrawlResult("blackwidow", 80.0, 0, {"finish_reason": "finished"}, None, "").downloads \
        is None
    assert CrawlResult("naive", 3.0, 1, {}, 0, "").downloads == 0
    assert CrawlResult("hwdla@X=1", 9.0, 0, {"downloader/response_count": 7}, 0, "") \
        .downloads == 7
