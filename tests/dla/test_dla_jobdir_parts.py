"""JOBDIR checkpoint of the crawl's stateful parts (hiddenweb/dla/jobdir.py): the form explorers
and the trap guard's records come back after a kill, and an answer read before the page of its
form (after a resume) does not take the form from its page."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from hiddenweb.bench.provingground.site import SiteModel
from hiddenweb.dla.jobdir import PARTS_FILE, commit, settle
from hiddenweb.dla.journal import JOURNAL_FILE, replay
from hiddenweb.forms.submit import plain_request
from hiddenweb.spiders.hwdla import HwdlaSpider
from hiddenweb.trapguard import TemplateTrapGuard

HOST = "http://127.0.0.1:8"


def _spider() -> HwdlaSpider:
    crawler = get_crawler(HwdlaSpider, {"HIDDENWEB_BROWSER": "never"})
    crawler.spider = crawler._create_spider(seed=f"{HOST}/")
    return crawler.spider


def _page(site: SiteModel, path: str, meta: dict | None = None) -> HtmlResponse:
    _, _, body = site.render("GET", path)
    url = HOST + path
    return HtmlResponse(url, body=body, encoding="utf-8", request=Request(url, meta=meta or {}))


@pytest.fixture(scope="module")
def search_page() -> tuple[SiteModel, str]:
    """The proving ground's first plain GET search form and the page that shows it."""
    site = SiteModel(pages=100, seed=1)
    col = next(c for c in site.collections if c.kind == "search" and c.style == "plain"
               and not c.js)
    return site, site.graph.url(col.hosts[0])


def test_form_explorers_come_back_from_the_checkpoint(search_page) -> None:
    site, path = search_page
    spider = _spider()
    response = _page(site, path)
    sent = list(spider.forms.page(response, spider.visible(response)))
    assert sent and spider.forms.explorers
    state = pickle.loads(pickle.dumps(spider.jobdir_state()))  # as the checkpoint writes it
    resumed = _spider()
    resumed.restore_jobdir_state(state)
    assert resumed.forms.explorers.keys() == spider.forms.explorers.keys()
    for signature, before in spider.forms.explorers.items():
        after = resumed.forms.explorers[signature]
        assert after.tried == before.tried and after.submitted == before.submitted
        assert after.page == before.page == response.url
        data = {after.names[0]: "fern"}  # the form is parsed again: same request as before
        again = plain_request(after, data, callback=resumed.parse, errback=resumed.on_error)
        first = plain_request(before, data, callback=spider.parse, errback=spider.on_error)
        assert (again.method, again.url, again.body) == (first.method, first.url, first.body)
    # the page read again after the kill: its forms are known, nothing is sent twice
    assert list(resumed.forms.page(response, resumed.visible(response))) == []


def test_an_answer_read_before_its_form_page_leaves_the_form_to_its_page(search_page) -> None:
    """After a resume whose checkpoint predates the form, the journal gives back both the page
    that showed it and the form's answers, in any order: an answer that shows the form does
    not start exploring it there (its submissions would load the answer, not the page)."""
    site, path = search_page
    probe = _spider()
    response = _page(site, path)
    submission = next(iter(probe.forms.page(response, probe.visible(response))))
    resumed = _spider()  # nothing restored for this form
    # an answer that shows the form again (a script's results shown in the page, its URL
    # pushed: the proving ground's xhr forms)
    answer = HtmlResponse(submission.url, body=response.body, encoding="utf-8",
                          request=Request(submission.url, meta=dict(submission.meta)))
    assert list(resumed.forms.page(answer, resumed.visible(answer))) == []
    assert not resumed.forms.explorers
    assert resumed.crawler.stats.get_value("hiddenweb/forms/skipped/before_its_page") >= 1
    assert list(resumed.forms.page(response, resumed.visible(response)))  # its page: explored
    assert {e.page for e in resumed.forms.explorers.values()} == {response.url}


