"""``hiddenweb bench realsites`` end to end on its lightest app (sqlite-web, ~25 s to install
from PyPI the first time, cached after): install, data, truth, the three crawlers with small
caps, the report files, and no process left behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hiddenweb.bench.coverage import PROJECT_DIR


@pytest.mark.slow
@pytest.mark.browser
def test_realsites_runs_the_three_crawlers_on_sqlite_web(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "hiddenweb.cli", "bench", "realsites", "--sites",
         "sqlite-web,wivet", "--pages", "60", "--seconds", "20", "--json", "--out", str(out)],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    site, wivet = doc["sites"]
    assert wivet["skipped"].startswith("lives only in git") and "crawls" not in wivet
    assert "[wivet] skipped: lives only in git" in done.stderr
    assert site["name"] == "sqlite-web" and site["truth"] == {
        "link": 1611, "form": 0, "js": 0, "allowed": 1611, "total": 1611}
    assert [c["crawler"] for c in site["crawls"]] == ["naive", "naive-browser", "hwdla"]
    for crawl in site["crawls"]:
        assert "error" not in crawl, crawl
        assert crawl["requests"] > 0 and set(crawl["found"]) >= {"link", "total"}, crawl
        assert crawl["leftover_pids"] == []
        assert crawl["seed"].startswith("http://127.0.0.1:")
    naive, browser, hwdla = site["crawls"]
    assert naive["found"]["total"] > 0  # 20 s of Chromium may not reach a row: no bar there
    assert browser["browser_pages"] > 0 and naive["browser_pages"] == 0
    assert naive["useful_renders"] is None and browser["useful_renders"] is None
    assert 0 <= hwdla["useful_renders"] <= hwdla["browser_pages"]
    for name in ("results.json", "summary.md", "figure.png"):
        assert (out / name).stat().st_size > 0
    assert "| sqlite-web | naive |" in (out / "summary.md").read_text()
    again = subprocess.run(
        [sys.executable, "-m", "hiddenweb.cli", "bench", "realsites", "--rescore", "--json",
         "--out", str(out)], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    rescored = json.loads(again.stdout)["sites"][0]
    for before, after in zip(site["crawls"], rescored["crawls"], strict=True):
        assert after == before  # the same logs, the same scorers: the same scores
