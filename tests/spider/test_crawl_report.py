"""A crawl at the default log level: a readable log (no line per request, item or browser event)
that ends with the crawl report's summary block, and the report's JSON file beside the log, whose
figures equal the crawl's stats and its items; ``hiddenweb report --crawl-report`` draws them.
One crawl of a small proving-ground site (forms, script-built pages: the browser runs)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from html import escape

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from hiddenweb.bench.provingground.server import serve_in_thread
from hiddenweb.bench.provingground.site import DEMO_SEED, SiteModel
from hiddenweb.estimate import ENDED_BY_ITSELF
from hiddenweb.quietlogs import LOGGERS, QuietThirdPartyLogs
from hiddenweb.spiders.hwdla import HwdlaSpider


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """One crawl to its end, with no LOG_LEVEL given and the log in a file (as Scrapyd runs it)."""
    out = tmp_path_factory.mktemp("crawl")
    server = serve_in_thread(SiteModel(pages=30, seed=DEMO_SEED), "127.0.0.1", 0)
    try:
        run = run_crawl(out, "-a", f"seed={server.url}/", settings={
            "LOG_FILE": str(out / "crawl.log"), "HIDDENWEB_STORE_ENABLED": 1,
            "HIDDENWEB_STORE_PATH": str(out / "store.db"),
            "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": 20})
    finally:
        server.shutdown()
    assert run.returncode == 0, (out / "crawl.log").read_text()[-3000:]
    log = (out / "crawl.log").read_text()
    report = json.loads((out / "crawl.report.json").read_text())  # beside LOG_FILE
    return run, log, report, out


def test_the_default_log_is_readable_and_ends_with_the_summary(crawled):
    run, log, report, _ = crawled
    assert report["browser"]["pages"] > 0  # the browser ran: its loggers had lines to give
    assert not re.search(r"\] DEBUG: ", log), "a DEBUG line at the default level"
    assert "Crawled (200)" not in log and "Scraped from" not in log
    assert "[scrapy-playwright] DEBUG" not in log
    block = log.index("hiddenweb crawl report (")
    # the crawl ended by itself: nothing left, or only forms the stopping rule retired
    closed = re.search(r"Spider closed \((\w+)\)", log)
    assert closed and closed[1] in ENDED_BY_ITSELF, closed
    assert block > closed.start()
    after = log[block:].splitlines()[1:]
    records = [line for line in after if re.match(r"\d{4}-\d\d-\d\d ", line)]
    # after the block, only the browser's own closing lines
    assert all("[scrapy-playwright] INFO: Closing" in line for line in records), records
    print(f"log: {len(log.encode()):,} bytes for {report['downloads']:,} downloads")


def figure(log: str, label: str) -> int:
    match = re.search(rf"^  {label} +([\d,]+)", log, re.MULTILINE)
    assert match, f"no {label!r} line in the summary block"
    return int(match.group(1).replace(",", ""))


def test_the_report_figures_equal_the_stats_and_the_items(crawled):
    run, log, report, _ = crawled
    stats, items = run.stats, run.items
    pages = [i for i in items if i["status"] is not None]
    assert report["downloads"] == stats["hiddenweb/downloads"] == figure(log, "downloads")
    assert report["downloads"] >= len(items)
    assert report["pages"] == stats["hiddenweb/pages"] == len(pages) == figure(log, "pages")
    hidden = [i for i in pages if i["form_only"]]
    assert report["hidden_pages"] == stats["hiddenweb/pages_form_only"] == len(hidden) > 0
    assert figure(log, "hidden pages") == len(hidden)
    assert report["form_submissions"] == stats["hiddenweb/forms/submissions"] \
        == figure(log, "form submissions") > 0
    assert len({i["reached_by"]["form"]["action"] for i in items
                if i["reached_by"]["kind"] == "form"}) <= report["forms"]["submitted"]
    skipped = {k.rsplit("/", 1)[1]: v for k, v in stats.items()
               if k.startswith("hiddenweb/forms/skipped/")}
    assert report["forms"]["skipped_by_reason"] == skipped
    assert report["forms"]["skipped"] == sum(skipped.values())
    assert report["forms"]["on_pages"] == sum(v for k, v in stats.items()
                                              if k.startswith("hiddenweb/forms/found/"))
    browser = report["browser"]
    assert browser["pages"] == stats["hiddenweb/browser/pages"] == figure(log, "browser pages")
    assert sum(browser["by_reason"].values()) == browser["pages"] \
        == sum(u["loads"] for u in browser["urls"])
    refused = report["refused"]
    assert refused["total"] == sum(v for k, v in stats.items()
                                   if re.fullmatch(r"hiddenweb/safety/\w+_refused", k)) \
        == figure(log, "refused as unsafe") > 0  # the site's login and delete forms
    assert sum(refused["by_reason"].values()) == refused["total"]
    assert report["forms"]["retired"] == stats.get("hiddenweb/forms/retired", 0)
    if "hiddenweb/estimate/hidden_left" in stats:
        assert report["estimate"] == {
            f"hidden_left{end}": stats[f"hiddenweb/estimate/hidden_left{end}"]
            for end in ("", "_low", "_high")}
        assert f"hidden pages left  about {stats['hiddenweb/estimate/hidden_left']:,}" in log
    else:
        assert report["estimate"] is None and "hidden pages left  not estimated" in log


def test_hiddenweb_report_draws_the_crawl_report(crawled, tmp_path):
    run, _, report, out = crawled
    page = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "report", "--db",
                           str(out / "store.db"), "--items", str(out / "items.jsonl"),
                           "--crawl-report", str(out / "crawl.report.json"), "-o", str(page)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    html = (page / "index.html").read_text()
    for label, value in (("downloads", report["downloads"]), ("pages", report["pages"]),
                         ("hidden pages", report["hidden_pages"]),
                         ("form submissions", report["form_submissions"])):
        assert re.search(rf"<th>{label}</th><td class='n'>{value:,}</td>", html), label
    for why in report["browser"]["by_reason"]:
        assert escape(why) in html
    for name in ("coverage.png", "depth.png", "ranking.png"):
        assert (page / name).stat().st_size > 0


@pytest.mark.parametrize("given", [None, "DEBUG", "INFO"])
def test_third_party_loggers_follow_the_users_log_level(given):
    names = {name: logging.getLogger(name).level for name in LOGGERS}
    try:
        for name in LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)
        crawler = get_crawler(settings_dict={} if given is None else {"LOG_LEVEL": given})
        if given is None:  # Scrapy's default (DEBUG): the browser's lines are cut to INFO
            QuietThirdPartyLogs.from_crawler(crawler)
            assert all(logging.getLogger(n).level == logging.INFO for n in LOGGERS)
        else:  # the user's level is theirs, browser lines included
            with pytest.raises(NotConfigured):
                QuietThirdPartyLogs.from_crawler(crawler)
            assert all(logging.getLogger(n).level == logging.NOTSET for n in LOGGERS)
    finally:
        for name, level in names.items():
            logging.getLogger(name).setLevel(level)


def test_hwdla_logs_at_info_unless_the_user_sets_a_level():
    default = Settings()
    HwdlaSpider.update_settings(default)
    assert default["LOG_LEVEL"] == "INFO"
    asked = Settings()
    asked.set("LOG_LEVEL", "DEBUG", priority="cmdline")  # -L DEBUG
    HwdlaSpider.update_settings(asked)
    assert asked["LOG_LEVEL"] == "DEBUG"
