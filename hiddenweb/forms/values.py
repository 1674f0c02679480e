"""Which pages of the site show each LVS value: co-occurrence, for choosing a search box's
next blind value after the answers to the last ones.

A search box indexes the words of *some* of the site's documents, and those words go together:
they are the words of one subject, and the site's own pages show them side by side. So when a
value answers "no results", the values that keep its company on the site's pages are less
likely to answer either, and when one answers with results, its company is the next best guess
(adaptive query selection from the site's own statistics: Ntoulas, Zerfos & Cho 2005, §3;
Barbosa & Freire 2004 pick their queries from the words of the pages seen, as
:meth:`SiteWords.prior` does before any answer).

:class:`WordPages` keeps, for each *tracked* word (the values of the LVS's open labels, where a
search box takes its values: :class:`hiddenweb.forms.lvs.LVSLabel` ``open``), the set of pages that
show it, as a bitset (a Python ``int``) over the first ``max_pages`` pages with text. Memory is
bounded by ``tracked words × max_pages / 8`` bytes (439 bundled keywords × 4096 pages: under
230 kB). :meth:`similarity` is the cosine of two values' page sets, in [0, 1].

:class:`hiddenweb.forms.explorer.FormExplorer` turns the similarities to the values already
answered into an *affinity*, a log-odds that scales each waiting value's prior (``+`` for
company of a value that gave results, ``-`` for company of one that answered "no results"), and
reorders its sweep. Scaling, not adding: a value the site never shows has no prior and no
company, and the misses of the site's own words must not lift it past them (where the box
indexes words of every subject, as on the proving ground's 10^4-page sites, an additive affinity
did exactly that and cost 250 downloads).
``form_affinity`` (docs/settings.md) switches it off.

:func:`field_domains` gives each field its candidate values; a date or time input
(:data:`DATE_TYPES`), which takes no word, gets its own default and then :func:`typed_values`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from functools import lru_cache
from math import sqrt
from typing import TYPE_CHECKING

from hiddenweb.forms.extract import TEXT_TYPES, FormInfo
from hiddenweb.forms.lvs import LVS, words_of
from hiddenweb.forms.records import form_state
from hiddenweb.forms.vocabulary import SITE, STOP_WORDS, SiteVocabulary, site_label
from hiddenweb.safety_lexicon import harmful_classes, normalize

if TYPE_CHECKING:
    from hiddenweb.forms.explorer import FormExplorer

MAX_PAGES = 4096


class WordPages:
    """Bitsets of the pages that show each tracked word (see the module docstring)."""

    def __init__(self, words: Iterable[str], max_pages: int = MAX_PAGES) -> None:
        self.bits: dict[str, int] = {w: 0 for w in words}
        self.max_pages = max_pages
        self.pages = 0

    @classmethod
    def for_lvs(cls, lvs: LVS, max_pages: int = MAX_PAGES) -> WordPages:
        """Track the words of every value of the LVS's open labels."""
        words = {w for label in lvs.labels if label.open for value in label.values
                 for w in words_of(value)}
        return cls(words, max_pages)

    def add_page(self, words: Iterable[str]) -> None:
        """Record one page's (distinct) words; pages past ``max_pages`` are not recorded."""
        if self.pages >= self.max_pages:
            return
        bit = 1 << self.pages
        self.pages += 1
        bits = self.bits
        for w in words:
            if w in bits:
                bits[w] |= bit

    def value_bits(self, value: str | None) -> int:
        """The pages that show any word of ``value``."""
        out = 0
        for w in words_of(value or ""):
            out |= self.bits.get(w, 0)
        return out

    def similarity(self, a: str | None, b: str | None) -> float:
        """Cosine of the page sets of two values (0 when either is on no page)."""
        return _cosine(self.value_bits(a), self.value_bits(b))

    def kin(self, value: str | None, others: Iterable[str | None]) -> Iterator[tuple[str, float]]:
        """``(other, similarity)`` for each of ``others`` that shares a page with ``value``."""
        x = self.value_bits(value)
        if not x:
            return
        for other in others:
            if other and (sim := _cosine(x, self.value_bits(other))):
                yield other, sim


