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
when it shows a word no earlier page of this crawl showed; a form's answer too (its explorer
may judge it new for a new set of known records, :class:`hiddenweb.pagetext.ShownText`: a
table's filter form gives one per facet and hidden column, and counting those as fresh kept a
Datasette crawl open to its time cap; lab knob ``stale_answer_verdict`` counts them). The
answer of a form that never gave a new page, when it shows nothing new, does not count: a search box
whose first words find nothing may find pages later (the forms' own rule,
``HIDDENWEB_STOP_MASS``, lets such a form run to its limit). After ``HIDDENWEB_CLOSE_STALE``
pages in a row with no fresh one, the Good–Turing estimate of the chance that the next page
shows a new word (fresh pages among the last N, over N: Good 1953, the estimate
:mod:`hiddenweb.estimate` uses for forms) is 0 < 1/N, and the crawl closes with the reason
``hiddenweb_stale``. A record the site has not shown yet brings its own words (its name, its
number, its text), so a crawl still finding records is never stale; a page whose only new thing
is a known record in a new order or a new echo is, and so is a page showing a new subset of
known records.

A page's browser render that added something to follow which no earlier render added (a link,
frame or form its plain copy lacked, a script request not made before: the render gate's
verdict, :data:`~hiddenweb.pagetext.RENDER_ADDED_META`) is fresh too, whatever its words (lab
knob ``stale_render_added``, on): the crawl is still finding the part of the site only the
browser reaches. Without it, a chain of pages each linked only by the render of the one before,
all showing words already read, was cut where a run of other stale pages reached the limit:
the proving ground's 1,000-page site found 0 of its 307 browser-only pages in two runs, and
304 and 305 with it. A template whose renders stop adding anything is no longer rendered (the
render gate), so renders cannot keep a crawl open for ever.

A *hidden record's page* whose ``<title>`` no page read had is fresh too, whatever its words
(lab knob ``stale_record_titles``, on): a page reached only through a form
(``hiddenweb_form_only``), not a form's answer itself, a GET of a path with no query. A
record's page shows its own words only where the site's records have them; a catalogue whose
records are named by words its listings already showed ("Studio Orchestra 22") read each of
them as stale, and a crawl closed with a search form's records unread: the proving ground's
1,000-page site, whose records are named from a small vocabulary, found 214-239 of its 307
browser-only pages in 3 of 11 runs, its script-built search form's guesses served after the
run of stale record pages reached the limit. Views of a page (a query) and the pages of its
listing are left to the words: a table's every filter and sort has a title of its own. Titles
are kept as hashes (:data:`MAX_TITLES`). With the lab knob ``stale_public_titles`` (off) a
public page's new title counts too: Trac's ticket pages, linked from a report that showed their
summaries, are then fresh, but a site's every named public page is (``docs/design-notes.md``).

Enabled by ``HIDDENWEB_CLOSE_STALE`` (pages; ``0`` turns it off). The pages counted are those the
``hwdla`` spider reads (:data:`hiddenweb.signals.page_read`): binary replies, which show no
words, neither extend nor break a run. It is off in shared mode (``HIDDENWEB_REDIS_URL``): a
worker reads only its share of the pages, and a worker that closed would leave its share of the
frontier to the others, not end the crawl; a crawl-wide rule would keep the words in Redis (not
built). The words are kept in memory (about 60 bytes a distinct word) and not in a JOBDIR: a
resumed crawl finds every word new again at first, which only delays the rule.

Three kinds of new word are not the site's content and do not make a page fresh:

