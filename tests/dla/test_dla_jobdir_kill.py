"""JOBDIR after kill -9: the journal (hiddenweb/dla/journal.py) gives back every request that
was seen but not done, emits nothing twice, and refuses a JOBDIR it cannot resume."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from crawlrun import ENDED, run_crawl  # noqa: E402  (tests/ is on sys.path)
from dlakit import SITE, _Spider, drain, link, make  # noqa: E402
from scrapy.utils.test import get_crawler

from hiddenweb.bench import chaos
from hiddenweb.dla.jobdir import commit, settle
from hiddenweb.dla.journal import EMITTED_META, JID_META, JOURNAL_FILE, replay
from hiddenweb.dla.scheduler import DLAScheduler
from hiddenweb.pagetext import SeenContent


def test_killed_crawl_resumes_with_nothing_lost_and_nothing_emitted_twice(tmp_path: Path) -> None:
    """A real ``scrapy crawl`` with a JOBDIR, SIGKILLed twice at seeded moments and resumed
    (``-o``), against an uninterrupted one of the same 100-page site."""
    result = chaos.run(pages=100, kills=2, seed=3, progress=False, workdir=tmp_path)
    assert result["kills"] == 2 and result["killed"]["returncodes"][:2] == [-9, -9]
    assert result["killed"]["returncodes"][-1] == 0
    assert result["killed"]["finish_reason"] in ENDED
    assert result["uninterrupted"]["hidden_found"] > 0
    assert result["lost_hidden_pages"] == 0
    assert result["killed"]["hidden_found"] == result["uninterrupted"]["hidden_found"]
    _print_duplicates(result)
    assert result["duplicate_items"] == 0, result["duplicate_examples"]
    assert result["store_integrity"] == "ok"


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="scripts/install.sh installs it")
def test_killed_browser_crawl_resumes_with_nothing_lost_and_nothing_emitted_twice(
        tmp_path: Path) -> None:
    """The same with Chromium where pages need it (forms submitted by page actions, dependent
    selects probed): SIGKILLed twice and resumed, against an uninterrupted crawl."""
    result = chaos.run(pages=100, kills=2, seed=3, browser=True, progress=False,
                       workdir=tmp_path)
    assert result["kills"] == 2 and result["killed"]["returncodes"][-1] == 0
    assert result["killed"]["finish_reason"] in ENDED
    assert result["lost_hidden_pages"] == 0, result["lost_examples"]
    assert result["killed"]["hidden_found"] >= result["uninterrupted"]["hidden_found"] > 0
    _print_duplicates(result)
    assert result["duplicate_items"] == 0, result["duplicate_examples"]
    assert result["store_integrity"] == "ok"


def _print_duplicates(result: dict) -> None:
    """The items emitted twice, whole (pytest cuts an assertion's message; the run's workdir
    is gone with ``tmp_path``): printed, so a failure's captured output shows them."""
    if result["duplicate_items"]:
        print(json.dumps(result["duplicate_examples"], indent=1))


def _engine_with(*in_progress) -> SimpleNamespace:
    """What the scheduler reads of Scrapy's engine: the requests it has not finished."""
    return SimpleNamespace(_slot=SimpleNamespace(inprogress=set(in_progress)),
                           downloader=SimpleNamespace(active=set()),
                           scraper=SimpleNamespace(slot=None))