def _cosine(x: int, y: int) -> float:
    if not x or not y:
        return 0.0
    return (x & y).bit_count() / sqrt(x.bit_count() * y.bit_count())


#: inputs whose value is a date or time in HTML's own format (a browser's picker fills them)
DATE_TYPES = frozenset({"date", "month", "week", "time", "datetime-local"})


def typed_values(kind: str, today: date | None = None) -> list[str]:
    """A date or time input's values (:data:`DATE_TYPES`) in the format a browser sends
    (HTML, "Dates and times"): today, the first day of this year and of last year; noon and
    midnight for a time. Nothing the LVS or the site could say: a box of this type accepts no
    word, and a search by date mostly runs over recent records."""
    day = today or date.today()
    days = [day, date(day.year, 1, 1), date(day.year - 1, 1, 1)]
    if kind == "time":
        return ["12:00", "00:00"]
    if kind == "month":
        return list(dict.fromkeys(d.strftime("%Y-%m") for d in days))
    if kind == "week":
        weeks = (d.isocalendar() for d in days)
        return list(dict.fromkeys(f"{y}-W{w:02d}" for y, w, _ in weeks))
    if kind == "datetime-local":
        return list(dict.fromkeys(f"{d.isoformat()}T12:00" for d in days))
    return list(dict.fromkeys(d.isoformat() for d in days))


def field_domains(form: FormInfo, lvs: LVS, vocabulary: SiteVocabulary | None = None
                  ) -> tuple[list[tuple[str, list[str | None]]], dict[str, str], list[str]]:
    """(field name, candidate values) per fillable field, the LVS label used per free-text field,
    and the required fields with no value to give: a select whose only option is an empty
    placeholder (a dependent select a script fills once its parent is chosen: a browser's
    constraint validation refuses to submit the form without it, and a plain-HTTP submission
    only gets the server's refusal). Finite fields take their own domain (the selected/checked
    default first), free-text fields their LVS label's values; a free-text field no LVS label
    matches takes its own default first, then the page's and the site's values
    (:func:`hiddenweb.forms.vocabulary.site_label`)."""
    domains: list[tuple[str, list[str | None]]] = []
    lvs_labels: dict[str, str] = {}
    unfillable: list[str] = []
    post_back = any(f.submits for f in form.fields)
    for f in form.fillable_fields():
        if f.kind in ("select",):
            values: list[str | None] = [v for v in f.options if v or not f.required]
            if not values and f.required and post_back:
                values = [""]  # filled by the post-back of another field's choice
            elif not values and f.required:
                unfillable.append(f.name)
                continue
            if f.default in values:
                values.remove(f.default)
                values.insert(0, f.default)
        elif f.kind == "radio":
            values = list(f.options)
            if f.default in values:
                values.remove(f.default)
                values.insert(0, f.default)
        elif f.kind == "checkbox":  # its default state first, then each box of a group alone
            boxes = list(f.options) or ["on"]
            values = [f.default, None] if f.default else [None]
            values += [v for v in boxes if v not in values]
        elif f.kind in DATE_TYPES:  # the page's own value, then dates in the box's format
            values = [f.default, *(v for v in typed_values(f.kind) if v != f.default)]
        elif f.kind in TEXT_TYPES or f.kind == "textarea":
            label = lvs.match(f.descriptors)
            if label is None:
                label = site_label(lvs, f, vocabulary)
            lvs_labels[f.name] = label.name
            values = list(label.values)
            if label.source == SITE:  # the page's own value first: the form as it stands
                values = [f.default, *(v for v in values if v != f.default)]
        else:
            continue
        if values:
            domains.append((f.name, values))
    return domains, lvs_labels, unfillable


#: a word of the form's own page counts as this many in :meth:`SiteWords.prior`, against the
#: log of the number of the site's pages that show it
PAGE_WEIGHT = 3.0