* **Numbers that change when the same page is read again** (a query timer, "generated in
  0.031 s", a clock, "3 minutes ago"): a block's *shape* is its text with each run of digits
  folded to ``#``; when a URL is read twice (a page and its browser render, a redirect's
  target, a form's answer met again) and a shape on both copies shows other numbers, the shape
  is *volatile*, and from then on the words with digits of any block of that shape are left
  out. A record's number does not change when its page is read again, so it still counts.
  When a page is fresh only by words with digits in blocks of shapes not compared yet, the
  rule asks for that page once more (:data:`hiddenweb.signals.recheck_wanted`; at most
  :data:`MAX_RECHECKS` a crawl): without it a site that times every answer and renders no page
  twice would never be stale.
* **A known record's id under other letters** (a tracker's issue page names ``msg255``, the
  message's own page calls itself ``message255``): a new word of letters then a number whose
  number was read in a word of other letters and that number. A new record's id is new the
  first time any page shows it, under whichever letters.
* **Pieces of words** (a search result's snippet cut mid-word, "…ertinent obligations"): a
  new word of letters only that stands only at a cut (first or last word of a block, or beside
  an ellipsis) and is a proper prefix or suffix of a word already read.

The pages a crawl reads are not a random sample of what is left: the scheduler picks them. So
the rule does not close while requests wait of a *kind* of page (:func:`page_kind`: the URL
template with its last path segment folded, ``/wiki/*``, ``/ticket/*``; with the lab knob
``stale_query_kinds`` (off) also its query's keys, ``/wiki/*?version``: other views of a
kind's pages, all stale, made a DokuWiki crawl's ``/doku.php`` pages look stale, and it closed
with 24 of its 108 pages linked and unread, but each facet combination of a Datasette table
became a kind fresh by its numbers; a form's answers are a
kind of their own, its endpoint, :func:`request_kind`, lab knob ``stale_form_kinds``: a
Datasette crawl closed with its canned query's last symbols queued, two more requests of its
mostly stale tables' kind ``/vega/*``, and lost 246 rows) whose pages were mostly
fresh (more than half, counting one fresh and one stale page more: a kind not read yet does
not count) and of which one was read among the last ``HIDDENWEB_CLOSE_STALE`` pages, and
closes at the next stale page once none waits (``hiddenweb/stale/deferred``: stale pages past
the limit while some did), or at twice the limit. The scheduler may keep such requests behind
others for the rest of the crawl (Datasette's row pages, once fresh, stayed queued by the
hundred behind facet pages; waiting for them held the crawl open to its time cap; a Trac crawl
closed with 14 linked wiki pages still queued, each of which would have been fresh): so at the
limit, when requests wait of a mostly fresh kind none of which was read lately, the rule asks
the scheduler to serve them first (:data:`hiddenweb.signals.serve_first_wanted`, each kind
once; the DLA scheduler's ``serve_first`` lifts the groups that hold them; stat
``hiddenweb/stale/lifted``) and waits for that kind as for one being read, for
:data:`LIFT_LOOK` of its requests at most: the pages read then say whether it is still fresh
(a kind of media or downloads shows no page: without the bound a DokuWiki crawl waited on
its ``/lib/exe/*`` requests to its page cap). A scheduler that does not answer the signal
changes nothing. Nor does the rule close while an *awaited read* (meta
:data:`~hiddenweb.pagetext.AWAITED_META`: a page's browser render, a new form's first
submissions, a request of a kind lifted while the rule looks at it, lab knob
``stale_await_lifted``: downloaded, it no longer waits in the scheduler, and a test crawl
closed with its six lifted records downloaded and not parsed) is in flight (it reached the
downloader, and was not read and did not fail yet),
for :data:`AWAIT_SECONDS` at most after the limit: what it shows is not known, and once the
close has begun no request it leads to is downloaded (a Datasette crawl closed with its canned
query's render in flight and never sent the query's form). Meanwhile the engine sends no other
request (``engine.pause``, stat ``hiddenweb/stale/held``): pages read then would only be more
pages of a crawl about to close, and one of them showing a stray new word kept the crawl open
(measured: Datasette's crawls took 53–73 s instead of 35–42 s while other pages were read
during the wait). The hold ends once the awaited reads are read or failed, once a page is fresh,
or at the bound. An awaited read sent back to the scheduler (a redirect, a retry) is still
awaited but not in flight: the hold is released so that it can be sent, and the scheduler is
asked to serve it first (:data:`hiddenweb.signals.serve_first_wanted`). Of the awaited reads
never sent, a new form's first submissions are waited for too, within the same bound and until
:data:`LIFT_LOOK` of them were read: the scheduler is asked to serve them first, and the rule
waits only if it lifted some; what those read show decides (a form not
answered yet is the part of a site a link crawl misses, and a close that came while one waited
lost it: under load, a demo crawl closed with a new search form's first wave queued and lost
the 31 pages behind it; lab knob ``stale_wait_queued_answers``). Queued renders are not waited
for: a page's plain copy was read, and the scheduler already serves renders first. With the
same knob, each time a run reaches the limit the rule sends
:data:`hiddenweb.signals.stale_limit_reached`: the form crawler ends the holds of guesses that
wait for an endpoint's answers to be read (a crawl about to close will not read them; a
Datasette crawl closed with its canned query's last symbols held so, and lost 123 rows), and
what that releases is waited for as a new form's first answers (stat
``hiddenweb/stale/holds_ended``: requests sent).

With the lab knob ``stale_numbers_neutral`` (off), a page whose only new words are numerals
its own URL does not carry (a search's hit counts, a facet's counts: "licenses (104)", "34
Hits") neither restarts nor extends the run, though it counts as fresh for its kind of page; a
number the page's URL carries is a record's id (``/ticket/17`` showing ``#0017``) and restarts
it. A DokuWiki crawl with every unit read by its 204th request read 420 search-refinement
answers more, its run restarted by hit counts alone; but on Trac the limit, reached more
often, had form answers served ahead of the ticket pages, and the crawls read 84 and 105 of
its 260 pages against 259 (``docs/design-notes.md``).

Stats: ``hiddenweb/stale/words`` (distinct words read), ``hiddenweb/stale/fresh_pages``,
``hiddenweb/stale/longest_run`` (the longest run of pages with no new word),
``hiddenweb/stale/volatile_shapes``, ``hiddenweb/stale/relabels`` (new words left out as known
ids under other letters), ``hiddenweb/stale/pieces`` (new words left out as pieces),
``hiddenweb/stale/numbers_only`` (pages new only by numerals, neutral),
``hiddenweb/stale/renders_added`` (renders fresh by what they added alone),
``hiddenweb/stale/records_titled`` (hidden records' pages fresh by their title alone),
``hiddenweb/stale/answers_lifted`` (a new form's queued first submissions served first),
``hiddenweb/stale/rechecks`` (pages asked for again), ``hiddenweb/stale/lifted`` (kinds the
scheduler was asked to serve first), ``hiddenweb/stale/held`` (holds for awaited reads).
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.request import fingerprint

from hiddenweb import defaults
from hiddenweb import signals as hw_signals
from hiddenweb.config import lab
from hiddenweb.dla.kinds import url_template
from hiddenweb.estimate import STALE
from hiddenweb.forms.submit import is_submission
from hiddenweb.pagetext import (
    AWAITED_META,
    FRESH_META,
    NUMBERS_NEW,
    RECHECK_META,
    RENDER_ADDED_META,
    WORDS_NEW,
    template_key,
    word_matches,
    words,
)

logger = logging.getLogger(__name__)

MAX_WORD_CHARS = 40  # a longer token (a hash, a base64 blob) is kept cut to this
MAX_SHAPE_CHARS = 200  # a block's shape is cut to this
RECENT_URLS = 256  # URLs whose numbered shapes are kept, to compare with a second reading
MAX_RECHECKS = 10  # pages read again to compare their numbers, at most, in a crawl
MAX_KINDS = 10_000  # kinds of page whose fresh share is kept
MAX_TITLES = 1_000_000  # pages' titles kept (as hashes) to judge a hidden record's page by
MAX_QUEUED_ANSWERS = 10_000  # a new form's queued first submissions kept track of, at most
#: requests of a kind served first that are waited for, at most: what they show then decides
#: (a kind whose requests are binary, media or downloads, shows no page to judge it by)
LIFT_LOOK = 10
#: seconds the rule waits, at most, for awaited reads (a render: Chromium's navigation timeout,
#: ``HIDDENWEB_BROWSER_TIMEOUT``, 20 s, and its events) once it would close
AWAIT_SECONDS = 30.0
_DIGITS = re.compile(r"\d+")
_LABELLED = re.compile(r"([^\W\d_]+)(\d+)")  # an id: letters, then a number ("msg255")
_ELLIPSES = ("...", "\u2026")


def words_of(texts: Iterable[str]) -> set[str]:
    """The words of ``texts`` (:func:`hiddenweb.pagetext.words`), each cut to
    :data:`MAX_WORD_CHARS`."""
    return {word[:MAX_WORD_CHARS] for text in texts for word in words(text)}


def is_first_answer(request: Request) -> bool:
    """Whether ``request`` is a new form's first submission not sent yet: awaited
    (:data:`~hiddenweb.pagetext.AWAITED_META` still ``True``, no token) and a form's
    (:func:`hiddenweb.forms.submit.is_submission`), not a render."""
    return request.meta.get(AWAITED_META) is True and is_submission(request)


def page_kind(url: str, query: bool = False) -> str:
    """The kind of page ``url`` is: its template (:func:`hiddenweb.pagetext.template_key`) with
    the last path segment made ``*`` when there are two or more (``/wiki/TracCgi`` →
    ``/wiki/*``; ``/timeline`` stays) and, with ``query`` (lab knob ``stale_query_kinds``), its
    query's sorted keys (``/wiki/TracCgi?version=2`` → ``/wiki/*?version``: another view of a
    page, a kind of its own; ``/doku.php?id=start`` → ``/doku.php?id``)."""
    key = template_key(url)
    head, _, _ = key.rpartition("/")
    kind = f"{head}/*" if "/" in head else key
    if not query:
        return kind
    _, sep, keys = url_template(url).partition("?")  # its sorted query keys, if any
    return kind + sep + keys


FORM_KIND = "form "  # the kind of a form's answers: this, then its endpoint


def request_kind(request: Request, query: bool = False) -> str:
    """The kind of page ``request``'s answer is: for a form's submission its endpoint
    (``form GET /db/query``: the answers of one form, whatever its action's path looks like),
    else :func:`page_kind` of its URL (``query``: with its query's keys)."""
    if is_submission(request):
        return FORM_KIND + (request.meta.get("hiddenweb_origin")
                            or page_kind(request.url, query))
    return page_kind(request.url, query)


def numbered(blocks: Iterable[str]) -> dict[str, frozenset[str]]:
    """The *shapes* of the ``blocks`` that hold a digit (a block lower-cased, its whitespace
    folded, each run of digits made ``#``: "Query took 3.1ms" and "Query took 12.7ms" share
    one), each with the set of those blocks' folded texts: what a second reading of the same
    URL is compared with."""
    found: dict[str, set[str]] = {}
    for block in blocks:
        if any(c.isdigit() for c in block):
            folded = " ".join(block.lower().split())
            found.setdefault(_DIGITS.sub("#", folded)[:MAX_SHAPE_CHARS], set()).add(folded)
    return {key: frozenset(texts) for key, texts in found.items()}


def cut_words(blocks: Iterable[str]) -> tuple[set[str], set[str]]:
    """The words of ``blocks`` at a cut (a block's first or last word, a word beside an
    ellipsis) and those elsewhere, each cut to :data:`MAX_WORD_CHARS`."""
    at_cut: set[str] = set()
    inside: set[str] = set()
    for block in blocks:
        text = block.lower()
        tokens = list(word_matches(block))
        for i, token in enumerate(tokens):
            word = token.group()[:MAX_WORD_CHARS]
            cut = (i == 0 or i == len(tokens) - 1
                   or text[:token.start()].rstrip().endswith(_ELLIPSES)
                   or text[token.end():].lstrip().startswith(_ELLIPSES))
            (at_cut if cut else inside).add(word)
    return at_cut, inside


class Vocabulary:
    """The words a crawl has read, indexed to tell a piece of one (a proper prefix or suffix)
    from a new word; about 150 bytes a distinct word."""

    def __init__(self) -> None:
        self.words: set[str] = set()
        self._heads: dict[str, set[str]] = {}  # first 3 letters → words of letters
        self._tails: dict[str, set[str]] = {}  # last 3 letters → words of letters
        self._ends: set[str] = set()  # "<" + 1- and 2-letter prefixes, ">" + suffixes
        self._labels: dict[str, set[str]] = {}  # number → the letters of ids read with it

    def __len__(self) -> int:
        return len(self.words)

    def add(self, new: Iterable[str]) -> None:
        for word in new:
            if word in self.words:
                continue
            self.words.add(word)
            labelled = _LABELLED.fullmatch(word)
            if labelled:
                self._labels.setdefault(labelled[2], set()).add(labelled[1])
            if word.isalpha():
                self._heads.setdefault(word[:3], set()).add(word)
                self._tails.setdefault(word[-3:], set()).add(word)
                self._ends.update(("<" + word[:1], "<" + word[:2],
                                   ">" + word[-1:], ">" + word[-2:]))

    def is_relabel(self, word: str) -> bool:
        """Whether ``word`` is an id (letters, then a number: ``message255``) whose number was
        read in an id of other letters (``msg255``): one record named again."""
        labelled = _LABELLED.fullmatch(word)
        return bool(labelled) and bool(self._labels.get(labelled[2], set()) - {labelled[1]})

    def is_piece(self, word: str) -> bool:
        """Whether ``word`` (letters only, not read yet) begins or ends a word read."""
        if not word.isalpha() or word in self.words:
            return False
        if len(word) < 3:
            return "<" + word in self._ends or ">" + word in self._ends
        return (any(w.startswith(word) for w in self._heads.get(word[:3], ()))
                or any(w.endswith(word) for w in self._tails.get(word[-3:], ())))


class CloseWhenStale:
    """The extension: count pages with no new word in a row; close the spider at the limit."""

    def __init__(self, crawler: Crawler, window: int) -> None:
        self.crawler = crawler
        self.window = window
        self.words = Vocabulary()
        self.run = 0  # pages in a row with no new word
        self.closing = False
        self.volatile: set[str] = set()  # shapes whose numbers changed on a second reading
        self.recent: OrderedDict[str, dict[str, frozenset[str]]] = OrderedDict()
        self.compared: set[str] = set()  # shapes read twice on one URL
        self.rechecks = 0
        self.pages = 0  # pages read
        #: page kind → [pages read, fresh ones, the number of the last one read]
        self.kinds: dict[str, list[int]] = {}
        self.waiting: dict[str, int] = {}  # page kind → requests scheduled, not downloaded
        self.form_urls: dict[str, str] = {}  # a form's submission's URL → its kind
        self.deferred = False
        self.lifted: dict[str, int] = {}  # kinds asked to be served first → downloads since
        #: a form's answer judged new by its explorer is fresh with no new word (lab knob)
        self.answer_verdict = False
        #: awaited reads (AWAITED_META) in flight: reached the downloader, not read or failed yet
        self.in_flight: set[int] = set()
        #: awaited reads sent back to the scheduler (a redirect, a retry): token → URL
        self.requeued: dict[int, str] = {}
        self.requeued_lifted: set[int] = set()  # those the scheduler was asked to serve first
        #: a new form's first submissions in the scheduler, not sent yet: fingerprint → URL
        self.queued_answers: dict[bytes, str] = {}
        self.answers_asked: set[bytes] = set()  # those the scheduler was asked to serve first
        self.answers_served = False  # whether the scheduler lifted some of them
        self.answers_looking: set[int] = set()  # tokens of those sent once lifted, not read yet
        self.answers_looked = 0  # of those, read or failed
        self.answers_logged = False  # whether this run of stale pages logged lifting them
        self.wait_queued_answers = True  # lab knob stale_wait_queued_answers
        self.form_kinds = True  # lab knob stale_form_kinds: a form's answers, a kind of their own
        #: a page new only by numerals its URL does not carry neither breaks nor extends a run
        self.numbers_neutral = False  # lab knob stale_numbers_neutral
        #: the engine is paused for awaited reads only when no request of a fresh kind waits
        self.hold_only_closing = True  # lab knob stale_hold_only_closing
        #: a page's kind has its query's keys: another view of a page is a kind of its own
        self.query_kinds = False  # lab knob stale_query_kinds
        #: a hidden record's page under a title no page had is fresh (lab knob stale_record_titles)
        self.record_titles = True
        self.titles: set[int] = set()  # hashes of the titles of pages read
        self.public_titles = False  # lab knob stale_public_titles: a public page's too
        self._tokens = 0
        self.holding: Any = None  # the timer (a DelayedCall) that ends a hold: engine paused
        self.call_later = None  # reactor.callLater (tests give their own)
        self.awaiting_since: float | None = None  # when the limit was reached with some

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CloseWhenStale:
        window = crawler.settings.getint("HIDDENWEB_CLOSE_STALE",
                                         defaults.HIDDENWEB_CLOSE_STALE)
        if window <= 0:
            raise NotConfigured("HIDDENWEB_CLOSE_STALE is 0")
        if crawler.settings.get("HIDDENWEB_REDIS_URL"):
            raise NotConfigured("shared mode: a worker reads only its share of the pages")
        ext = cls(crawler, window)
        ext.answer_verdict = bool(lab(crawler.settings, "stale_answer_verdict"))
        ext.wait_queued_answers = bool(lab(crawler.settings, "stale_wait_queued_answers"))
        ext.form_kinds = bool(lab(crawler.settings, "stale_form_kinds"))
        ext.numbers_neutral = bool(lab(crawler.settings, "stale_numbers_neutral"))
        ext.hold_only_closing = bool(lab(crawler.settings, "stale_hold_only_closing"))
        ext.query_kinds = bool(lab(crawler.settings, "stale_query_kinds"))
        ext.render_added = bool(lab(crawler.settings, "stale_render_added"))
        ext.await_lifted = bool(lab(crawler.settings, "stale_await_lifted"))
        ext.record_titles = bool(lab(crawler.settings, "stale_record_titles"))
        ext.public_titles = bool(lab(crawler.settings, "stale_public_titles"))
        crawler.signals.connect(ext.page_read, signal=hw_signals.page_read)
        crawler.signals.connect(ext._release, signal=signals.spider_closed)
        crawler.signals.connect(ext.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(ext.request_dropped, signal=signals.request_dropped)
        crawler.signals.connect(ext.request_reached_downloader,
                                signal=signals.request_reached_downloader)
        crawler.signals.connect(ext.request_gone, signal=signals.request_left_downloader)
        return ext

    def page_read(self, blocks: list[str], echoed: set[str], spider: Spider,
                  answer: str | None = None, url: str | None = None,
                  awaited: int | bool = False, request: Request | None = None,
                  title: str | None = None) -> None:
        """``page_read``: one page's text blocks, the words of its own request's values, and,
        for a form's answer, how its explorer judged it (``hiddenweb.forms.crawl.ANSWER_META``:
        ``"new"``, ``"known"`` or ``"blind"``), the page's URL, and whether its request was an
        awaited read (its :data:`~hiddenweb.pagetext.AWAITED_META`; also sent, with no blocks,
        when such a request failed), and the ``request`` it answers (its kind of page,
        :func:`request_kind`; else :func:`page_kind` of ``url``). A form's answer judged new
        is fresh; a blind one (its
        form never gave a new page) neither extends nor breaks a run: a search box whose first
        words find nothing may find pages later."""
        if awaited and awaited is not True:  # True: it failed before the downloader (True == 1)
            self._awaited_done(awaited)
            if awaited in self.answers_looking:
                self.answers_looking.discard(awaited)
                self.answers_looked += 1
        on_page = words_of(blocks)
        # a render that added something to follow no render added before (lab knob
        # stale_render_added): the JS-only part of the site is still being found
        render_new = self.render_added and request is not None \
            and bool(request.meta.get(RENDER_ADDED_META))
        answer_new = answer == "new" and self.answer_verdict
        record_new = self._new_record(title, request, answer, url)
        judged_new = answer_new or render_new or record_new  # fresh whatever its words
        if not on_page and not judged_new:
            return  # nothing to read: a binary reply, an empty page
        stats = self.crawler.stats
        shapes = numbered(blocks)
        if url is not None:
            self._compare(url, shapes)
        shown = on_page - words_of(echoed)  # an echo is the request's word, not the site's
        new = shown - self.words.words
        numbers_only = False
        if new:
            new = self._content(new, blocks, shapes)
            if new and url is not None and not any(word.isalpha() for word in new):
                self._recheck(url, shapes, spider)
            numbers_only = self.numbers_neutral and self._numbers_only(new, url)
        self.words.add(shown)
        self.pages += 1
        if request is not None:  # the DLA's feedback reads it (hiddenweb.dla.feedback)
            request.meta[FRESH_META] = (WORDS_NEW if any(not w.isdecimal() for w in new)
                                        else NUMBERS_NEW if new else 0)
        if request is not None and self.form_kinds:
            kind: str | None = request_kind(request, self.query_kinds)
        else:
            kind = page_kind(url, self.query_kinds) if url is not None else None
        if kind is not None and len(self.kinds) < MAX_KINDS:
            counts = self.kinds.setdefault(kind, [0, 0, 0])
            counts[0] += 1
            counts[1] += bool(new or judged_new)
            counts[2] = self.pages
        if numbers_only and not judged_new:  # fresh for its kind (above), not for the run
            stats.inc_value("hiddenweb/stale/numbers_only")
            return
        if new or judged_new:
            why = ""
            if render_new and not new:
                stats.inc_value("hiddenweb/stale/renders_added")
                why = " (a render that added something to follow)"
            elif answer_new and not new:
                why = " (a form's answer judged new)"
            elif record_new and not new:
                stats.inc_value("hiddenweb/stale/records_titled")
                why = " (a hidden record's page under a title no page had)"
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("fresh page %s (run %d): %s%s", url, self.run, sorted(new)[:8], why)
            self.run = 0
            self.answers_logged = False
            self.answers_looked = 0  # not stale: queued first answers may be looked at again
            if self.holding is not None:
                self._release()  # not closing: send requests again
            stats.inc_value("hiddenweb/stale/fresh_pages")
            stats.set_value("hiddenweb/stale/words", len(self.words))
            return
        if answer == "blind":
            return  # neither fresh nor stale (above)
        self.run += 1
        stats.max_value("hiddenweb/stale/longest_run", self.run)
        if self.run >= self.window and not self.closing:
            if self.run == self.window and self.wait_queued_answers:
                sent = self._sum_of(self.crawler.signals.send_catch_log(
                    hw_signals.stale_limit_reached, spider=spider))
                if sent:
                    stats.inc_value("hiddenweb/stale/holds_ended", sent)
            waiting = self._fresh_kinds_waiting() if self.run < 2 * self.window else []
            if (self.in_flight or self.requeued) and self._awaiting_for() < AWAIT_SECONDS:
                # the engine is paused only for a crawl about to close: while pages of a
                # fresh kind wait, it is not, and they are read meanwhile (a Trac crawl sent
                # 462 requests in its 80 s, paused four times, against 1,017)
                fresh_waiting = bool(waiting) and self.hold_only_closing
                if self.in_flight and not fresh_waiting:
                    self._hold()
                elif fresh_waiting and self.holding is not None:
                    self._release()
                waiting.insert(0, f"{len(self.in_flight) + len(self.requeued)} awaited reads "
                                  "(renders, new forms' first answers, lifted pages)")
                self._lift_requeued()
            if self.queued_answers and self.answers_looked < LIFT_LOOK \
                    and self._awaiting_for() < AWAIT_SECONDS and self._lift_answers():
                waiting.insert(0, f"{len(self.queued_answers)} new forms' first answers queued")
            if not waiting and self.run < 2 * self.window:
                waiting = self._serve_starved()
            if waiting:
                if not self.deferred:
                    self.deferred = True
                    logger.info("%d pages in a row showed no word the crawl had not read, but "
                                "requests wait of kinds of page that were fresh (%s): not "
                                "closing while they do", self.run, ", ".join(waiting[:3]))
                stats.inc_value("hiddenweb/stale/deferred")
                return
            self.closing = True
            logger.info("%d pages in a row showed no word the crawl had not read: closing "
                        "(HIDDENWEB_CLOSE_STALE=%d; 0 turns this off)", self.run, self.window)
            deferred_from_coro(self.crawler.engine.close_spider_async(reason=STALE))

    def _new_record(self, title: str | None, request: Request | None, answer: str | None,
                    url: str | None) -> bool:
        """Whether a page is a hidden record's under a title no page read had (lab knob
        ``stale_record_titles``): reached only through a form (``hiddenweb_form_only``), not a
        form's answer itself, a GET of a path with no query, not a render of a page read
        already. Every title read is kept (as its hash, :data:`MAX_TITLES` at most)."""
        if not title or not self.record_titles:
            return False
        key = hash(" ".join(title.lower().split()))
        if key in self.titles:
            return False
        if len(self.titles) < MAX_TITLES:
            self.titles.add(key)
        return (request is not None and url is not None
                and answer is None and request.method == "GET"
                and (self.public_titles or bool(request.meta.get("hiddenweb_form_only")))
                and not request.meta.get("hiddenweb_rerender") and not is_submission(request)
                and not urlsplit(url).query)

    def _compare(self, url: str, shapes: dict[str, frozenset[str]]) -> None:
        """A URL read again: its numbered shapes whose texts differ from the earlier reading's
        are volatile."""
        before = self.recent.pop(url, None)
        if before is not None:
            self.compared |= shapes.keys() & before.keys()
            changed = {key for key, texts in shapes.items()
                       if key in before and before[key] != texts} - self.volatile
            if changed:
                self.volatile |= changed
                self.crawler.stats.set_value("hiddenweb/stale/volatile_shapes",
                                             len(self.volatile))
                logger.debug("numbers that changed on a second reading of %s are left out: %s",
                             url, sorted(changed))
        self.recent[url] = shapes
        if len(self.recent) > RECENT_URLS:
            self.recent.popitem(last=False)

    def _content(self, new: set[str], blocks: list[str],
                 shapes: dict[str, frozenset[str]]) -> set[str]:
        """The ``new`` words that are the site's content: not the numbers of a volatile shape,
        not a known record's id under other letters, not pieces of known words at a cut."""
        volatile = {word for key in shapes.keys() & self.volatile
                    for word in words_of(shapes[key]) if not word.isalpha()}
        new = new - volatile
        relabels = {word for word in new if self.words.is_relabel(word)}
        if relabels:
            self.crawler.stats.inc_value("hiddenweb/stale/relabels", len(relabels))
            new = new - relabels
        if any(word.isalpha() for word in new):
            at_cut, inside = cut_words(blocks)
            pieces = {word for word in new & (at_cut - inside) if self.words.is_piece(word)}
            if pieces:
                self.crawler.stats.inc_value("hiddenweb/stale/pieces", len(pieces))
                new = new - pieces
        return new

    @staticmethod
    def _numbers_only(new: set[str], url: str | None) -> bool:
        """Whether the ``new`` words are all numerals none of which the page's own URL carries
        (compared as numbers: ``/ticket/17`` carries ``0017``): a count ("licenses (104)",
        "34 Hits") or a measure, not a record's id, which its page's URL names."""
        if not new or not all(word.isdecimal() for word in new):
            return False
        in_url = {int(n) for n in _DIGITS.findall(url or "")}
        return not any(int(word) in in_url for word in new)

    def _recheck(self, url: str, shapes: dict[str, frozenset[str]], spider: Spider) -> None:
        """A page fresh only by numbers: ask for it again if a shape on it was not compared."""
        if self.rechecks >= MAX_RECHECKS or not shapes.keys() - self.compared:
            return
        self.compared |= shapes.keys()  # asked once: not asked again for these shapes
        self.rechecks += 1
        self.crawler.stats.inc_value("hiddenweb/stale/rechecks")
        self.crawler.signals.send_catch_log(hw_signals.recheck_wanted, url=url, spider=spider)

    def request_scheduled(self, request: Request, spider: Spider) -> None:
        if request.meta.get(RECHECK_META):
            return  # this rule's own: read again, not a page to wait for
        self._queued_again(request)
        if self.wait_queued_answers and len(self.queued_answers) < MAX_QUEUED_ANSWERS \
                and is_first_answer(request):
            self.queued_answers[fingerprint(request)] = request.url
        kind = self._kind(request)
        if kind.startswith(FORM_KIND) and len(self.form_urls) < MAX_QUEUED_ANSWERS:
            self.form_urls[request.url] = kind  # how the scheduler is asked to serve it
        if kind in self.waiting or len(self.waiting) < MAX_KINDS:
            self.waiting[kind] = self.waiting.get(kind, 0) + 1

    def _kind(self, request: Request) -> str:
        """:func:`request_kind`, or with lab knob ``stale_form_kinds`` off :func:`page_kind`."""
        if self.form_kinds:
            return request_kind(request, self.query_kinds)
        return page_kind(request.url, self.query_kinds)

    def _queued_again(self, request: Request) -> None:
        """An awaited read in flight that went back to the scheduler (a redirect, a retry: its
        token in the meta) is still awaited, but no longer in flight: a hold must not wait for
        what the paused engine will not send (it is released), and the scheduler is asked to
        serve it first (:meth:`_lift_requeued`); in flight again once it reaches the
        downloader."""
        token = request.meta.get(AWAITED_META)
        if token and token is not True and token in self.in_flight:
            self._awaited_done(token)
            self.requeued[token] = request.url

    def _lift_answers(self) -> bool:
        """Ask the scheduler to serve a new form's queued first submissions first (each
        once); whether it lifted any of them, now or before (otherwise it cannot, and they
        are not waited for)."""
        asked = {fp: url for fp, url in self.queued_answers.items()
                 if fp not in self.answers_asked}
        if asked:
            self.answers_asked.update(asked)
            if self._serve_first(set(asked.values())):
                self.answers_served = True
                self.crawler.stats.inc_value("hiddenweb/stale/answers_lifted", len(asked))
                # once a run: while it waits, each new form met adds one more (a Roundup
                # crawl logged it 31 times in one second)
                logger.log(logging.DEBUG if self.answers_logged else logging.INFO,
                           "%d new forms' first submissions wait in the scheduler: serving "
                           "them first before the crawl may close stale", len(asked))
                self.answers_logged = True
        return self.answers_served

    def _answer_gone(self, request: Request) -> bool:
        """A new form's queued first submission left the scheduler (sent or dropped): it is
        not waited for as queued any more; whether it was."""
        if not self.queued_answers or not is_first_answer(request):
            return False
        fp = fingerprint(request)
        self.answers_asked.discard(fp)
        return self.queued_answers.pop(fp, None) is not None

    def _serve_first(self, urls: set[str]) -> int:
        """Ask the scheduler to serve the requests of ``urls`` first
        (:data:`hiddenweb.signals.serve_first_wanted`): the groups it lifted."""
        return self._sum_of(self.crawler.signals.send_catch_log(
            hw_signals.serve_first_wanted, wanted=lambda url: url in urls))

    @staticmethod
    def _sum_of(answers: list[tuple[Any, Any]]) -> int:
        """The sum of the numbers the receivers of a signal returned."""
        return sum(n for _, n in answers if isinstance(n, int))

    def _lift_requeued(self) -> None:
        """Ask the scheduler to serve the awaited reads sent back to it first (each once)."""
        urls = {url for token, url in self.requeued.items() if token not in self.requeued_lifted}
        if urls:
            self.requeued_lifted.update(self.requeued)
            self._serve_first(urls)

    def request_dropped(self, request: Request, spider: Spider | None = None) -> None:
        """``request_dropped``: the scheduler refused it (a redirect of an awaited read to a
        URL already seen, by the dupefilter): it will not be read."""
        token = request.meta.get(AWAITED_META)
        if token and token is not True:
            self._awaited_done(token)
        else:
            self._answer_gone(request)
        if not request.meta.get(RECHECK_META):
            self._unqueued(request)  # not a look at its kind: never downloaded

    def _awaited_done(self, token: int) -> None:
        """The awaited read ``token`` is no longer out (read, failed, dropped, or sent back to
        the scheduler); a hold that waited only for it ends."""
        self.in_flight.discard(token)
        self.requeued.pop(token, None)
        if self.holding is not None and not self.in_flight:
            self._release()

    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        """``request_reached_downloader``: an awaited read is in flight until it is read or
        fails (its token, kept in its meta, follows it through redirects); so is a request of a
        kind lifted (:meth:`_serve_starved`) while the rule still looks at that kind."""
        lifted = self._answer_gone(request) and self.answers_served
        if self.await_lifted and self.lifted and not request.meta.get(AWAITED_META) \
                and not request.meta.get(RECHECK_META) \
                and self.lifted.get(self._kind(request), LIFT_LOOK) < LIFT_LOOK:
            # a request of a kind the scheduler was asked to serve first is awaited too: left
            # the downloader, it no longer waits in the scheduler, and a close before it was
            # read followed none of its links (a test crawl closed with the six records it
            # lifted downloaded and not parsed)
            request.meta[AWAITED_META] = True
        if request.meta.get(AWAITED_META) is True:
            self._tokens += 1
            request.meta[AWAITED_META] = self._tokens
            if lifted:
                self.answers_looking.add(self._tokens)
        if request.meta.get(AWAITED_META):
            self.in_flight.add(request.meta[AWAITED_META])
            self.requeued.pop(request.meta[AWAITED_META], None)

    def request_gone(self, request: Request, spider: Spider | None = None,
                     **kwargs: object) -> None:
        """``request_left_downloader``: one request less waiting of its kind, and one look
        more at a kind the scheduler was asked to serve first."""
        if request.meta.get(RECHECK_META):
            return
        kind = self._unqueued(request)
        if kind in self.lifted:
            self.lifted[kind] += 1

    def _unqueued(self, request: Request) -> str:
        """``request`` left the scheduler (downloaded, or dropped: a duplicate): its kind."""
        kind = self._kind(request)
        if self.waiting.get(kind, 0) > 0:
            self.waiting[kind] -= 1
        return kind

    def _hold(self) -> None:
        """Send no more requests while the awaited reads in flight are out (Scrapy's
        ``engine.pause``: what is in flight is still downloaded and read): pages read
        meanwhile would only be more pages of a crawl about to close. Released once they are
        read or failed, once a page is fresh, or after what is left of :data:`AWAIT_SECONDS`."""
        if self.holding is not None:
            return
        self.crawler.engine.pause()
        call_later = self.call_later
        if call_later is None:
            from twisted.internet import reactor

            call_later = reactor.callLater
        self.holding = call_later(max(0.0, AWAIT_SECONDS - self._awaiting_for()), self._release)
        self.crawler.stats.inc_value("hiddenweb/stale/held")
        logger.info("Waiting for %d awaited reads (renders, new forms' first answers, lifted "
                    "pages) in flight before the crawl may close stale; no other request is "
                    "sent meanwhile",
                    len(self.in_flight))

    def _release(self) -> None:
        """End a hold: the engine sends requests again (at once, not at its next heartbeat)."""
        timer, self.holding = self.holding, None
        if timer is None:
            return
        if timer.active():  # not its own call: the timer is cancelled
            timer.cancel()
        engine = self.crawler.engine
        engine.unpause()
        nextcall = getattr(getattr(engine, "_slot", None), "nextcall", None)
        if nextcall is not None:  # Scrapy's own loop; without it, its heartbeat (5 s) resumes
            nextcall.schedule()

    def _awaiting_for(self) -> float:
        """Seconds since the limit was first reached with awaited reads in flight."""
        now = time.monotonic()
        if self.awaiting_since is None:
            self.awaiting_since = now
        return now - self.awaiting_since

    def _mostly_fresh_waiting(self) -> list[tuple[int, str, bool]]:
        """Kinds of page with requests waiting whose pages were mostly fresh, (fresh + 1) /
        (read + 2) > 1/2: (requests waiting, kind, whether one was read among the last
        ``window`` pages), the most waiting first."""
        kinds = []
        for kind, n in self.waiting.items():
            read, fresh, last = self.kinds.get(kind, (0, 0, 0))
            if n > 0 and (fresh + 1) / (read + 2) > 0.5:
                kinds.append((n, kind, last > self.pages - self.window))
        return sorted(kinds, reverse=True)

    def _fresh_kinds_waiting(self) -> list[str]:
        """The mostly fresh kinds with requests waiting that the scheduler still hands out (one
        read among the last ``window`` pages) or that it was asked to serve first (until
        :data:`LIFT_LOOK` of their requests were downloaded)."""
        return [kind for _, kind, recent in self._mostly_fresh_waiting()
                if recent or self.lifted.get(kind, LIFT_LOOK) < LIFT_LOOK]

    def _serve_starved(self) -> list[str]:
        """Kinds of page that were mostly fresh and whose requests wait, none read lately:
        the scheduler is asked to serve them first (:data:`hiddenweb.signals.
        serve_first_wanted`); the kinds it lifted, for the rule to wait for (each kind asked
        once; stat ``hiddenweb/stale/lifted``)."""
        starved = {kind for _, kind, recent in self._mostly_fresh_waiting()
                   if not recent and kind not in self.lifted}
        if not starved:
            return []
        self.lifted.update(dict.fromkeys(starved, 0))
        query = self.query_kinds
        if not self._sum_of(self.crawler.signals.send_catch_log(
                hw_signals.serve_first_wanted, wanted=lambda url: page_kind(url, query) in starved
                or self.form_urls.get(url) in starved)):
            return []  # a scheduler that cannot, or none of them is in a queue it can see
        self.crawler.stats.inc_value("hiddenweb/stale/lifted", len(starved))
        logger.info("Requests wait of kinds of page that were fresh and that the scheduler "
                    "has not handed out lately (%s): serving them first",
                    ", ".join(sorted(starved)[:3]))
        return sorted(starved)
