"""Adaptive form exploration: the submissions of one form as a feedback loop (HWDLA's washy
edges, ALGORITHMS.md section 1; HiWE's "update action values").

A :class:`FormExplorer` holds one form's candidate values per field (:func:`field_domains`: the
LVS for free-text fields, the form's own domain for finite ones, ordered by
:func:`order_lvs_values`) and, per (field, value), how often it was submitted and how often it
gave a *new* result page. It hands out a first wave of ``form_wave`` submissions; every answer
(:meth:`feedback`) updates the counts and releases the next ones, never more than the wave
outstanding; the forms of one endpoint share one wave of blind submissions
(``BlindBudget.flying``).

* First a one-field-at-a-time sweep from the form's defaults, so an answer speaks of one value;
  then the untried combination whose values have the best smoothed success rates
  ((wins + 1/2) / (tries + 1)). No full cross product: at most ``limit`` submissions.
* A form that gave results *pauses* after ``patience`` answers in a row with nothing new; the
  forms of an endpoint that never gave a result share a :class:`BlindBudget` of misses; paused
  forms resume, a round at a time, when nothing else is left to download (:meth:`resume`).
* Values the form's own answers show (:mod:`hiddenweb.forms.records`) are queued by
  :meth:`suggest` and sent before any blind one; words of result pages' link texts become new
  values of its *open* LVS fields; an open field's waiting values are reordered by their
  company on the site's pages with the values already answered (``form_affinity``,
  :mod:`hiddenweb.forms.values`; Ntoulas, Zerfos & Cho 2005).
* A form whose answers' missing mass (:func:`hiddenweb.estimate.missing_mass`) fell below
  ``HIDDENWEB_STOP_MASS`` is *retired* (:attr:`retired`, set by the form crawler): it sends no
  more blind guesses and is never resumed; values its answers show still go.
* After the endpoint's first result, blind guesses wait (:attr:`holding`,
  ``form_answers_first``) while its answers are read and while the records they show leave
  nothing to guess (:class:`hiddenweb.forms.records.ShownValues`, Chao1).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from math import prod

from hiddenweb.forms.extract import ButtonInfo, FormInfo, is_wildcard
from hiddenweb.forms.lvs import LVS
from hiddenweb.forms.records import BlindBudget, endpoint
from hiddenweb.forms.values import (
    WordPages,
    add_prior,
    answered_affinity,
    field_domains,
    order_lvs_values,
    reorder,
)
from hiddenweb.forms.vocabulary import SITE, SiteVocabulary

Assignment = dict[str, "str | None"]
_ENUMERATE_MAX = 1000  # spaces up to this size are scored exhaustively; larger ones sampled


#: ``varied`` of a submission that sets several fields a record showed together: no field's
#: statistics learn from it (it is known to hold, and says nothing of one value alone)
_TOGETHER = -2


#: a field's values shown on the form's page that answer "no results", none finding anything,
#: after which they lose their place before the others (:meth:`FormExplorer._page_answer`)
PAGE_TRIES = 24


#: answers to values that showed what the defaults' answer showed, after which a form whose
#: values never found anything is ended (:meth:`FormExplorer.feedback`)
INERT = 8

#: words kept of the values a form was sent in Chromium (:attr:`FormExplorer.typed`)
MAX_TYPED = 4096


class FormExplorer:
    """One form's exploration: its candidate values, what each gave, what to send next, and
    how to send it (``form_class``, ``button``, ``page`` it is on, ``by_browser``: submitted by
    page actions in Chromium, ``form_only``: the page was reached through a form,
    ``dependent``: the (parent, child) selects of a dependent-select probe)."""

    declining, declined = False, 0  # an explorer pickled in a JOBDIR checkpoint before them
    last_shown: int | None = None  # ... and before these
    value_pages = 0  # ... and this (set in __init__)
    inert_repeats = True
    #: done with no new page, counted against its family (:meth:`FormCrawler.feedback`)
    ended_empty = False
    #: its form was not on a fresh render of its page: nothing more is sent
    #: (:meth:`FormCrawler.gone`)
    gone = False
    #: submitted in Chromium: its answered submissions that sent no request, and whether one
    #: did (:meth:`FormCrawler.heard`)
    silent = 0
    heard = False
    typed: frozenset[str] = frozenset()  # ... and this (set in __init__)
    first_wave = 8  # ... and this (set in __init__)

    def __init__(self, form: FormInfo, lvs: LVS, limit: int, wave: int = 8,
                 patience: int = 100, learn: int = 30, seed: int = 0,
                 blind: BlindBudget | None = None,
                 prior: Callable[[str], float] | None = None,
                 cooccur: WordPages | None = None, *, form_class: str = "search",
                 button: ButtonInfo | None = None, page: str = "", by_browser: bool = False,
                 form_only: bool = False, dependent: tuple[str, str] | None = None,
                 vocabulary: SiteVocabulary | None = None, defaults_first: bool = False,
                 page_words: bool = False, inert_repeats: bool = True,
                 first_wave: int | None = None) -> None:
        self.form = form
        self.form_class, self.button, self.page = form_class, button, page
        self.by_browser, self.form_only, self.dependent = by_browser, form_only, dependent
        self.signature = form.signature
        domains, self.lvs_labels, self.unfillable = field_domains(form, lvs, vocabulary)
        #: ``defaults_first``: the form as the page gives it (``{}``, nothing changed) is the
        #: first submission (the crawl's forms: :class:`hiddenweb.forms.crawl.FormCrawler`)
        self.defaults_pending = defaults_first
        self.names = [name for name, _ in domains]
        self.values: list[list[str | None]] = [list(v) for _, v in domains]
        self.stats: list[dict[str | None, list[int]]] = [
            {v: [0, 0] for v in vals} for vals in self.values]
        self.limit, self.wave, self.patience, self.learn = limit, wave, patience, learn
        #: submissions sent before any answer (:meth:`first`); each answer then releases one
        #: more, two after a new page, up to ``wave`` in flight (:meth:`feedback`)
        self.first_wave = min(first_wave or wave, wave)
        self.blind = blind
        self.tried: set[tuple] = set()
        self.submitted = 0
        self.answers = 0
        #: the submissions answered (``()``: the defaults): each is judged once
        self.answered: set[tuple] = set()
        self.new_pages = 0
        self.value_pages = 0  # of those, answers to values other than the defaults (``{}``)
        self.since_new = 0
        self.rounds = 1
        self.learnt = 0
        #: retired by the stopping rule (:mod:`hiddenweb.forms.stopping`): it is expected to
        #: find nothing more; ``declining``: nor are the values its results suggest
        #: (:meth:`decline`), ``declined`` of them dropped
        self.retired = False
        self.declining = False
        self.declined = 0
        #: shared mode: the form was taken over from a worker that died
        #: (:data:`hiddenweb.redis_shared.TAKEN_OVER`); what the dupefilter drops of its
        #: submissions was sent and read there, and is no answer to judge here (:meth:`known`)
        self.taken_over = False
        #: the set of texts the defaults' answer showed (pagetext.ShownText), and the answers
        #: to values that showed just that again: the values changed nothing (:meth:`feedback`)
        self.defaults_shown: int | None = None
        self.last_shown: int | None = None  # what the answer to the last value sent showed
        self.inert_repeats = inert_repeats  # lab knob form_inert_repeats (feedback)
        self.inert = self.value_hits = 0
        self.ended_inert = False
        #: the words of the values typed into the form in Chromium (:meth:`FormCrawler.
        #: typed_echoes`), at most :data:`MAX_TYPED`
        self.typed: set[str] = set()
        self.lvs = lvs
        self.rng = random.Random(int(hashlib.sha1(f"{seed}{self.signature}".encode())
                                     .hexdigest()[:8], 16))
        # LVS values in a seeded random order (an LVS is often grouped by topic, a site's values
        # sit in one group), then by the site's words and the form's fixed state: order_lvs_values
        self.excluded: dict[int, set[str]] = {}  # field -> values the LVS places elsewhere
        self.prior_score: list[dict[str, float]] = [{} for _ in self.values]
        # what the answers so far say of each waiting value: values.answered_affinity
        self.cooccur = cooccur
        self.affinity_score: list[dict[str, float]] = [{} for _ in self.values]
        self.reorders = 0
        self.holds = 0
        self.flying: set[tuple] = set()  # this form's share of BlindBudget.flying
        self.pinned: list[set[str | None]] = [set() for _ in self.values]  # the state's values
        #: values shown on the form's page(s), swept before the others (``form_page_words``)
        self.page_first = page_words
        self.on_page: list[set[str | None]] = [set() for _ in self.values]
        self.page_hits = [0] * len(self.values)  # misses of page words; -1: one of them paid
        if page_words and prior is not None:
            self._add_page_words(getattr(prior, "words", ()))
        order_lvs_values(self, lvs, prior)
        # first, one field at a time: each value with the other fields at their first value
        # (the form's default); an answer then speaks of that one value
        self.sweep: list[tuple[tuple, int]] = []
        if self.values:
            base = tuple(v[0] for v in self.values)
            order = sorted(range(len(self.values)), key=lambda i: -len(self.values[i]))
            seen = {base}
            self.sweep.append((base, -1))
            for i in order:
                for v in self.values[i][1:]:
                    combo = base[:i] + (v,) + base[i + 1:]
                    if combo not in seen:
                        seen.add(combo)
                        self.sweep.append((combo, i))
            self.sweep.reverse()  # popped from the end
        self.varied: dict[tuple, int] = {}
        # a field whose default is "no filter" (an unchecked box, an "any" option): setting it
        # only narrows an answer; a value whose one-field probe answered "no results" (``dead``)
        # then gives nothing with any narrowing either, and such combinations are skipped
        self.base: tuple = tuple(v[0] for v in self.values)
        self.wild: list[bool] = [is_wildcard(v[0]) and len(v) > 1 for v in self.values]
        self.dead: list[set[str | None]] = [set() for _ in self.values]
        self.pruned = 0
        # values suggested by the pages this form found (hiddenweb.forms.records), served first
        self.offers: list[tuple[tuple, int]] = []
        self.offered: set[tuple] = set()

    @property
    def endpoint(self) -> str:
        """The endpoint (method, action path) its submissions go to, through its button."""
        b = self.button
        return endpoint(b.method if b else self.form.method, b.action if b else self.form.action)

    def add_prior(self, prior: Callable[[str], float]) -> None:
        """Another page shows this form (a copy): its ``prior`` adds to the first page's
        (:func:`hiddenweb.forms.values.add_prior`)."""
        add_prior(self, prior)

    @property
    def fillable(self) -> bool:
        """Some field has values to try, and no required one is left without any."""
        return bool(self.names) and not self.unfillable

    @property
    def space(self) -> int:
        return prod(len(v) for v in self.values) if self.values else 0

    @property
    def exhausted(self) -> bool:
        """No submission left at all: the limit is reached or every combination was tried."""
        return (self.submitted >= self.limit or not self.fillable
                or (len(self.tried) >= self.space and not self.offers))

    @property
    def paused(self) -> bool:
        """No suggestion waits, and: ``patience`` answers in a row gave nothing new since the
        form's last new page; or the form never gave one and its endpoint did (the values its
        results show arrive as suggestions); or the endpoint never gave a result and its
        :class:`BlindBudget` is spent."""
        if self.offers:
            return False
        if self.retired:
            return True
        if self.new_pages:
            return self.since_new >= self.patience
        if self.blind is None:
            return False  # no budget: a form that never gave a result runs to its limit
        if self.blind.hits:  # another form of the endpoint found results; their values come
            # here as suggestions: no more blind guesses until the spider is idle (resume)
            return self.rounds == 1 or self.since_new >= self.patience
        return self.blind.spent

    @property
    def holding(self) -> bool:
        """Blind values wait: the endpoint gave results and some of its answers are still to
        be read (``BlindBudget.reading``). A result page's records link to other records and
        show the values that found them, so reading the answers finds hidden pages at no
        risk and turns up good values (suggestions, sent at once); a blind guess risks a
        "no results" page. The spider releases the held values when the reading is done."""
        b = self.blind
        return (b is not None and b.hits > 0 and self.rounds == 1
                and (b.reading > 0 or b.shown.complete))

    @property
    def done(self) -> bool:
        return self.exhausted or self.paused

    def resume(self) -> list[Assignment]:
        """Another round of blind submissions for a paused form (the spider calls it when
        nothing else is left to download): ``patience`` more, or one more blind budget."""
        if self.exhausted or self.in_flight:
            return []
        if self.retired:
            return self.release()  # what its answers show, if anything: no more rounds
        if self.paused or self.holding:  # idle: nothing else is left, so no more holding
            self.since_new = 0
            self.rounds += 1
            if self.blind is not None and self.blind.spent:
                self.blind.rounds += 1
        return self.release()

    @property
    def in_flight(self) -> int:
        return self.submitted - self.answers

    # -- the loop ----------------------------------------------------------------------------
    def first(self) -> list[Assignment]:
        """The first wave: the form's defaults (``{}``: nothing changed), then up to
        ``first_wave`` submissions in all (``wave`` unless given)."""
        out: list[Assignment] = []
        if self.defaults_pending and self.limit > 0:
            self.defaults_pending = False
            self.submitted += 1
            out.append({})
        return out + self._take(min(self.first_wave, self.limit) - len(out))

    def feedback(self, data: Assignment, new: bool, found_words: list[str] | None = None,
                 empty: bool = False, shown: int | None = None, repeat: bool = False
                 ) -> list[Assignment]:
        """Record the answer to ``data`` (``new``: it showed a new result page; ``empty``: it
        said "no results"; ``shown``: the hash of the set of texts it showed; ``repeat``: it
        redirected to a page the crawl had already read); return the submissions it releases.

        A form whose values never gave a new page and whose answers to :data:`INERT` of them
        showed exactly what its defaults' answer showed (not "no results": the same page), or
        what the answer to the value sent before showed (lab knob ``form_inert_repeats``), or
        redirected to a page already read (a preferences form that stores its values and sends
        the reader back), does not read those values for the crawl (a box the site echoes and
        ignores): it is ended. (Its
        defaults' answer may have been read another way than its values' answers, rendered in
        Chromium and then over plain HTTP once its page's renders added nothing: two copies of
        one page that differ by what the render added.)

        A submission answered before is not judged again (nothing is released): after a JOBDIR
        resume, an answer read again re-releases submissions whose requests are pending, and
        those come back as duplicates the dupefilter drops besides their own answer."""
        if self.answered_before(data):
            return []
        key = self._answer_key(data)
        self.answered.add(key)
        if data and key not in self.tried:  # sent after the checkpoint this state comes from
            self._adopt(key)
        self.answers += 1
        if not data:
            self.defaults_shown = shown
        elif new:
            self.value_hits += 1
        elif repeat or shown is not None and not empty \
                and (shown == self.defaults_shown
                     or self.inert_repeats and shown == self.last_shown):
            self.inert += 1
            if self.inert >= INERT and not self.value_hits and not self.ended_inert:
                self.ended_inert = True
                self.limit = self.submitted  # nothing more is sent
        if data:  # the defaults (``{}``) judge no value of any field
            self.last_shown = shown
            self._judge_values(data, new, empty)
        if self.blind is not None and (data or new):  # the defaults are no guess: no miss
            self.blind.answer(new)
        if new:
            self.new_pages += 1
            self.value_pages += bool(data)
            self.since_new = 0
            if found_words and self.learn:
                self._learn(found_words)
        else:
            self.since_new += 1
        # at most ``wave`` submissions outstanding (queued or downloading): released ones are
        # not recalled, so a pause must not find a backlog of blind guesses still to go out
        return self._take(min(2 if new else 1, max(0, self.wave - self.in_flight)))

    def known(self, data: Assignment) -> list[Assignment]:
        """The submission ``data`` was dropped as a duplicate of a request the crawl read
        elsewhere (a form taken over from a worker that died: that worker sent it and read its
        answer). It leaves the wave and counts as answered, but is judged neither way: not a
        miss for the patience, the endpoint's blind budget or the value counts, as it is not a
        hit (its pages were read, by the worker that sent it). Returns what it releases."""
        key = self._answer_key(data)
        if key in self.answered:
            return []
        self.answered.add(key)
        self.answers += 1
        self._land(data)
        return self._take(max(0, min(1, self.wave - self.in_flight)))

    def _land(self, data: Assignment) -> tuple[tuple, int | None]:
        """``data``'s answer came (or its request was dropped): it leaves the endpoint's wave.
        Returns its combination and which field it varied (None: a blind guess)."""
        combo = tuple(data.get(name) for name in self.names)
        if combo in self.flying:  # only forms with a BlindBudget fly
            self.flying.discard(combo)
            self.blind.flying -= 1
        return combo, self.varied.pop(combo, None)

    def _adopt(self, combo: tuple) -> None:
        """A submission this explorer did not send, answered: sent by a crawl killed after the
        JOBDIR checkpoint this explorer was restored from. Counted as sent, so that what is in
        flight stays right."""
        self.tried.add(combo)
        self.submitted += 1
        for i, v in enumerate(combo):
            counts = self.stats[i].get(v)
            if counts is not None:
                counts[0] += 1

    def sent_before_resume(self, data: Assignment, answered: bool = False) -> None:
        """A submission of this form the JOBDIR journal gave back pending (sent by the crawl
        killed after the checkpoint this explorer comes from, or before it had one), perhaps
        from another page's copy of the form: counted as sent, so that this explorer does not
        send it again from its own page. A browser submission's answer is its page with the
        results in it, so the same query sent from two pages is two pages, and was emitted
        twice (the kill test's one failure). ``answered``: its answer came before this
        explorer existed (counted answered, judged neither way)."""
        key = self._answer_key(data)
        if key in self.answered:
            return
        if data:
            if key not in self.tried:
                self._adopt(key)
        elif self.defaults_pending:
            self.defaults_pending = False
            self.submitted += 1
        if answered:
            self.answered.add(key)
            self.answers += 1
            self._land(data)

    def _answer_key(self, data: Assignment) -> tuple:
        return tuple(data.get(name) for name in self.names) if data else ()

    def answered_before(self, data: Assignment) -> bool:
        """Whether the submission ``data`` was answered (judged by :meth:`feedback`) before."""
        return self._answer_key(data) in self.answered

    def _judge_values(self, data: Assignment, new: bool, empty: bool) -> None:
        """What the answer to ``data`` says of its values: its place in the endpoint's wave, a
        one-field probe's dead value and kin (:func:`answered_affinity`), the success counts."""
        combo, varied = self._land(data)
        # a one-field probe (-1: the base, every field probed at once); not a record's pair
        if varied is not None and varied != _TOGETHER:
            for i in range(len(combo)) if varied == -1 else (varied,):
                if empty:  # it found nothing: that value is dead
                    self.dead[i].add(combo[i])
                if (new or empty) and self.names[i] in self.lvs_labels:  # what it says of its kin
                    self._page_answer(i, combo[i], new)
                    answered_affinity(self, i, combo[i], new)
        for i, name in enumerate(self.names):
            counts = self.stats[i].get(data.get(name))
            if counts is not None and (varied is None or varied in (i, -1)):
                counts[1] += int(new)

    def _page_answer(self, i: int, value: str | None, new: bool) -> None:
        """A value of field ``i`` shown on the form's page answered: once :data:`PAGE_TRIES`
        of them answered "no results" and none found anything, the page's words go back among
        the others (ordered by prior and company): the box does not index its page's words."""
        if value not in self.on_page[i] or self.page_hits[i] < 0:
            return
        if new:
            self.page_hits[i] = -1  # the page's words pay: they stay first
        else:
            self.page_hits[i] += 1
            if self.page_hits[i] >= PAGE_TRIES:
                self.on_page[i] = set()
                reorder(self, [i])

    def _add_page_words(self, words: list[str] | tuple[str, ...]) -> None:
        """The form page's own words (:class:`hiddenweb.forms.values.PagePrior`) as values of
        its open LVS fields (a search box): ordered with the LVS's by the prior, where a word
        of the page outweighs most others (``form_page_words``)."""
        for i, name in enumerate(self.names):
            label = self.lvs_labels.get(name)
            table = self.lvs.get(label) if label is not None else None
            if table is None or not table.open or label.startswith(SITE):
                continue  # a field of the site's own label has the page's values already
            known = {v.lower() for v in self.values[i] if v}
            for w in words:
                if w not in known:
                    known.add(w)
                    self.values[i].append(w)
                    self.stats[i][w] = [0, 0]

    def _learn(self, words: list[str]) -> None:
        """New values for the form's *open* LVS fields (a search box), not for typed ones."""
        for i, name in enumerate(self.names):
            label = self.lvs_labels.get(name)
            if label is None or self.learnt >= self.learn:
                continue
            table = self.lvs.get(label)
            if table is None or not table.open:
                continue
            known = {v.lower() for v in self.values[i] if v}
            for w in words:
                if w.lower() in known or self.learnt >= self.learn:
                    continue
                known.add(w.lower())
                self.values[i].append(w)
                self.stats[i][w] = [0, 1]  # a prior success: the word is on the site
                self.learnt += 1
                self.lvs.add_values(label, [w])

    def _take(self, n: int) -> list[Assignment]:
        out: list[Assignment] = []
        held = False
        while len(out) < n and not self.done:
            varied = None
            while self.offers and varied is None:
                combo, varied = self.offers.pop(0)
                if combo in self.tried or self._narrows_dead(combo):
                    varied = None  # e.g. a shown year with a default author that answered nothing
            blind = varied is None
            if blind and self.blind is not None and self.blind.flying >= self.wave:
                break  # the endpoint's wave is out (its other forms' submissions count)
            hold = self.holding
            k = len(self.sweep) - 1
            while k >= 0 and varied is None:
                combo, varied = self.sweep[k]
                if combo in self.tried or self._narrows_dead(combo):
                    del self.sweep[k]
                    varied = None
                elif hold and self._guess(combo):
                    varied, held = None, True  # waits (holding): it stays in the sweep
                else:
                    del self.sweep[k]
                k -= 1
            if varied is None:
                combo = self._best(hold)
                if combo is None:
                    held = held or hold
                    break
            else:
                self.varied[combo] = varied
            self.tried.add(combo)
            self.submitted += 1
            if blind and self.blind is not None:
                self.blind.flying += 1
                self.flying.add(combo)
            for i, v in enumerate(combo):
                if varied is None or varied in (i, -1):
                    self.stats[i][v][0] += 1
            out.append(dict(zip(self.names, combo, strict=True)))
        if held and len(out) < n:
            self.holds += 1  # a slot left empty: the guesses wait
        return out

    def suggest(self, name: str, value: str) -> int:
        """Queue a submission of ``value`` in field ``name`` (the other fields at their
        default), ahead of the blind ones: a value the form's own answers showed
        (:mod:`hiddenweb.forms.records`). A finite field takes only one of its options (matched
        without case). Returns 1 if a new submission was queued, else 0."""
        if name not in self.names or not value:
            return 0
        i = self.names.index(name)
        known = self._known(i, value)
        if known is None:
            if name not in self.lvs_labels:
                return 0  # not an option of a finite field
            if value.strip().casefold() in self.excluded.get(i, ()):
                return 0  # the LVS places it under another state (Syracuse, NY: not for MA)
            known = value.strip()
            self.values[i].append(known)
            self.stats[i][known] = [0, 1]  # a prior success: the form's own answer shows it
        return self._offer(tuple(known if j == i else v[0]
                                 for j, v in enumerate(self.values)), i)

    def suggest_together(self, values: dict[str, str]) -> int:
        """Queue one submission with every field of ``values`` set together (the others at
        their default): the values one record showed side by side (``author: Christie``,
        ``year: 2013``), a narrowing its answer is known to hold. Fields given a value the
        form cannot take are left at their default; fewer than two left: nothing (the values
        go one by one, :meth:`suggest`). Returns 1 if a new submission was queued, else 0."""
        combo = list(self.base)
        moved = 0
        for name, value in values.items():
            if name not in self.names or not value:
                continue
            i = self.names.index(name)
            known = self._known(i, value)
            if known is None or known == self.base[i]:
                continue  # suggest() adds a new LVS value; a finite field has no such option
            combo[i] = known
            moved += 1
        return self._offer(tuple(combo), _TOGETHER) if moved > 1 else 0

    def _known(self, i: int, value: str) -> str | None:
        """Field ``i``'s own value equal to ``value`` without case or outer spaces, or None."""
        folded = value.strip().casefold()
        return next((v for v in self.values[i]
                     if v is not None and v.strip().casefold() == folded), None)

    def decline(self) -> int:
        """Take no more suggested values, queued or to come: the stopping rule found that its
        answers to them repeat what the crawl has (an issue tracker's search form: each record
        shows its id and title, and each finds that one record again). Returns how many queued
        ones it dropped."""
        dropped = len(self.offers)
        self.declining = True
        self.declined += dropped
        self.offers.clear()
        return dropped

    def _offer(self, combo: tuple, varied: int) -> int:
        """Queue ``combo`` as a suggestion unless it was tried or offered, or the form declines
        suggestions (:meth:`decline`): 1 if queued, else 0."""
        if combo in self.tried or combo in self.offered:
            return 0
        if self.declining:
            self.declined += 1
            return 0
        self.offers.append((combo, varied))
        self.offered.add(combo)
        return 1

    def is_suggested(self, data: Assignment) -> bool:
        """Whether a submission came from :meth:`suggest` (not from the blind LVS order)."""
        return tuple(data.get(name) for name in self.names) in self.offered

    def release(self) -> list[Assignment]:
        """Submissions to send now: every suggested one (they are not blind, and the blind ones
        in flight may wait long in the scheduler), then blind ones up to the wave."""
        return self._take(max(len(self.offers), self.wave - self.in_flight))

    def _score(self, combo: tuple) -> float:
        s = 1.0
        for i, v in enumerate(combo):
            tries, wins = self.stats[i][v]
            s *= (wins + 0.5) / (tries + 1)
        return s

    def _guess(self, combo: tuple) -> bool:
        """Whether ``combo`` holds a value of an LVS field that no answer of the endpoint
        showed (``BlindBudget.shown``) and that never gave a result, or narrows an LVS value
        by another field in a way no record showed (:meth:`suggest_together`): a blind
        guess."""
        shown = self.blind.shown.counts if self.blind is not None else {}
        for i, v in enumerate(combo):
            if (v and self.names[i] in self.lvs_labels and not self.stats[i][v][1]
                    and v.strip().casefold() not in shown.get(self.names[i], ())):
                return True
        # a narrowing of an LVS value (author=Christie with year=2012) that no record showed
        # together: the records of Christie show the years she has
        moved = [i for i, v in enumerate(combo) if v != self.base[i]]
        return (len(moved) > 1 and combo not in self.offered
                and any(self.names[i] in self.lvs_labels for i in moved))

    def _best(self, hold: bool = False) -> tuple | None:
        sizes = [len(v) for v in self.values]
        space = prod(sizes)
        if space <= _ENUMERATE_MAX:
            candidates = (self._combo(k, sizes) for k in range(space))
        else:
            candidates = (self._combo(self.rng.randrange(space), sizes) for _ in range(300))
        best, best_score = None, -1.0
        for combo in candidates:
            if combo in self.tried:
                continue
            if self._narrows_dead(combo):
                self.tried.add(combo)  # never worth sending: counts as tried, not submitted
                self.pruned += 1
                continue
            if hold and self._guess(combo):
                continue
            score = self._score(combo)
            if score > best_score:  # ties: the earlier combination (defaults, LVS order)
                best, best_score = combo, score
        return best

    def _narrows_dead(self, combo: tuple) -> bool:
        """Whether ``combo`` holds a dead value and differs from that value's probe only in
        fields whose default is "no filter" (so its answer can only be a part of "nothing")."""
        for i, v in enumerate(combo):
            if v in self.dead[i] and combo != self.base and all(
                    j == i or w == self.base[j] or self.wild[j] for j, w in enumerate(combo)):
                return True
        return False

    def _combo(self, k: int, sizes: list[int]) -> tuple:
        out = []
        for vals, size in zip(self.values, sizes, strict=True):
            k, digit = divmod(k, size)
            out.append(vals[digit])
        return tuple(out)
