"""Scrapyd as the README documents it: the README's Scrapyd lines, read out of README.md and typed
one by one into one bash shell (as a user would), against a stock Scrapyd started the README's
way (port 6800, the one ``scrapyd.conf`` line the README shows), crawling a served proving-ground
site. The feed is read where the README says it lands.

The only differences from a user's session: ``HOME`` is a temporary directory (``~/scrapyd`` is
the README's Scrapyd directory), the project is a copy of this checkout (deploying writes
``setup.py`` and ``build/`` into it) and the seed ``https://example.com/`` is the served site.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from hiddenweb.bench.provingground.server import serve_in_thread
from hiddenweb.bench.provingground.site import DEMO_SEED, SiteModel

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent
MARKER = "<!-- scrapyd-steps:"
PORT = 6800  # the README's (Scrapyd's default)


def readme_steps() -> tuple[list[str], str]:
    """(the shell lines of the README's Scrapyd block, where the README says the feed lands)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert MARKER in text, "README.md lost its Scrapyd steps"
    block = text[text.index(MARKER):]
    body = block[block.index("```sh\n") + 6:]
    lines = [line for line in body[:body.index("```")].splitlines() if line.strip()]
    feed = re.search(r"`(~/\S+/<jobid>\.jl)`", block)
    assert feed, "README.md does not say where the feed lands"
    return lines, feed.group(1)


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def api(path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/{path}", timeout=30) as resp:
        return json.loads(resp.read())


class Shell:
    """One bash shell fed line by line; its output goes to a file (Scrapyd started in the
    background writes there too, so a pipe could fill and block it)."""

    def __init__(self, cwd: Path, home: Path, out: Path):
        self.out = out
        env = {**os.environ, "HOME": str(home)}
        env.pop("VIRTUAL_ENV", None)
        self.proc = subprocess.Popen(["bash", "--norc", "--noprofile"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=out.open("w"),
                                     stderr=subprocess.STDOUT, text=True)
        self.steps = 0

    def run(self, line: str, timeout: float = 300) -> str:
        """Type ``line``; wait for it to end; return its output (raise if it failed)."""
        self.steps += 1
        done = f"__step {self.steps} done:"
        start = len(self.out.read_text())
        self.proc.stdin.write(f"{line}\necho '{done}' $?\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.out.read_text()[start:]
            match = re.search(re.escape(done) + r" (\d+)", text)
            if match:
                output = text[:match.start()]
                assert match.group(1) == "0", f"{line!r} failed:\n{output[-3000:]}"
                return output
            time.sleep(0.2)
        raise AssertionError(f"{line!r} did not end in {timeout} s")

    def close(self) -> None:
        self.proc.stdin.write("kill $(jobs -p) 2>/dev/null; exit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)


@pytest.fixture
def site():
    server = serve_in_thread(SiteModel(pages=150, seed=DEMO_SEED), "127.0.0.1", 0)
    try:
        yield server
    finally:
        server.shutdown()


def test_the_readme_scrapyd_steps_keep_the_feed(site, tmp_path):
    lines, feed_pattern = readme_steps()
    for _ in range(240):  # another run of this test may hold the README's port
        if port_free(PORT):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"port {PORT} (the README's Scrapyd port) stays taken")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "hiddenweb"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(
        ".venv", ".git", "out", "build", "*.egg-info", "__pycache__", ".scrapy", "tests"))
    (project / ".venv").symlink_to(VENV)
    shell = Shell(project, home, tmp_path / "shell.out")
    job = None
    try:
        for line in lines:
            output = shell.run(line.replace("https://example.com/", f"{site.url}/"))
            if line.rstrip().split("#")[0].rstrip().endswith("&"):  # Scrapyd, started
                for _ in range(100):
                    try:
                        if api("daemonstatus.json")["status"] == "ok":
                            break
                    except OSError:
                        time.sleep(0.2)
                else:
                    pytest.fail(f"Scrapyd did not start:\n{(tmp_path / 'shell.out').read_text()}")
            if "schedule.json" in line:
                job = json.loads(output.strip().splitlines()[-1])["jobid"]
        assert job, "no schedule.json line in the README's steps"
        for _ in range(600):
            jobs = api("listjobs.json?project=hiddenweb")
            if any(j["id"] == job for j in jobs["finished"]):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"job {job} did not finish: {jobs}")
    finally:
        shell.close()
    feed = Path(feed_pattern.replace("~", str(home)).replace("<jobid>", job))
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(items) >= 100
    assert any(i["form_only"] for i in items)
    # the crawl report, beside the job's log (the README says so)
    log = Path(str(feed).replace("/items/", "/logs/")).with_suffix(".log")
    report = json.loads(log.with_name(f"{job}.report.json").read_text())
    assert report["pages"] == len(items) and "hiddenweb crawl report" in log.read_text()
    store = home / "scrapyd" / ".scrapy" / "hiddenweb.db"  # the README's visit store
    with sqlite3.connect(store) as db:
        (visits,) = db.execute("select count(*) from visits").fetchone()
        (pages, frequency) = db.execute("select count(*), sum(frequency) from pages").fetchone()
    assert visits == frequency == len(items)  # every item of the feed is one recorded visit
    assert 0 < pages <= visits
