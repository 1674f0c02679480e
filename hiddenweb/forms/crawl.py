"""The forms of one crawl: found on pages, explored by feedback, their answers read.

:class:`FormCrawler` is what the spider hands its pages to. It owns every form's
:class:`~hiddenweb.forms.explorer.FormExplorer` (keyed by :attr:`FormInfo.signature`) and every
endpoint's shared state (:class:`~hiddenweb.forms.endpoint.Endpoint`), and returns the requests
to schedule. The interface with the spider:

* :meth:`page` — a page with new content: its forms, judged by the safety policy
  (``spider.safety``, :mod:`hiddenweb.safety`: one call per form, marked ``SAFETY:``, which also
  picks the button to click); the allowed, fillable ones start
  exploring (their first wave of submissions); a form seen before adds the page's words to its
  prior; a dependent select starts a probe in Chromium (the spider's ``dependent_options``
  callback hands the probe's answer to :meth:`dependent_options`).
* :meth:`new_page` — a page whose content is new: its words join the site's vocabulary, and a
  hidden page's ``label: value`` record goes to the forms of the endpoint that led to it
  (:func:`~hiddenweb.forms.endpoint.offer_record`).
* :meth:`answer_read` first and :meth:`answered` last, for every response and every failure:
  a form's answer goes to its explorer (:meth:`FormExplorer.feedback`), and the endpoints whose
  answers are all read release their next submissions.
* :meth:`answer_meta` — the meta that marks a link on a form's answer as an answer still to be
  read (``form_answers_first``).
* ``spider_idle``: paused forms get another round (:meth:`FormExplorer.resume`), unless the
  DLA scheduler's download budget ran out (:data:`hiddenweb.signals.download_budget_exhausted`).

Requests carry the meta of :func:`hiddenweb.forms.submit.describe`; stats are
``hiddenweb/forms/...``: ``…/submissions_made`` counts the submissions made, and
``…/submissions`` those sent (``request_reached_downloader``; not a redirect's or a retry's
second request, nor a page's browser render), what the site received: a crawl that closes with
submissions queued (``CLOSESPIDER_*``, ``hiddenweb_stale``) made more than it sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response, TextResponse

from hiddenweb.browser import submitted_by_script
from hiddenweb.browser.requests import SUBMIT_SENT_META
from hiddenweb.dla.previews import PREVIEW_META
from hiddenweb.forms.config import FormsConfig
from hiddenweb.forms.endpoint import Endpoint, matched_fields, offer_record
from hiddenweb.forms.explorer import MAX_TYPED, FormExplorer
from hiddenweb.forms.extract import (
    ButtonInfo,
    FormInfo,
    dependent_fields,
    extract_forms,
    submittable,
)
from hiddenweb.forms.lvs import LVS
from hiddenweb.forms.records import (
    BlindBudget,
    endpoint,
    looks_like_no_results,
    record_fields,
    rejected,
    result_words,
)
from hiddenweb.forms.stopping import StoppingRule
from hiddenweb.forms.submit import browser_request, describe, is_submission, plain_request
from hiddenweb.forms.values import SiteWords, WordPages
from hiddenweb.forms.versions import FormVersions
from hiddenweb.forms.vocabulary import SITE, SiteVocabulary, field_words
from hiddenweb.framedocs import appended
from hiddenweb.pagetext import (
    AWAITED_META,
    NEW_TEXT_META,
    SHOWN_META,
    compiled,
    content_text,
    node_strings,
)
from hiddenweb.pagetext import words as words_of
from hiddenweb.redis_shared import CLAIMED, TAKEN_OVER, form_claims
from hiddenweb.signals import download_budget_exhausted, stale_limit_reached

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from hiddenweb.safety import FormVerdict
    from hiddenweb.spiders.hwdla import HwdlaSpider

logger = logging.getLogger(__name__)

#: meta of a request that sends a submission already sent: a redirect's or a retry's second
#: request, a page's browser render, its plain copy after a browser failure
SAME_SUBMISSION = ("redirect_times", "retry_times", "hiddenweb_rerender",
                   "hiddenweb_browser_fallback")

#: how a form's answer was judged (``FormCrawler.feedback``), read by hiddenweb.stale: "new"
#: (a new page), "known" (nothing new, from a form that gave new pages before: the forms' rule
#: retires it once its answers stop being new) or "blind" (nothing new, and its form never gave
#: a new page: a search box whose first words find nothing may find pages later)
ANSWER_META = "hiddenweb_answer"
_BODY_TEXT = compiled("//body//text()")  # an answer's text (no-results words) ...
_LINK_TEXT = compiled("//body//a//text()")  # ... and its links' (the words a result adds)


class FormCrawler:
    """The forms of one crawl (see the module docstring)."""

    def __init__(self, crawler: Crawler, spider: HwdlaSpider, config: FormsConfig) -> None:
        self.crawler, self.spider, self.config = crawler, spider, config
        self.lvs = LVS.from_dir(config.lvs_dir or None)
        self.site = SiteWords(WordPages.for_lvs(self.lvs) if config.affinity else None)
        self.vocabulary = SiteVocabulary()  # for the free-text fields no LVS label matches
        self.seen: set[str] = set()  # signatures of the forms met (explored or not)
        self.explorers: dict[str, FormExplorer] = {}
        #: each form family (FormInfo.family) -> the signature of its first explorer
        self.family_first: dict[str, str] = {}
        self.endpoints: dict[str, Endpoint] = {}
        self.to_release: set[str] = set()  # endpoints whose forms may send more
        self.versions = FormVersions(self)
        self.stopping = StoppingRule(config, crawler)
        self.reading_seq = 0
        #: each endpoint with answers to read (kept by :meth:`_reading_changed`) → requests
        #: downloaded since one of them was read
        self.reading_stalled: dict[str, int] = {}
        self.budget_exhausted = False
        #: a JOBDIR resume's pending submissions whose form has no explorer yet: by signature,
        #: each submission's values and whether its answer came before the explorer
        self.resumed: dict[str, list[tuple[dict, bool]]] = {}
        self.claims = form_claims(crawler)  # shared mode: one worker explores each form
        crawler.signals.connect(self.resume_paused, signal=signals.spider_idle)
        crawler.signals.connect(self._budget_exhausted, signal=download_budget_exhausted)
        crawler.signals.connect(self.request_dropped, signal=signals.request_dropped)
        crawler.signals.connect(self.submission_sent, signal=signals.request_reached_downloader)
        crawler.signals.connect(self.stale_limit, signal=stale_limit_reached)
        if config.answers_first:
            crawler.signals.connect(self.answer_scheduled, signal=signals.request_scheduled)

    @property
    def stats(self) -> Any:
        return self.crawler.stats  # set once the crawl starts, after the spider is built

    # -- JOBDIR ------------------------------------------------------------------------------
    #: what :meth:`jobdir_state` keeps: every explorer (values tried, values that paid,
    #: suggestions, pauses), the endpoints (blind budgets, records, values shown), the
    #: dependent-select probes, the LVS with its learnt values and the site's words
    _STATE = ("lvs", "site", "vocabulary", "seen", "explorers", "endpoints", "to_release",
              "reading_seq", "budget_exhausted")

    def jobdir_state(self) -> dict[str, Any]:
        """What the forms learned, picklable in one piece (shared objects stay shared): the
        JOBDIR checkpoint (:mod:`hiddenweb.dla.jobdir`) writes it with the journal's done
        requests, so a resumed crawl goes on from it instead of re-learning."""
        return {**{name: getattr(self, name) for name in self._STATE},
                "probes": self.versions.probes, "recent": self.stopping.recent,
                "families": (self.stopping.family_recent, self.stopping.family_retired,
                             self.stopping.suggested)}

    def restore_jobdir_state(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`jobdir_state` (a resumed crawl, before any request)."""
        for name in self._STATE:
            setattr(self, name, state[name])
        self.versions.probes = state["probes"]
        self.stopping.recent = state["recent"]
        if "families" in state:  # a checkpoint from before form families: none spent
            (self.stopping.family_recent, self.stopping.family_retired,
             self.stopping.suggested) = state["families"]
        # reading tokens issued after the checkpoint are in the journal's replayed requests:
        # new ones must not take their numbers
        self.reading_seq += 1 << 20
        self.reading_stalled = {key: 0 for key, ep in self.endpoints.items() if ep.reading}
        for signature, explorer in self.explorers.items():
            self.family_first.setdefault(explorer.form.family, signature)

    def _budget_exhausted(self) -> None:
        self.budget_exhausted = True

    def _endpoint(self, key: str, blind: bool = False) -> Endpoint:
        """The endpoint ``key``; with ``blind``, with its :class:`BlindBudget` (the forms found
        on pages share one; a dependent select's forms go by their share of the limit)."""
        ep = self.endpoints.get(key)
        if ep is None:
            ep = self.endpoints[key] = Endpoint(key)
        if blind and ep.budget is None:
            ep.budget = BlindBudget(self.config.blind_budget)
        return ep

    def wave_for(self, by_browser: bool) -> int:
        """Submissions of one form outstanding: ``form_wave``; a form submitted in
        the browser keeps at least ``HIDDENWEB_BROWSER_MAX_PAGES`` (one per page it may use:
        a browser submission takes seconds, and a smaller wave leaves the browser idle), which
        it reaches by its answers: it sends its defaults alone first (lab knob
        ``form_browser_slow_start``, :attr:`FormExplorer.first_wave`)."""
        return max(self.config.wave, self.spider.browser.max_pages) if by_browser \
            else self.config.wave

    # -- a page's forms ------------------------------------------------------------------------
    def page(self, response: TextResponse, text: str | None) -> Iterator[scrapy.Request]:
        """The forms of a page with new content (see the module docstring)."""
        if not self.config.submit:
            return
        stats = self.stats
        rendered = "playwright" in (response.flags or [])
        prior: Callable[[str], float] | None = None  # the page's words: read once, if needed
        for form in extract_forms(response.selector, response.url):
            verdict = self.spider.safety.form(form)  # SAFETY: a form, its buttons, their methods
            form_class = verdict.kind
            stats.inc_value(f"hiddenweb/forms/found/{form_class}")
            if form.signature in self.seen:
                seen = self.explorers.get(form.signature)
                prior = self._copy_met(seen, response, text, prior)
                if seen is not None and response.meta.get("hiddenweb_explore") == seen.signature:
                    yield from self.versions.post_back(seen, form, response)
                continue
            # a form of a frame document or a shadow root: over plain HTTP (framedocs)
            by_script = submitted_by_script(response.selector, form.selector) \
                and not (form.selector is not None and appended(form.selector))
            if by_script and not rendered:
                # this copy needs a browser (its rendered copy, if any, comes back here); a
                # copy of the form on another page may not: the form is not marked seen
                stats.inc_value("hiddenweb/forms/skipped/needs_browser")
                continue
            if self._lost_explorer(form, response.meta):
                stats.inc_value("hiddenweb/forms/skipped/before_its_page")
                continue
            if (view_of := self._view_copy(form, response.url)) is not None:
                self.seen.add(form.signature)
                prior = self._copy_met(self.explorers.get(view_of), response, text, prior)
                continue
            claim = self.claims.claim(form.signature, response) if self.claims else CLAIMED
            if not claim:
                continue  # shared mode: another worker explores it (hiddenweb.redis_shared)
            self.seen.add(form.signature)
            if not submittable(form):  # nor do we: not by requestSubmit() in Chromium either
                stats.inc_value("hiddenweb/forms/skipped/no_control")
                continue
            button = self._button(form, verdict, response.url)
            if button is False:
                continue
            form_only = bool(response.meta.get("hiddenweb_form_only"))
            dependent = dependent_fields(form) if rendered else None
            if dependent is not None:  # the child's options come only once a parent is chosen
                probe = FormExplorer(form, self.lvs, 0, form_class=form_class, button=button,
                                     page=response.url, by_browser=by_script,
                                     form_only=form_only, dependent=dependent)
                yield self.versions.probe(response, probe)
                continue
            prior = prior or self.site.prior(text or "", content_text(response))
            # the DLA rewards the link that led here (hiddenweb.dla.feedback)
            response.meta["hiddenweb_new_forms"] = response.meta.get("hiddenweb_new_forms", 0) + 1
            for version, chosen in [(form, button), *self.versions.buttons(form, verdict, button)]:
                limit = self.config.max_submissions
                family = self.stopping.family_of(version)
                if self.stopping.family_spent(family, self.spider.mass.counts):
                    limit = 1  # its siblings' answers repeat: sent once, as the page gives it
                    stats.inc_value("hiddenweb/forms/family_spent")
                    logger.debug("Form %s on %s: sent with its defaults only (its family %s "
                                 "is spent)", version.signature, response.url, family)
                explorer = FormExplorer(
                    version, self.lvs, limit, self.wave_for(by_script),
                    self.config.patience, self.config.lvs_learn,
                    blind=self._endpoint(endpoint(chosen.method if chosen else form.method,
                                                  chosen.action if chosen else form.action),
                                         blind=True).budget,
                    prior=prior, cooccur=self.site.word_pages, form_class=form_class,
                    button=chosen, page=response.url, by_browser=by_script, form_only=form_only,
                    vocabulary=self.vocabulary, defaults_first=True,
                    page_words=self.config.page_words,
                    inert_repeats=self.config.inert_repeats,
                    first_wave=1 if by_script and self.config.browser_slow_start else None)
                if not explorer.fillable:  # sent once, as the page gives it
                    stats.inc_value("hiddenweb/forms/defaults_only")
                    logger.debug("Form %s on %s: sent with its defaults only (%s)",
                                 version.signature, response.url,
                                 f"required fields with no value: {explorer.unfillable}"
                                 if explorer.unfillable else "no field to vary")
                if by_script:
                    stats.inc_value("hiddenweb/forms/browser_forms")
                explorer.taken_over = claim == TAKEN_OVER
                yield from self.start(explorer)

    def _copy_met(self, explorer: FormExplorer | None, response: TextResponse,
                  text: str | None, prior: Callable[[str], float] | None
                  ) -> Callable[[str], float] | None:
        """A copy of ``explorer``'s form met on another page: that page's words inform its
        values too (:meth:`FormExplorer.add_prior`). Returns the page's prior, read once per
        page (``prior``: already read, or None)."""
        if explorer is not None and explorer.page != response.url:
            prior = prior or self.site.prior(text or "", content_text(response))
            explorer.add_prior(prior)
        return prior

    def _view_copy(self, form: FormInfo, url: str) -> str | None:
        """The signature of the explored form that ``form`` is a copy of, when ``form`` only
        asks again for its own page at ``url`` in the view it shows (:meth:`FormInfo.
        echoes_page`: the filter form of a listing's sort or facet page) and its family was
        explored already; else None. Such a copy is met as a copy of the family's first form,
        whose values its page's words now inform too (:meth:`page`), and not submitted: its
        default answer is the page itself, read already. Without this rule each sort and facet
        page of a listing brought a new form, whose first submission the stale rule waits
        for: a Trac crawl sent 151 of them after it had read everything. Lab knob
        ``form_view_copies``; stat ``hiddenweb/forms/view_copies``."""
        if not self.config.view_copies:
            return None
        first = self.family_first.get(form.family)
        if first is None or not form.echoes_page(url):
            return None
        self.stats.inc_value("hiddenweb/forms/view_copies")
        logger.debug("Form %s on %s: a view of its page, a copy of %s", form.signature, url,
                     first)
        return first

    def _lost_explorer(self, form: FormInfo, meta: dict) -> bool:
        """Whether ``form`` is met on an answer of its own endpoint (meta ``hiddenweb_origin``)
        while no explorer of that endpoint exists: only after a JOBDIR resume, when the answer
        is read before the page whose explorers sent it (the journal reads that page again).
        The form is left for its page: explored from here, its page would be the answer's."""
        origin = meta.get("hiddenweb_origin")
        if not origin:
            return False
        ep = self.endpoints.get(origin)
        if ep is not None and ep.explorers:
            return False
        return origin in {endpoint(form.method, form.action),
                          *(endpoint(b.method, b.action) for b in form.buttons)}

    def _button(self, form: FormInfo, verdict: FormVerdict, url: str
                ) -> ButtonInfo | None | bool:
        """The button to click (None: submitted by Enter), or False when the form is not to be
        submitted (the safety policy refused it and every button, or its action is off the
        crawl's scope). Refusals are counted (``hiddenweb/forms/skipped/<reason>``,
        ``…/skipped_buttons`` and the spider's ``hiddenweb/safety/…``)."""
        stats = self.stats
        if not verdict.allowed:
            stats.inc_value(f"hiddenweb/forms/skipped/{verdict.reason}")
            self.spider.refuse("forms", verdict.reason)
            logger.debug("Not submitting %s form %s on %s (%s)", verdict.reason, form.signature,
                         url, verdict.evidence)
            return False
        for _, reason in verdict.refused_buttons:  # never clicked: another one is
            stats.inc_value("hiddenweb/forms/skipped_buttons")
            self.spider.refuse("buttons", reason)
        button = form.buttons[verdict.button] if verdict.button is not None else None
        if not self.spider.in_scope(button.action if button else form.action):
            stats.inc_value("hiddenweb/forms/skipped/offsite")
            return False
        return button

    def start(self, explorer: FormExplorer, offer: bool = True) -> Iterator[scrapy.Request]:
        """Register an explorer and send its first wave (``offer``: after the values its
        endpoint's answers already showed), but for the submissions of its form a JOBDIR
        resume gave back (:meth:`pending_after_resume`)."""
        self.explorers[explorer.signature] = explorer
        for data, answered in self.resumed.pop(explorer.signature, ()):
            explorer.sent_before_resume(data, answered)
        self.family_first.setdefault(explorer.form.family, explorer.signature)
        ep = self._endpoint(explorer.endpoint)
        ep.explorers.append(explorer)
        for record in ep.records if offer else ():
            offer_record(explorer, record, self.lvs)
        self.stats.inc_value("hiddenweb/forms/submitted_forms")
        for data in explorer.first():
            for request in self.submission(explorer, data):
                request.meta[AWAITED_META] = True  # read before the crawl may close stale
                yield request

    def pending_after_resume(self, meta: dict) -> None:
        """A request the JOBDIR journal gives back pending on resume (:mod:`hiddenweb.dla.
        jobdir`): when it is a submission of a form, the form's explorer counts it as sent
        (:meth:`FormExplorer.sent_before_resume`), now or once the form is met again. The
        explorer may start on another page's copy of the form than the killed crawl's; sent
        from there, a query already answered was a page of its own (a browser submission's
        answer is its page with the results in it) and was emitted twice. Stat
        ``hiddenweb/forms/resumed_submissions``."""
        signature = meta.get("hiddenweb_explore")
        if not isinstance(signature, str):
            return
        data = dict(meta.get("hiddenweb_explore_data") or {})
        self.stats.inc_value("hiddenweb/forms/resumed_submissions")
        explorer = self.explorers.get(signature)
        if explorer is not None:
            explorer.sent_before_resume(data)
        else:
            self.resumed.setdefault(signature, []).append((data, False))

    # -- versions of a form (hiddenweb.forms.versions) -----------------------------------------
    def dependent_options(self, response: Response) -> Iterator[scrapy.Request]:
        """The answer of a dependent-select probe (:meth:`FormVersions.options`)."""
        yield from self.versions.options(response)

    # -- submissions -----------------------------------------------------------------------------
    def submission(self, explorer: FormExplorer, data: dict[str, str | None]
                   ) -> Iterator[scrapy.Request]:
        """One submission of ``explorer`` as a request (plain HTTP or page actions)."""
        spider = self.spider
        if explorer.by_browser:
            request = browser_request(explorer, data, callback=spider.parse,
                                      errback=spider.on_error)
            if len(explorer.typed) < MAX_TYPED:
                explorer.typed.update(w for v in data.values() if v for w in words_of(v))
        else:
            request = plain_request(explorer, data, callback=spider.parse,
                                    errback=spider.on_error)
            if request is None:
                return
            request = request.replace(meta=spider.browser_meta(request.url, {}))
        request.meta.update(describe(explorer, data, request, self.config.keep_tokens))
        if explorer.is_suggested(data):
            request.meta.update(self.answer_meta())
        self.stats.inc_value("hiddenweb/forms/submissions_made")
        yield request

    def gone(self, meta: dict) -> None:
        """A submission in Chromium found no form to act on: its form is not on a fresh render
        of its page, nor after its events (:class:`hiddenweb.browser.formtarget.FormGone`; a
        form shown once, or in a state the page does not show again). Its explorer sends
        nothing more (``hiddenweb/forms/gone``); those already sent come back the same way."""
        explorer = self.explorers.get(meta.get("hiddenweb_explore") or "")
        if explorer is None or explorer.gone:
            return
        explorer.gone = True
        explorer.limit = explorer.submitted
        self.stats.inc_value("hiddenweb/forms/gone")
        logger.info("Form %s of %s is not on a fresh render of its page: no more submissions "
                    "of it", explorer.signature, explorer.page)

    def heard(self, explorer: FormExplorer, sent: int) -> None:
        """A submission of ``explorer`` in Chromium was answered having sent ``sent`` requests
        after the submitting action (its navigations, its script's requests, beacons: meta
        :data:`~hiddenweb.browser.requests.SUBMIT_SENT_META`). From its first answer that sent
        none, it is sent one at a time (its wave 1, back to a browser form's, :meth:`wave_for`,
        once one sends something);
        once ``page_only_after`` of its answered submissions (lab knob
        ``form_page_only_after``) sent none and none sent any,
        the form only changes its page (a script keeps what is typed in the page's own storage,
        a calculator, a filter of what the page shows already): what it shows next comes from
        no server, so nothing more is sent (``hiddenweb/forms/page_only``); those in flight
        come back as usual. A form whose submission the browser refused (a required field left
        empty) counts the same: its next values are as refused."""
        after = self.config.page_only_after
        if sent:
            if not explorer.heard and explorer.silent and after:
                explorer.wave = self.wave_for(True)  # it talks to a server after all
            explorer.heard = True
            return
        explorer.silent += 1
        if not after or explorer.heard or explorer.silent > after:
            return
        if explorer.silent < after:  # one at a time until it is judged
            explorer.wave = 1
            return
        explorer.limit = explorer.submitted
        self.stats.inc_value("hiddenweb/forms/page_only")
        logger.info("Form %s of %s sent no request when submitted (%d times): it only changes "
                    "its page; no more submissions of it", explorer.signature, explorer.page,
                    after)

    def typed_echoes(self, meta: dict) -> AbstractSet[str]:
        """The words of every value typed so far into the form whose answer has ``meta``, when
        it was submitted in Chromium (lab knob ``form_typed_echoes``), else none: the spider
        counts them as echoes of the request (:func:`hiddenweb.pagetext.echoed_words`, which
        reads only a URL's query and a posted body, and a browser submission's request has
        neither). The page keeps its storage between submissions, so a script may show any
        value typed before, not only this answer's: a query page's bookmark form, handled in
        the page, listed each name saved so far, and every answer was a new page (sqlite-web:
        38 submissions, each a page load in Chromium, all "new")."""
        explorer = self.explorers.get(meta.get("hiddenweb_explore") or "")
        if explorer is None or not explorer.by_browser or not self.config.typed_echoes:
            return frozenset()
        return explorer.typed  # (read, not kept: the spider joins it to the request's own)

    def submission_sent(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """``request_reached_downloader``: a submission is sent (``…/submissions``); its
        redirect's and retry's requests, its browser render and its plain copy after a browser
        failure are the same submission."""
        meta = request.meta
        if is_submission(request) and not any(meta.get(again) for again in SAME_SUBMISSION):
            self.stats.inc_value("hiddenweb/forms/submissions")

    def release(self, explorer: FormExplorer) -> Iterator[scrapy.Request]:
        """The submissions ``explorer`` releases now (:meth:`FormExplorer.release`)."""
        holds = explorer.holds
        released = explorer.release()
        if explorer.holds > holds:
            self.stats.inc_value("hiddenweb/forms/guesses_held", explorer.holds - holds)
        for data in released:
            yield from self.submission(explorer, data)

    # -- answers -------------------------------------------------------------------------------
    def new_page(self, response: Response, text: str | None) -> Iterator[scrapy.Request]:
        """A page whose content was not seen before: its words join the site's vocabulary, and
        a hidden page's ``label: value`` record goes to the forms of the endpoint that led to it
        (:mod:`hiddenweb.forms.records`; meta ``hiddenweb_origin``): the submissions it
        releases."""
        markup, record = isinstance(response, TextResponse), None
        if markup:  # read once: the vocabulary's labelled values and the harvest's record
            try:
                record = record_fields(response.selector)
            except (ValueError, AttributeError):  # not markup
                markup = False
        if text:
            self.site.add_page(text)
            if isinstance(response, TextResponse):
                yield from self.offer_labelled(self.vocabulary.add_page(
                    response.selector if markup else None, text, record))
        if self.config.harvest and response.meta.get("hiddenweb_origin") and record:
            yield from self.harvest(response, record)

    def offer_labelled(self, pairs: list[tuple[str, str]]) -> Iterator[scrapy.Request]:
        """Labelled values new to the site's vocabulary (a table column, a ``label: value``
        pair), suggested to the free-text fields of their name that no LVS label matched."""
        if not pairs:
            return
        for explorer in list(self.explorers.values()):
            queued = 0
            for f in explorer.form.fields:
                if not explorer.lvs_labels.get(f.name, "").startswith(SITE):
                    continue
                words = field_words(f)
                queued += sum(explorer.suggest(f.name, value) for label, value in pairs
                              if set(label.split()) & words)
            if queued:
                self.stats.inc_value("hiddenweb/forms/site_values", queued)
                yield from self.release(explorer)

    def answered(self, meta: dict, response: Response | None, new: bool,
                 repeat: bool = False) -> Iterator[scrapy.Request]:
        """After a response (or, with ``response`` None, a failure) of a request with ``meta``
        was read: a form's feedback, and what the endpoints whose answers are now all read may
        send. ``repeat``: the answer redirected to a page the crawl had already read."""
        if meta.get("hiddenweb_explore"):
            yield from self.feedback(meta, response, new, repeat=repeat)
        yield from self.release_read()

    def harvest(self, response: TextResponse, record: dict[str, list[str]]
                ) -> Iterator[scrapy.Request]:
        """A hidden page's record (:func:`record_fields`), offered to the forms of its
        endpoint."""
        ep = self._endpoint(response.meta["hiddenweb_origin"])
        ep.keep(record)
        if ep.budget is not None and self.config.answers_first:
            labels: dict[str, str] = {}
            for explorer in ep.explorers:  # the free-text fields: a finite one lists its values
                labels.update({label: name for label, name
                               in matched_fields(explorer, record, self.lvs).items()
                               if name in explorer.lvs_labels})
            if ep.budget.shown.add(record, labels, query_of(response.meta)):
                self.to_release.add(ep.key)  # the evidence changed: a hold may end
        for explorer in ep.explorers:
            declined = explorer.declined
            queued = offer_record(explorer, record, self.lvs)
            if explorer.declined > declined:  # a retired form (hiddenweb.forms.stopping)
                self.stats.inc_value("hiddenweb/forms/declined", explorer.declined - declined)
            if queued:
                self.stats.inc_value("hiddenweb/forms/harvested_values", queued)
                yield from self.release(explorer)

    def feedback(self, meta: dict, response: Response | None, new: bool,
                 repeat: bool = False) -> Iterator[scrapy.Request]:
        """Tell the form's explorer what a submission gave; yield the submissions it releases.
        ``repeat``: the submission redirected to a page the crawl had already read (the
        redirect was dropped as a duplicate), see :meth:`FormExplorer.feedback`."""
        explorer = self.explorers.get(meta["hiddenweb_explore"])
        data = meta.get("hiddenweb_explore_data") or {}
        if explorer is None:
            pending = self.resumed.get(meta["hiddenweb_explore"], [])
            for i, (sent, _answered) in enumerate(pending):
                if sent == data:  # answered before its form's explorer exists: kept so
                    pending[i] = (sent, True)
                    break
            return
        if explorer.answered_before(data):  # a duplicate after a JOBDIR resume: judged once
            self.stats.inc_value("hiddenweb/forms/answered_twice")
            return
        if SUBMIT_SENT_META in meta:
            self.heard(explorer, meta[SUBMIT_SENT_META])
        success = empty = False
        words: list[str] = []
        if response is not None and response.status == 200 \
                and isinstance(response, TextResponse):
            try:
                text = " ".join(node_strings(response.selector, _BODY_TEXT))
                empty = looks_like_no_results(text)
                success = new and not empty and not rejected(meta, response, explorer.page)
                if success and self.config.previews_known and meta.get(PREVIEW_META):
                    success = False  # what it lists, the crawl has in hand: no new page
                    self.stats.inc_value("hiddenweb/forms/answers_preview")
                if success and data and meta.get(NEW_TEXT_META) is False \
                        and self.stopping.by_text(explorer.form):
                    success = False  # known text rearranged: another view of a page read
                    self.stats.inc_value("hiddenweb/forms/answers_rearranged")
                if success and explorer.learn:
                    words = result_words(node_strings(response.selector, _LINK_TEXT))
            except (ValueError, AttributeError):
                success = False
        meta[ANSWER_META] = "new" if success else "known" if explorer.new_pages else "blind"
        stats = self.stats
        stats.inc_value(f"hiddenweb/forms/answers_{'new' if success else 'nothing'}")
        self.stopping.answered(explorer, self.spider.mass, response, success,
                               suggested=explorer.is_suggested(data), defaults=not data)
        pruned, reorders, holds = explorer.pruned, explorer.reorders, explorer.holds
        inert = explorer.ended_inert
        released = explorer.feedback(data, success, words, empty=empty,
                                     shown=meta.get(SHOWN_META), repeat=repeat)
        if explorer.ended_inert and not inert:
            stats.inc_value("hiddenweb/forms/inert")  # its values change nothing: ended
            self.stopping.ended(explorer)  # and it counts against its family
        elif self.stopping.across_pages(explorer.form) and not self.stopping.own_pages(explorer) \
                and not explorer.ended_inert and not explorer.ended_empty and explorer.done \
                and not explorer.in_flight and not released:
            # a copy of a form that posts back to its page, done, no new page: for its family
            # (across pages) a copy retired; a diff's display options on every wiki page
            # were explored page after page, 5 to 14 POSTs each (a Trac crawl: 282 POSTs)
            explorer.ended_empty = True
            stats.inc_value("hiddenweb/forms/own_page_empty")
            self.stopping.ended(explorer)
        if explorer.holds > holds:
            stats.inc_value("hiddenweb/forms/guesses_held", explorer.holds - holds)
        if explorer.blind is not None and explorer.blind.flying < explorer.wave:
            self.to_release.add(explorer.endpoint)  # the endpoint's wave has room
        if explorer.pruned > pruned:
            stats.inc_value("hiddenweb/forms/pruned", explorer.pruned - pruned)
        if explorer.reorders > reorders:
            stats.inc_value("hiddenweb/forms/affinity_reorders")
        for next_data in released:
            yield from self.submission(explorer, next_data)

    # -- answers first (form_answers_first) ------------------------------------------
    def answer_meta(self, query: dict | None = None, reading: bool = True) -> dict[str, Any]:
        """Meta marking a request as an answer of its endpoint still to be read (a link on a
        form's answer, or a harvested submission), with the ``query`` it belongs to; with
        ``reading`` False (a link served last: nofollow, a guessed source, a JSON value), only
        the query: the endpoint's blind guesses do not wait for what is read last. Empty when
        the setting is off."""
        if not self.config.answers_first:
            return {}
        query_meta = {"hiddenweb_query": query} if query is not None else {}
        if not reading:
            return query_meta
        self.reading_seq += 1
        return {"hiddenweb_reading": self.reading_seq, **query_meta}

    def _reading_changed(self, ep: Endpoint) -> None:
        if ep.budget is not None:
            ep.budget.reading = len(ep.reading)
        if not ep.reading:
            self.to_release.add(ep.key)
            self.reading_stalled.pop(ep.key, None)
        else:
            self.reading_stalled.setdefault(ep.key, 0)

    def answer_scheduled(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """``request_scheduled``: an answer of an endpoint is now to be read."""
        token = request.meta.get("hiddenweb_reading")
        if token is not None and request.meta.get("hiddenweb_origin"):
            ep = self._endpoint(request.meta["hiddenweb_origin"])
            ep.reading.add(token)
            self._reading_changed(ep)

    def request_dropped(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """``request_dropped`` (a duplicate): it will not be read. A form's submission that
        duplicates an earlier request (its defaults were the page's defaults) is answered
        "nothing new" at once, so its slot in the form's wave is not held for ever. A
        submission whose *redirect* is dropped (Post/Redirect/Get back to a page already read:
        a preferences form) is a *repeat*: its answer shows nothing the crawl has not read.
        In shared mode, a form taken over from a worker that died gets back the submissions
        that worker sent: they are dropped too, and are not judged (:meth:`FormExplorer.known`):
        counted as misses, they ended the explorer of a search form after the values the dead
        worker had tried, before it sent one of its own."""
        self.answer_read(request.meta, downloaded=False)
        if request.meta.get("hiddenweb_form_only"):
            self.spider.mass.recapture(request)  # a hidden page asked for again
        if request.meta.get("hiddenweb_explore"):
            self.stats.inc_value("hiddenweb/forms/duplicates")
            repeat = bool(request.meta.get("redirect_urls"))
            explorer = self.explorers.get(request.meta["hiddenweb_explore"])
            if explorer is not None and explorer.taken_over and not repeat:
                # sent and read by the worker that died: no answer to judge here. What it
                # releases is sent on the reactor's next turn: sent from here, the next
                # duplicate would be dropped inside this call, and so on, one stack frame
                # deeper for each value the dead worker had tried
                self.stats.inc_value("hiddenweb/forms/read_by_the_dead")
                released = explorer.known(request.meta.get("hiddenweb_explore_data") or {})
                if explorer.blind is not None:
                    self.to_release.add(explorer.endpoint)  # the endpoint's wave has room
                from twisted.internet import reactor  # the one Scrapy installed

                reactor.callLater(0, self._send_released, explorer, released)
                return
            if repeat:
                self.stats.inc_value("hiddenweb/forms/redirected_to_read")
            for follow in list(self.answered(request.meta, None, False, repeat=repeat)):
                self.crawler.engine.crawl(follow)

    def stale_limit(self, spider: scrapy.Spider) -> int:
        """``stale_limit_reached`` (:mod:`hiddenweb.stale`): the crawl may close before the
        answers its endpoints wait for are read, so those holds end, as when the spider is idle
        (:meth:`resume_paused`); what they release is sent at once, marked awaited. Returns
        how many requests were sent."""
        self._end_reading_holds()
        requests = list(self.release_read())
        for request in requests:
            request.meta[AWAITED_META] = True
            self.crawler.engine.crawl(request)
        return len(requests)

    def _send_released(self, explorer: FormExplorer, released: list[dict]) -> None:
        if not getattr(self.crawler.engine, "running", False):
            return  # the crawl ended meanwhile
        requests = [request for data in released
                    for request in self.submission(explorer, data)]
        requests += self.release_read()
        for request in requests:
            self.crawler.engine.crawl(request)

    def answer_read(self, meta: dict, downloaded: bool = True) -> None:
        """A request was read or failed (``downloaded``), or was dropped; if it was an
        endpoint's answer still to be read, it no longer is. An endpoint whose answers wait
        while ``form_reading_patience`` requests are downloaded and none of them is read is no
        longer waited for (:meth:`_reading_stalled`)."""
        token = meta.get("hiddenweb_reading")
        ep = self.endpoints.get(meta.get("hiddenweb_origin"))
        read = None
        if token is not None and ep is not None and token in ep.reading:
            ep.reading.discard(token)
            self.reading_stalled.pop(ep.key, None)  # the count starts again (if any are left)
            self._reading_changed(ep)
            read = ep.key
        if downloaded and self.config.reading_patience:
            self._reading_stalled(read)

    def _reading_stalled(self, read: str | None) -> None:
        """One more request downloaded: endpoints whose answers to read waited
        ``form_reading_patience`` requests with none read are waited for no more (their holds
        end, stat ``hiddenweb/forms/reading_given_up``). The scheduler serves a form's answers
        by what their links learned, not first: on Datasette a canned query's last answers'
        export links sank with the exports the crawl had read, and the query's last symbol,
        held behind them, waited until the crawl was about to close (30 s), or was lost."""
        patience = self.config.reading_patience
        for key in list(self.reading_stalled):
            if key == read:  # the endpoint just read
                continue
            waited = self.reading_stalled[key] = self.reading_stalled[key] + 1
            if waited >= patience:
                ep = self.endpoints[key]
                self.stats.inc_value("hiddenweb/forms/reading_given_up")
                logger.debug("%d answers of %s still unread after %d requests: its guesses "
                             "wait for them no more", len(ep.reading), key, waited)
                ep.reading.clear()
                self._reading_changed(ep)

    def _end_reading_holds(self) -> None:
        """No answer of any endpoint is waited for any more: the holds that waited for them
        end (their endpoints go to ``to_release``)."""
        for ep in self.endpoints.values():
            if ep.reading:
                ep.reading.clear()
                self._reading_changed(ep)

    def release_read(self) -> Iterator[scrapy.Request]:
        """What the forms of the endpoints in ``to_release`` may send now: their answers are
        all read, what the answers show changed, or an answer left room in their wave."""
        if not self.to_release:
            return
        done, self.to_release = self.to_release, set()
        for key in done:
            ep = self.endpoints.get(key)
            for explorer in list(ep.explorers if ep is not None else ()):
                yield from self.release(explorer)

    def resume_paused(self) -> None:
        """``spider_idle``: nothing is left to download, so the paused forms (patience run out,
        :meth:`FormExplorer.resume`) get another round of blind submissions; retired ones
        (``HIDDENWEB_STOP_MASS``) do not, and when only they are left the crawl closes with
        the reason ``hiddenweb_exhausted`` (in shared mode a worker waits instead: the crawl
        ends, "finished", once every worker is idle)."""
        if self.budget_exhausted:
            return
        self._end_reading_holds()  # idle: nothing is left to read
        for ep in self.endpoints.values():
            if ep.budget is not None:
                ep.budget.flying = 0  # ... nor in flight (a lost answer)
        for explorer in self.explorers.values():
            explorer.flying.clear()
            self.stopping.idle(explorer)
        requests = [request for explorer in list(self.explorers.values())
                    for data in explorer.resume() for request in self.submission(explorer, data)]
        if not requests:
            if self.claims is None:  # shared mode: the crawl ends once every worker is idle
                self.stopping.close_if_spent(self.explorers.values())  # (redis_scheduler)
            return
        self.stats.inc_value("hiddenweb/forms/resumed_submissions", len(requests))
        logger.debug("Idle: %d more submissions of paused forms", len(requests))
        for request in requests:
            self.crawler.engine.crawl(request)
        raise DontCloseSpider


def query_of(meta: dict) -> dict[str, str | None]:
    """The submission whose answers a hidden page belongs to (meta ``hiddenweb_query``, or the
    page's own ``hiddenweb_explore_data`` for a form's answer)."""
    return meta.get("hiddenweb_query") or meta.get("hiddenweb_explore_data") or {}

