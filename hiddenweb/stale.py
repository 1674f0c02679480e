"""Close the crawl once its pages stop showing words it has not read: the crawl-level stopping rule.

A crawl of a site with an endless or very large URL space (a listing sortable by every column, a
detail page per record and an edit page beside it, a calendar per month) reads pages long after
it has read everything the site shows: each page is a new URL with a new fingerprint and
another arrangement of known text. The forms' rule (``HIDDENWEB_STOP_MASS``,
:mod:`hiddenweb.forms.stopping`) retires a form whose answers stop being new; nothing ended the
link crawl but ``CLOSESPIDER_PAGECOUNT``.

The rule here reads the *words* of each page the spider reads (the tokens of its text blocks,
:func:`hiddenweb.pagetext.text_blocks`, lower-cased; words of the request's own query and form
values left out, so a search that echoes its query says nothing new by that). A page is *fresh*
when it shows a word no earlier page of this crawl showed, or when it is a form's answer its
explorer judged new (a new set of records: :class:`hiddenweb.pagetext.ShownText`). The answer
of a form that never gave a new page, when it shows nothing new, does not count: a search box
whose first words find nothing may find pages later (the forms' own rule,
``HIDDENWEB_STOP_MASS``, lets such a form run to its limit). After ``HIDDENWEB_CLOSE_STALE``
pages in a row with no fresh one, the Good–Turing estimate of the chance that the next page
shows a new word (fresh pages among the last N, over N: Good 1953, the estimate
:mod:`hiddenweb.estimate` uses for forms) is 0 < 1/N, and the crawl closes with the reason
``hiddenweb_stale``. A record the site has not shown yet brings its own words (its name, its
number, its text), so a crawl still finding records is never stale; a page whose only new thing
is a known record in a new order or a new echo is, and so is a link's page showing a new subset
of known records.

Enabled by ``HIDDENWEB_CLOSE_STALE`` (pages; ``0`` turns it off). The pages counted are those the
``hwdla`` spider reads (:data:`hiddenweb.signals.page_read`): binary replies, which show no
words, neither extend nor break a run. It is off in shared mode (``HIDDENWEB_REDIS_URL``): a
worker reads only its share of the pages, and a worker that closed would leave its share of the
frontier to the others, not end the crawl; a crawl-wide rule would keep the words in Redis (not
built). The words are kept in memory (about 60 bytes a distinct word) and not in a JOBDIR: a
resumed crawl finds every word new again at first, which only delays the rule.

Stats: ``hiddenweb/stale/words`` (distinct words read), ``hiddenweb/stale/fresh_pages``,
``hiddenweb/stale/longest_run`` (the longest run of pages with no new word).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from hiddenweb import defaults
from hiddenweb import signals as hw_signals
from hiddenweb.estimate import STALE
from hiddenweb.pagetext import words

logger = logging.getLogger(__name__)

MAX_WORD_CHARS = 40  # a longer token (a hash, a base64 blob) is kept cut to this


def words_of(texts: Iterable[str]) -> set[str]:
    """The words of ``texts`` (:func:`hiddenweb.pagetext.words`), each cut to
    :data:`MAX_WORD_CHARS`."""
    return {word[:MAX_WORD_CHARS] for text in texts for word in words(text)}


class CloseWhenStale:
    """The extension: count pages with no new word in a row; close the spider at the limit."""

    def __init__(self, crawler: Crawler, window: int) -> None:
        self.crawler = crawler
        self.window = window
        self.words: set[str] = set()
        self.run = 0  # pages in a row with no new word
        self.closing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CloseWhenStale:
        window = crawler.settings.getint("HIDDENWEB_CLOSE_STALE",
                                         defaults.HIDDENWEB_CLOSE_STALE)
        if window <= 0:
            raise NotConfigured("HIDDENWEB_CLOSE_STALE is 0")
        if crawler.settings.get("HIDDENWEB_REDIS_URL"):
            raise NotConfigured("shared mode: a worker reads only its share of the pages")
        ext = cls(crawler, window)
        crawler.signals.connect(ext.page_read, signal=hw_signals.page_read)
        return ext

    def page_read(self, blocks: list[str], echoed: set[str], spider: Spider,
                  answer: str | None = None) -> None:
        """``page_read``: one page's text blocks, the words of its own request's values, and,
        for a form's answer, how its explorer judged it (``hiddenweb.forms.crawl.ANSWER_META``:
        ``"new"``, ``"known"`` or ``"blind"``). A form's answer judged new is fresh; a blind
        one (its form never gave a new page) neither extends nor breaks a run: a search box
        whose first words find nothing may find pages later."""
        on_page = words_of(blocks)
        answer_new = answer == "new"
        if not on_page and not answer_new:
            return  # nothing to read: a binary reply, an empty page
        stats = self.crawler.stats
        shown = on_page - words_of(echoed)  # an echo is the request's word, not the site's
        new = shown - self.words
        self.words |= shown
        if new or answer_new:
            self.run = 0
            stats.inc_value("hiddenweb/stale/fresh_pages")
            stats.set_value("hiddenweb/stale/words", len(self.words))
            return
        if answer == "blind":
            return  # neither fresh nor stale (above)
        self.run += 1
        stats.max_value("hiddenweb/stale/longest_run", self.run)
        if self.run >= self.window and not self.closing:
            self.closing = True
            logger.info("%d pages in a row showed no word the crawl had not read: closing "
                        "(HIDDENWEB_CLOSE_STALE=%d; 0 turns this off)", self.run, self.window)
            self.crawler.engine.close_spider(spider, STALE)
