"""Scrapyd round trip: a real Scrapyd on 127.0.0.1, `scrapyd-deploy local`, a scheduled crawl of a
served proving-ground site, its JSON lines feed and its visit store."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, path: str, data: dict | None = None) -> dict:
    body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
    with urllib.request.urlopen(f"{base}/{path}", data=body, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.fixture
def scrapyd(tmp_path):
    port = free_port()
    (tmp_path / "scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 127.0.0.1\n"
        f"http_port = {port}\neggs_dir = eggs\nlogs_dir = logs\nitems_dir = items\n"
        "dbs_dir = dbs\nmax_proc = 1\npoll_interval = 0.5\n"
    )
    proc = subprocess.Popen([str(BIN / "scrapyd")], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=(tmp_path / "scrapyd.err").open("w"))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if api(base, "daemonstatus.json")["status"] == "ok":
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError((tmp_path / "scrapyd.err").read_text())
        yield base, tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_deploy_schedule_and_read_the_feed(scrapyd, served_site, tmp_path_factory):
    base, scrapyd_dir = scrapyd
    # Deploy from a copy of the project whose [deploy:local] points at this Scrapyd, so the
    # real scrapy.cfg and the real scrapyd-deploy are used and the work tree stays clean.
    project = tmp_path_factory.mktemp("project") / "hiddenweb"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(
        ".venv", ".git", "out", "build", "*.egg-info", "__pycache__", ".scrapy", "tests"))
    cfg = (project / "scrapy.cfg").read_text()
    (project / "scrapy.cfg").write_text(cfg.replace("http://127.0.0.1:6800/", f"{base}/"))
    deploy = subprocess.run([str(BIN / "scrapyd-deploy"), "local", "-p", "hiddenweb"],
                            cwd=project, capture_output=True, text=True, timeout=300)
    assert deploy.returncode == 0, deploy.stderr[-2000:]
    assert "hiddenweb" in api(base, "listprojects.json")["projects"]
    assert "hwdla" in api(base, "listspiders.json?project=hiddenweb")["spiders"]

    store = scrapyd_dir / "store.db"
    job = api(base, "schedule.json", {
        "project": "hiddenweb", "spider": "hwdla", "seed": f"{served_site.url}/",
        # eggs carry no data files: point the crawl at the LVS and the store explicitly
        "setting": [f"HIDDENWEB_LVS_DIR={ROOT / 'lvs_data'}", f"HIDDENWEB_STORE_PATH={store}",
                    "CLOSESPIDER_PAGECOUNT=150"],
    })["jobid"]
    for _ in range(600):
        jobs = api(base, "listjobs.json?project=hiddenweb")
        if any(j["id"] == job for j in jobs["finished"]):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"job {job} did not finish: {jobs}")
    feed = scrapyd_dir / "items" / "hiddenweb" / "hwdla" / f"{job}.jl"
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(items) >= 100
    assert any(i["form_only"] for i in items)
    with sqlite3.connect(store) as db:
        (visits,) = db.execute("select count(*) from visits").fetchone()
        (pages, frequency) = db.execute("select count(*), sum(frequency) from pages").fetchone()
    assert visits == frequency == len(items)  # every item of the feed is one recorded visit
    assert 0 < pages <= visits