def test_served_unanswered_requests_are_pending_after_a_kill(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    for path in ("/a", "/b", "/c"):
        assert s.enqueue_request(link("/", path))
    first = s.next_request()
    s.engine = _engine_with(first)  # downloaded, its answer not handled yet
    second = s.next_request()
    s.engine = _engine_with(first)  # the second's answer was handled
    settle(s)
    commit(s, tmp_path)  # ... and a checkpoint holds it
    # killed here: no close(); the journal is all there is
    again = make(settings)
    assert sorted(drain(again)) == sorted([first.url.removeprefix(SITE), "/c"])
    assert not again.enqueue_request(link("/", second.url.removeprefix(SITE)))  # seen, done
    assert not again.enqueue_request(link("/", "/c"))  # seen, pending: not twice


def test_a_page_emitted_before_the_kill_is_a_repeat_to_any_request_but_its_own(
        tmp_path: Path) -> None:
    """Request /a's page was emitted (``I``), then the kill came before /a was done. Resumed,
    /a is read again without emitting; /b, whose answer is the same page, must read a repeat
    even when it comes first (before, it was new to it: the page was emitted twice)."""
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    for path in ("/a", "/b"):
        assert s.enqueue_request(link("/", path))
    a = s.next_request()
    s.journal.emitted(a.meta[JID_META], "fp-of-page")
    # killed here
    crawler = get_crawler(_Spider, settings)
    crawler.spider = crawler._create_spider()
    crawler.spider.seen = seen = SeenContent()
    again = DLAScheduler.from_crawler(crawler)
    again.open(crawler.spider)
    requests = {r.url.removeprefix(SITE): r for r in iter(again.next_request, None)}
    assert set(requests) == {"/a", "/b"}
    assert requests["/a"].meta[EMITTED_META] and EMITTED_META not in requests["/b"].meta
    assert not seen.judge(requests["/b"].meta, "fp-of-page")  # the same page by another way
    assert seen.judge(requests["/a"].meta, "fp-of-page")  # its own re-read: links made again
    assert not seen.judge({}, "fp-of-page")


def test_dupefilter_forgets_what_the_kill_kept_out_of_the_journal(tmp_path: Path) -> None:
    """The dupefilter file says seen, the journal has no such request (the kill came between):
    the request is forgotten, so the page that makes it, downloaded again, makes it again."""
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    s.enqueue_request(link("/", "/a"))
    s.df.request_seen(link("/", "/lost"))
    s.df.file.flush()
    again = make(settings)
    assert again.stats.get_value("hiddenweb/jobdir/forgotten") == 1
    assert again.enqueue_request(link("/", "/lost"))
    assert not again.enqueue_request(link("/", "/a"))


def test_torn_last_record_is_dropped_and_a_bad_one_refused(tmp_path: Path, caplog) -> None:
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    s.enqueue_request(link("/", "/a"))
    path = tmp_path / JOURNAL_FILE
    with path.open("a") as fh:
        fh.write("E\t1\tabc")  # the kill came in the middle of a write
    again = make(settings)
    assert drain(again) == ["/a"] and "torn" in caplog.text
    assert path.read_text().endswith("\n")
    with path.open("a") as fh:
        fh.write("D\t99\n")
    assert make(settings).failed == "jobdir_inconsistent"
    assert "request 99 done but never queued" in caplog.records[-1].getMessage()


def test_clean_close_compacts_the_journal(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    for i in range(20):
        s.enqueue_request(link("/", f"/p/{i}"))
    for _ in range(15):
        s.next_request()
    s.close("shutdown")
    state = replay(tmp_path / JOURNAL_FILE)
    assert len(state.pending) == 5 and len(state.seen) == 20
    assert sum(1 for line in (tmp_path / JOURNAL_FILE).open() if line.startswith("E")) == 5
    again = make(settings)
    assert drain(again) == [f"/p/{i}" for i in range(15, 20)]


def test_jobdir_with_dupefilter_but_no_journal_exits_1(served_site, tmp_path: Path) -> None:
    """A JOBDIR whose requests the journal cannot give back (an older hiddenweb's, another
    scheduler's, or its journal removed) is refused: one line, exit 1, the JOBDIR left alone."""
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    (jobdir / "requests.seen").write_bytes(b"\x00\x02ab")
    run = run_crawl(tmp_path, "-a", f"seed={served_site.url}/", settings={"JOBDIR": str(jobdir)},
                    timeout=120)
    assert run.returncode == 1
    assert "Cannot resume from JOBDIR" in run.stderr and "Use a new JOBDIR" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stats["finish_reason"] == "jobdir_inconsistent"
    assert not (jobdir / JOURNAL_FILE).exists()


def test_journal_is_compacted_as_it_grows(tmp_path: Path) -> None:
    settings = {"JOBDIR": str(tmp_path)}
    s = make(settings)
    for i in range(50):
        s.enqueue_request(link("/", f"/p/{i}"))
    for _ in range(45):
        s.next_request()
    settle(s)
    commit(s, tmp_path)
    path = tmp_path / JOURNAL_FILE
    size = path.stat().st_size
    assert s.journal.compact_if_grown(floor=0)
    assert path.stat().st_size < size / 3
    assert not s.journal.compact_if_grown(floor=0)  # not grown since
    s.enqueue_request(link("/", "/new"))  # appended to the compacted log; then a kill
    again = make(settings)
    assert drain(again) == [*(f"/p/{i}" for i in range(45, 50)), "/new"]
    assert not again.enqueue_request(link("/", "/p/3"))


def test_journal_killed_before_its_header_was_written(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_FILE).write_text("")
    s = make({"JOBDIR": str(tmp_path)})
    assert s.failed is None and s.enqueue_request(link("/", "/a"))
    assert drain(make({"JOBDIR": str(tmp_path)})) == ["/a"]