class SiteWords:
    """The site's own vocabulary: how many distinct pages show each word, and (with
    ``form_affinity``) which pages show each LVS value (:class:`WordPages`)."""

    def __init__(self, word_pages: WordPages | None = None) -> None:
        self.pages: Counter[str] = Counter()
        self.total = 0  # pages read
        self.word_pages = word_pages

    def add_page(self, text: str) -> None:
        """A page with new content: count its words."""
        words = set(words_of(text))
        self.total += 1
        self.pages.update(words)
        if self.word_pages is not None:
            self.word_pages.add_page(words)

    def prior(self, page_text: str, content: str | None = None) -> PagePrior:
        """How much the site already speaks of an LVS value: its words on the form's own page
        (weight :data:`PAGE_WEIGHT`) and on the pages seen so far (log of how many), for
        :class:`~hiddenweb.forms.explorer.FormExplorer` (Barbosa & Freire 2004: queries from
        the words of the pages seen)."""
        return PagePrior(page_text, self.pages, self.total, content)


#: content words of a form's own page offered to its open fields (:attr:`PagePrior.words`)
PAGE_WORDS = 60


class PagePrior:
    """:meth:`SiteWords.prior` of one form page: called with a value, its prior; ``words``:
    the page's own content words (first seen first; no stop words, no numbers, none shorter
    than 3 letters, none the safety lexicon reads as harmful: delete, logout, buy), which an
    *open* field (a search box) takes as values beside its LVS label's: the text around a
    search box speaks of what the box indexes (Barbosa & Freire 2004), and a box that indexes
    one subject's words, on a page about that subject, answers few of a general LVS's words.
    The values :meth:`shows` are swept before the others (:attr:`FormExplorer.on_page`),
    whatever the answers to their company: that company is the form's page itself
    (``form_page_words``, docs/design-notes.md). With ``content``
    (:func:`hiddenweb.pagetext.content_text`), the words are taken from it: the page's own
    text, not its links, headings, labels or buttons, which name the site's parts ("Links",
    "Search the collection", "Keywords")."""

    def __init__(self, page_text: str, site: Counter[str], site_pages: int = 0,
                 content: str | None = None) -> None:
        self.site = site
        self.page = set(words_of(page_text))
        # a word on nearly every page is navigation: the same answer for any of them
        ceiling = site_pages * 0.9 if site_pages >= 10 else site_pages + 1
        words: list[str] = []
        for w in dict.fromkeys(words_of(page_text if content is None else content)):
            if len(words) >= PAGE_WORDS:
                break
            if len(w) >= 3 and w.isalpha() and w not in STOP_WORDS and site[w] < ceiling \
                    and not harmful_classes(normalize(w)):  # never type "delete" or "logout"
                words.append(w)
        self.words = words

    def shows(self, values: Iterable[str | None]) -> set[str]:
        """The ``values`` whose every word is on the page."""
        return {v for v in values
                if v and (ws := value_words(v)) and all(w in self.page for w in ws)}

    def __call__(self, value: str) -> float:
        return sum(PAGE_WEIGHT * (w in self.page) + math.log1p(self.site[w])
                   for w in value_words(value))


@lru_cache(maxsize=1 << 16)
def value_words(value: str) -> tuple[str, ...]:
    """:func:`~hiddenweb.forms.lvs.words_of` a field's value, cached: each copy of a form met
    on another page scores all of its fields' values again (:func:`add_prior`; in a profiled
    Trac crawl 660,000 calls, a tenth of its time)."""
    return tuple(words_of(value))