def test_trap_guard_counts_a_page_read_again_once_and_keeps_its_records() -> None:
    crawler = get_crawler(settings_dict={"HIDDENWEB_TEMPLATE_BUDGET": 10})
    guard = TemplateTrapGuard.from_crawler(crawler)
    url = f"{HOST}/calendar?month=2026-11"
    body = b"<html><body><a href='/calendar?month=2026-12'>next</a></body></html>"
    for _ in range(3):  # read again after a resume: one page
        guard.process_response(Request(url), HtmlResponse(url, body=body))
    assert [len(p) for p in guard.pages.values()] == [1]
    again = TemplateTrapGuard.from_crawler(get_crawler(
        settings_dict={"HIDDENWEB_TEMPLATE_BUDGET": 10}))
    again.restore_jobdir_state(pickle.loads(pickle.dumps(guard.jobdir_state())))
    assert again.pages == guard.pages and again.records == guard.records
    assert again.shapes == guard.shapes


def test_done_requests_stay_pending_until_a_checkpoint_holds_them(tmp_path: Path) -> None:
    """``D`` is written after the checkpoint of the parts: a kill before it reads the answer
    again (the parts' state does not hold it)."""
    from dlakit import link, make  # noqa: E402  (tests/ is on sys.path)

    s = make({"JOBDIR": str(tmp_path)})
    s.enqueue_request(link("/", "/a"))
    s.next_request()
    settle(s)  # done, but no checkpoint yet: killed here
    assert [jid for jid, _ in replay(tmp_path / JOURNAL_FILE).pending] == [0]
    commit(s, tmp_path)
    assert replay(tmp_path / JOURNAL_FILE).pending == []


def test_a_checkpoint_that_cannot_be_read_is_an_inconsistent_jobdir(tmp_path: Path) -> None:
    from dlakit import link, make  # noqa: E402  (tests/ is on sys.path)

    s = make({"JOBDIR": str(tmp_path)})
    s.enqueue_request(link("/", "/a"))
    (tmp_path / PARTS_FILE).write_bytes(b"not a pickle")
    again = make({"JOBDIR": str(tmp_path)})
    assert again.failed == "jobdir_inconsistent"


def test_explorer_judges_a_submission_once_and_adopts_one_sent_before_a_kill(search_page) -> None:
    """After a resume, an explorer restored from a checkpoint (or made anew from its page) is
    sent the answers of submissions the killed run made after it, and duplicates of its own:
    each is judged once and counted as sent, so that when the crawl goes idle the paused form
    is resumed (with more answers than submissions it never was: the chaos test lost the
    answers of a search form's later rounds)."""
    site, path = search_page
    spider = _spider()
    response = _page(site, path)
    list(spider.forms.page(response, spider.visible(response)))
    explorer = next(iter(spider.forms.explorers.values()))
    first = [{}] + [dict(zip(explorer.names, c, strict=True)) for c in explorer.tried]
    queue = []
    for data in first:
        queue += explorer.feedback(data, False)
    field = explorer.names[0]
    unsent = next(v for v in explorer.values[0]
                  if (v,) not in explorer.tried and {field: v} not in queue)
    queue += explorer.feedback({field: unsent}, False)  # the killed run sent it after the
    queue += explorer.feedback(first[1], False)  # checkpoint; a duplicate the dupefilter drops
    assert explorer.answers == len(first) + 1 and explorer.in_flight == len(queue)
    while queue:  # the rest of its answers: its blind budget is spent, it pauses
        queue += explorer.feedback(queue.pop(0), False)
    assert explorer.paused and explorer.in_flight == 0
    assert explorer.resume()  # idle: another round


