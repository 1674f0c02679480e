"""Failures that fail (issue 26): a visit store that cannot be written stops the crawl with one
error line and exit status 1; a store another process keeps locked is retried without freezing
the crawl; an unreachable seed exits 1; the ``hiddenweb`` store commands answer a bad store in one
line; terminal output escapes control characters."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from scrapy.utils.test import get_crawler

import hiddenweb.pipelines.visitstore as vs
from hiddenweb.bench.store import synthetic_items
from hiddenweb.pipelines.visitstore import VisitStorePipeline
from hiddenweb.store import Visit, VisitStore
from hiddenweb.terminal import printable

ROOT = Path(__file__).resolve().parents[2]


def pipeline_for(db: Path, **settings) -> VisitStorePipeline:
    base = {"HIDDENWEB_STORE_PATH": str(db),
            "HIDDENWEB_LAB": {"store_flush_interval": 0, "store_batch_size": 1}}
    crawler = get_crawler(settings_dict={**base, **settings})
    crawler.stats.open_spider()
    return VisitStorePipeline.from_crawler(crawler)


def one_error(caplog) -> logging.LogRecord:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].exc_info is None  # one line, no traceback
    return errors[0]


def test_a_corrupt_store_stops_the_crawl_in_one_line(tmp_path, caplog):
    db = tmp_path / "corrupt.db"
    db.write_bytes(b"this is not a database" * 100)
    pipeline = pipeline_for(db)
    with caplog.at_level(logging.ERROR):
        pipeline.open_spider()
        for item in synthetic_items(3, urls=3):
            pipeline.process_item(item)
        pipeline.close_spider()
    record = one_error(caplog)
    assert "stopping the crawl" in record.getMessage() and str(db) in record.getMessage()
    stats = pipeline.stats.get_stats()
    assert stats["hiddenweb/failed"] == "store_failed" and stats["hiddenweb/store/lost"] == 3


def test_a_store_missing_a_column_stops_the_crawl(tmp_path, caplog):
    db = tmp_path / "old.db"
    VisitStore(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE visits DROP COLUMN title")
    pipeline = pipeline_for(db)
    pipeline.open_spider()
    with caplog.at_level(logging.ERROR):
        for item in synthetic_items(5, urls=5):
            pipeline.process_item(item)
        pipeline.close_spider()
    assert "no column named title" in one_error(caplog).getMessage()
    stats = pipeline.stats.get_stats()
    assert stats["hiddenweb/failed"] == "store_failed" and stats["hiddenweb/store/lost"] == 5


def hold_lock(db: Path) -> sqlite3.Connection:
    VisitStore(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write lock
    return other


def test_a_locked_store_does_not_freeze_the_crawl(tmp_path, caplog):
    db = tmp_path / "locked.db"
    other = hold_lock(db)
    pipeline = pipeline_for(db, HIDDENWEB_STORE_TIMEOUT=30)
    pipeline.open_spider()
    items = list(synthetic_items(40, urls=10))
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        for item in items:
            pipeline.process_item(item)
    assert time.monotonic() - started < 1.0  # 40 items: one short try, not 40 × 30 s
    stats = pipeline.stats.get_stats()
    assert stats["hiddenweb/store/locked_retries"] == 1 and "hiddenweb/failed" not in stats
    assert "locked by another process" in caplog.text
    other.execute("ROLLBACK")
    other.close()
    pipeline.close_spider()
    with VisitStore(db) as store:
        assert store.counts()["visits"] == 40  # nothing lost once the lock went away


def test_a_store_locked_for_longer_than_the_timeout_fails(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(vs, "RETRY_EVERY", 0.05)
    db = tmp_path / "locked.db"
    other = hold_lock(db)
    pipeline = pipeline_for(db, HIDDENWEB_STORE_TIMEOUT=0.3)
    pipeline.open_spider()
    items = iter(synthetic_items(100, urls=10))
    deadline = time.monotonic() + 5
    with caplog.at_level(logging.ERROR):
        while pipeline.failed is None and time.monotonic() < deadline:
            pipeline.process_item(next(items))
            time.sleep(0.02)
        pipeline.close_spider()
    other.close()
    assert "still locked after 0.3 s (HIDDENWEB_STORE_TIMEOUT)" in one_error(caplog).getMessage()
    assert pipeline.stats.get_value("hiddenweb/failed") == "store_failed"


def test_scrapy_crawl_exits_1_on_a_corrupt_store(tmp_path):
    db = tmp_path / "corrupt.db"
    db.write_bytes(b"\x00garbage" * 500)
    run = run_crawl(tmp_path, "-a", "seed=http://127.0.0.1:9/",
                    settings={"HIDDENWEB_STORE_ENABLED": "1", "HIDDENWEB_STORE_PATH": str(db),
                              "HIDDENWEB_BROWSER": "never", "RETRY_TIMES": "0"})
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Visit store cannot be written, stopping the crawl" in run.stderr
    assert "the crawl failed (store_failed)" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_unreachable_seed_exits_1(tmp_path):
    run = run_crawl(tmp_path, "-a", "seed=http://127.0.0.1:9/",
                    settings={"ROBOTSTXT_OBEY": "0", "RETRY_TIMES": "0",
                              "HIDDENWEB_BROWSER": "never"})
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Seed unreachable" in run.stderr and "the crawl failed (seed_unreachable)" in run.stderr
    assert len(run.items) == 1 and run.items[0]["error"]


def hiddenweb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hiddenweb.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [["rank"], ["report", "-o", "OUT"],
                                     ["visits", "import", "FILE"]])
def test_store_commands_answer_a_bad_store_in_one_line(tmp_path, command):
    db = tmp_path / "bad.db"
    db.write_bytes(b"not sqlite at all" * 64)
    (tmp_path / "visits.csv").write_text("url,seconds,available\nhttp://a/,1,1\n")
    args = [str(tmp_path / "out") if a == "OUT" else str(tmp_path / "visits.csv")
            if a == "FILE" else a for a in command]
    out = hiddenweb(*args, "--db", str(db))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and str(db) in out.stderr


def test_rank_reads_without_migrating_or_locking(tmp_path):
    db = tmp_path / "s.db"
    with VisitStore(db) as store:
        store.record([Visit("a:1", "http://h/p", 1.0, True, 1.0)])
        store.conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm002_form_class'")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a crawl writing: rank still reads
    out = hiddenweb("rank", "--db", str(db), "--json")
    other.execute("ROLLBACK")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["url"] == "http://h/p"
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations")}
    assert "m002_form_class" not in names  # not migrated by a read


def test_rank_escapes_control_characters(tmp_path):
    db = tmp_path / "s.db"
    url = "http://h/\x1b[2J\x1b]0;pwned\x07\r"
    with VisitStore(db) as store:
        store.record([Visit("a:1", url, 1.0, True, 1.0)])
    out = hiddenweb("rank", "--db", str(db))
    assert out.returncode == 0 and "\x1b" not in out.stdout and "\r" not in out.stdout
    assert "\\x1b[2J" in out.stdout
    assert printable("café 東京\tx") == "café 東京\\x09x"


def test_report_survives_a_url_with_two_dollars(tmp_path):
    db = tmp_path / "s.db"
    with VisitStore(db) as store:
        store.record([Visit("a:1", "http://h/$a$b$", 1.0, True, 1.0),
                      Visit("a:2", "http://h/q?x=$1&y=$2", 2.0, True, 2.0)])
    out = hiddenweb("report", "--db", str(db), "-o", str(tmp_path / "r"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r" / "index.html").exists()


@pytest.mark.parametrize("args", [["report", "-o", "X", "--top", "-5"], ["rank", "--limit", "-1"],
                                  ["site", "truth", "--pages", "-5", "-o", "X"]])
def test_negative_counts_are_refused(tmp_path, args):
    out = hiddenweb(*[str(tmp_path / "x") if a == "X" else a for a in args])
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "must be" in out.stderr


class _BigPages(BaseHTTPRequestHandler):
    """``/`` links to ``/big`` (40 MiB, with its Content-Length) and ``/chunked`` (40 MiB, no
    length: the cap cuts it while it streams)."""

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/":
            body = b'<html><body><a href="/big">big</a> <a href="/chunked">chunked</a></body>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path not in ("/big", "/chunked"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.path == "/big":
            self.send_header("Content-Length", str(40 * 2**20))
        self.end_headers()
        chunk = b"<p>" + b"x" * 65533
        try:
            for _ in range(40 * 16):
                self.wfile.write(chunk)
        except OSError:
            pass  # the crawler hung up: that is the point

    def log_message(self, *args) -> None:
        pass


def test_a_page_over_the_size_cap_is_refused_with_a_logged_reason(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _BigPages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        run = run_crawl(tmp_path, "-a", f"seed=http://127.0.0.1:{httpd.server_address[1]}/",
                        settings={"ROBOTSTXT_OBEY": "0", "RETRY_TIMES": "0",
                                  "HIDDENWEB_BROWSER": "never"})
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("larger than download max size (33554432)") >= 2
    failed = {i["url"].rsplit("/", 1)[1]: i["error"] for i in run.items if i["error"]}
    assert set(failed) == {"big", "chunked"}, run.items