def order_lvs_values(explorer: FormExplorer, lvs: LVS, prior: Callable[[str], float] | None
                     ) -> None:
    """Order an explorer's LVS fields' values (their LVS order was shuffled): by the site's
    ``prior`` (a site's search index covers the words of its pages: Barbosa & Freire 2004,
    Ntoulas et al. 2005; the sort is stable, so ties keep the random order), then the values
    the LVS places under the form's fixed state first (a wizard's region=MA: that region's
    cities, ``[city.within.region]``), dropping those it places only under other states."""
    state = form_state(explorer.signature)
    for key, value in list(state.items()):  # "state=MA" names the LVS label [region]
        named = lvs.match([key])
        if named is not None:
            state.setdefault(named.name, value)
    for i, name in enumerate(explorer.names):
        if name in explorer.lvs_labels:
            if explorer.lvs_labels[name].startswith(SITE):
                continue  # the page's and the site's values, in that order (site_label)
            explorer.rng.shuffle(explorer.values[i])
            if prior is not None:
                explorer.prior_score[i] = {v: prior(v) for v in explorer.values[i] if v}
                if explorer.page_first and isinstance(prior, PagePrior):
                    explorer.on_page[i] = prior.shows(explorer.values[i])
                explorer.values[i].sort(key=lambda v: (v not in explorer.on_page[i],
                                                       -explorer.prior_score[i].get(v, 0.0)))
            label = lvs.get(explorer.lvs_labels[name]) if state else None
            inside, elsewhere = label.placed(state) if label is not None else ([], set())
            first = set(inside)
            explorer.pinned[i] = first
            if first:
                explorer.values[i].sort(key=lambda v: v not in first)
                # ... and the values the LVS places only elsewhere (Houston for MA) are dropped
                kept = [v for v in explorer.values[i] if v not in elsewhere]
                if kept:
                    explorer.values[i] = kept
                    explorer.stats[i] = {v: explorer.stats[i][v] for v in kept}
                    explorer.excluded[i] = {v.casefold() for v in elsewhere}


#: how far one answer moves a waiting value's log-odds per unit of similarity (cosine, 0..1) to
#: the value answered: a miss with a value of similarity 0.5 scales its prior by e^-1.5 = 0.22
AFFINITY_WEIGHT = 3.0


def add_prior(explorer: FormExplorer, prior: Callable[[str], float]) -> None:
    """Another page shows this form (a copy): its ``prior`` adds to the first page's, and
    the values not yet swept are ordered again by the sum (a search box copied onto a page
    about sport, whose own page is about health, now tries both topics' words early)."""
    fields = [i for i, name in enumerate(explorer.names) if name in explorer.lvs_labels
              and not explorer.lvs_labels[name].startswith(SITE)]  # the site's order stays
    for i in fields:
        scores = explorer.prior_score[i]
        for v in explorer.values[i]:
            if v:
                scores[v] = scores.get(v, 0.0) + prior(v)
        if explorer.page_first and isinstance(prior, PagePrior):
            explorer.on_page[i] |= prior.shows(explorer.values[i])
    reorder(explorer, fields)


def reorder(explorer: FormExplorer, fields: list[int]) -> None:
    """Sort the sweep's waiting values of ``fields`` by prior × e^affinity (the state's
    own values first); ties (the two pages' words) are mixed at random, as the first order
    was. The affinity scales the prior rather than adding to it: a value the site never
    showed (prior 0, no company) can not rise past the site's own words because their
    company answered nothing."""
    pending = explorer.sweep[::-1]  # in sending order
    for i in fields:
        slots = [k for k, (_, varied) in enumerate(pending) if varied == i]
        prior, affinity = explorer.prior_score[i], explorer.affinity_score[i]
        entries = sorted((pending[k] for k in slots),
                         key=lambda e: (e[0][i] not in explorer.pinned[i],
                                        e[0][i] not in explorer.on_page[i],
                                        -prior.get(e[0][i], 0.0)
                                        * math.exp(affinity.get(e[0][i], 0.0)),
                                        explorer.rng.random()))
        for k, entry in zip(slots, entries, strict=True):
            pending[k] = entry
    explorer.sweep = pending[::-1]


def answered_affinity(explorer: FormExplorer, i: int, value: str | None, new: bool) -> None:
    """A one-field probe of ``value`` in field ``i`` answered: its company on the site's
    pages (:mod:`hiddenweb.forms.values`) moves up (``new``) or down ("no results") among the
    values still to sweep: their log-affinity by ``AFFINITY_WEIGHT`` times their
    similarity to it."""
    if explorer.cooccur is None or not value:
        return
    step = AFFINITY_WEIGHT if new else -AFFINITY_WEIGHT
    scores = explorer.affinity_score[i]
    moved = False
    for v, sim in explorer.cooccur.kin(value, {e[0][i] for e in explorer.sweep if e[1] == i}):
        scores[v] = scores.get(v, 0.0) + step * sim
        moved = True
    if moved:
        explorer.reorders += 1
        reorder(explorer, [i])