def test_a_request_not_filtered_that_its_parent_makes_again_is_not_sent_twice(
        tmp_path: Path) -> None:
    """A page read after the last checkpoint is read again after a kill, and makes its requests
    again: the dupefilter drops the copies, except of a request not filtered (a retry, a form
    submitted in Chromium). Such a copy of a request the journal gives back is dropped (the
    chaos test's ``/error/500``, retried, was emitted three times)."""
    from dlakit import drain, link, make  # noqa: E402  (tests/ is on sys.path)

    s = make({"JOBDIR": str(tmp_path)})
    s.enqueue_request(link("/", "/error/500"))
    parent = s.next_request()
    retry = parent.replace(dont_filter=True)  # what RetryMiddleware sends: a copy
    assert s.enqueue_request(retry)
    settle(s)  # the parent is done, no checkpoint holds it: killed here
    again = make({"JOBDIR": str(tmp_path)})
    reread = again.next_request()  # the parent, read again, is retried again
    assert reread.url == parent.url and not reread.dont_filter
    assert not again.enqueue_request(reread.replace(dont_filter=True))
    assert again.stats.get_value("hiddenweb/jobdir/remade_dropped") == 1
    other = reread.replace(dont_filter=True, meta={**reread.meta, "hiddenweb_action": {
        "kind": "form", "page": "/", "label": "", "form": {"signature": "s", "fields": {}}}})
    assert again.enqueue_request(other)  # not a copy of what it made before
    assert drain(again) == ["/error/500", "/error/500"]  # the retry given back, and `other`


def test_a_checkpoint_kept_waiting_holds_new_downloads_until_it_is_written(
        tmp_path: Path) -> None:
    """A busy crawl's scraper is seldom idle: a checkpoint due for COMMIT_PATIENCE holds new
    downloads back until the answers in hand are read and it is written (on a 10^3-page site
    killed every 3 s, none was ever written, and every resume read the crawl again)."""
    import time

    from dlakit import link, make  # noqa: E402  (tests/ is on sys.path)

    from hiddenweb.dla.jobdir import COMMIT_PATIENCE, try_commit

    s = make({"JOBDIR": str(tmp_path)})
    for path in ("/a", "/b"):
        s.enqueue_request(link("/", path))
    s.commit_due = time.monotonic() - COMMIT_PATIENCE - 1
    assert s.next_request() is None and s.stats.get_value("hiddenweb/jobdir/commit_holds") == 1
    try_commit(s)  # no answer being read (no engine): written
    assert s.commit_due is None and (tmp_path / PARTS_FILE).exists() is False  # no parts here
    assert s.stats.get_value("hiddenweb/jobdir/commits") == 1
    assert s.next_request() is not None


def test_a_submission_given_back_on_resume_is_not_sent_again_from_another_copy(
        search_page) -> None:
    """The killed crawl sent its form's first wave from one page; after the resume the form is
    met first on another page that shows it (another token, another page around the answer:
    in Chromium a query's answer is that page with the results in it). The submissions the
    journal gave back count as sent: the new explorer sends none of them again, and one whose
    answer came before the explorer counts as answered."""
    site, _ = search_page
    col = next(c for c in site.collections if c.kind == "search" and c.style == "plain"
               and not c.js and len(c.hosts) >= 2)
    first_page, other_page = (_page(site, site.graph.url(h)) for h in col.hosts[:2])
    killed = _spider()
    sent = list(killed.forms.page(first_page, killed.visible(first_page)))
    assert len(sent) >= 2
    resumed = _spider()  # the checkpoint predates the form: no explorer restored
    for request in sent:  # as hiddenweb.dla.jobdir.open_job does with the journal's pending
        resumed.forms.pending_after_resume(request.meta)
    assert list(resumed.forms.feedback(dict(sent[0].meta), None, False)) == []  # before it
    again = list(resumed.forms.page(other_page, resumed.visible(other_page)))
    before = [r.meta["hiddenweb_explore_data"] or {} for r in sent]
    after = [r.meta["hiddenweb_explore_data"] or {} for r in again]
    assert again and not [data for data in after if data in before]
    explorer = resumed.forms.explorers[sent[0].meta["hiddenweb_explore"]]
    assert explorer.submitted == len(sent) + len(again)
    assert explorer.answers == 1 and explorer.answered_before(before[0])
    assert resumed.crawler.stats.get_value("hiddenweb/forms/resumed_submissions") == len(sent)
    # without them, the other page's copy sends its defaults again (its values come from its
    # own page's words)
    fresh = _spider()
    repeat = list(fresh.forms.page(other_page, fresh.visible(other_page)))
    assert {} in [r.meta["hiddenweb_explore_data"] or {} for r in repeat] and {} in before
