""":meth:`hiddenweb.forms.crawl.FormCrawler.heard`, the rule for a form submitted in Chromium
that sends no request (served end to end in ``tests/browser/test_browser_page_only_forms.py``):
its wave while it is judged, its end, and its wave given back once one submission sends."""

from __future__ import annotations

from types import SimpleNamespace

from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from hiddenweb.forms.crawl import FormCrawler


def _crawler(after: int) -> SimpleNamespace:
    stats = MemoryStatsCollector(get_crawler())
    return SimpleNamespace(config=SimpleNamespace(page_only_after=after), stats=stats,
                           wave_for=lambda by_browser: 8)  # a browser form's wave


def _explorer() -> SimpleNamespace:
    return SimpleNamespace(silent=0, heard=False, wave=8, limit=400, submitted=3,
                           signature="GET / [bookmark]", page="http://h/")


def test_a_form_sending_nothing_goes_one_at_a_time_then_ends_at_the_nth_silent_answer():
    forms, explorer = _crawler(3), _explorer()
    FormCrawler.heard(forms, explorer, 0)
    assert (explorer.wave, explorer.limit) == (1, 400)  # judged one at a time
    FormCrawler.heard(forms, explorer, 0)
    assert (explorer.wave, explorer.limit) == (1, 400)
    again = _explorer()  # the same two silent answers, then one that sends: its own wave back
    for sent in (0, 0, 1):
        FormCrawler.heard(forms, again, sent)
    assert (again.wave, again.limit) == (8, 400)
    explorer.submitted = 5
    FormCrawler.heard(forms, explorer, 0)
    assert explorer.limit == 5  # ended: nothing more is sent
    assert forms.stats.get_value("hiddenweb/forms/page_only") == 1


def test_a_form_that_sends_once_gets_its_wave_back_and_is_never_ended():
    forms, explorer = _crawler(2), _explorer()
    FormCrawler.heard(forms, explorer, 0)
    FormCrawler.heard(forms, explorer, 2)  # a navigation, a fetch: it talks to a server
    assert (explorer.wave, explorer.heard) == (8, True)
    for _ in range(5):
        FormCrawler.heard(forms, explorer, 0)
    assert explorer.limit == 400 and not forms.stats.get_value("hiddenweb/forms/page_only")
    off, other = _crawler(0), _explorer()  # the lab knob 0: off
    for _ in range(5):
        FormCrawler.heard(off, other, 0)
    assert (other.wave, other.limit) == (8, 400)
