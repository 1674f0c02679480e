"""The ``hwdla`` spider: crawl one site, follow its links, submit its safe forms.

    scrapy crawl hwdla -a seed=http://127.0.0.1:8000/ -O items.jsonl

Arguments (``-a``): ``seed`` (required: the start URL; the crawl stays on its host),
``recrawl=1`` (revisit the pages of the visit store in rank order, skipping expired ones, and
update the store: the paper's crawl → record → rank → filter loop; ``seed`` is then optional and
only narrows the recrawl to its host; pages are revisited, not expanded),
``oracle`` (benchmarks only: a ground-truth JSON lines file; the spider then takes exactly the
actions that lead to hidden pages, the lower bound of downloads).

``query`` (lost-sheep pre-filter, :mod:`hiddenweb.lostsheep.middleware`: links whose label
quits the automaton are dropped or demoted), ``find=1`` with ``query`` (find mode,
:mod:`hiddenweb.lostsheep.find`: the herder looks for the one target page and ends the crawl).

One :class:`~hiddenweb.items.PageItem` per downloaded page, error pages and failed downloads
included. Scope is the seed's *host* (any port; see DEVELOPERS.md: Scrapy's
``LinkExtractor(allow_domains=…)`` compares ``host:port``), robots.txt is obeyed
(``ROBOTSTXT_OBEY``), and forms are submitted only when :func:`hiddenweb.forms.classify` calls
them search or filter forms, unless ``HIDDENWEB_UNSAFE_FORM_CLASSES`` opts in to more.

Request meta written (all picklable): ``hiddenweb_label_context`` (with a query: title, alt
text and words around a link, read by the lost sheep),
``hiddenweb_reached_by`` (how the request was made: seed,
link or form with its fields), ``hiddenweb_form_only`` (a form lies on the chain from the seed),
``hiddenweb_action`` (the action for the DLA scheduler: kind, source page, label, form signature
and fields), ``hiddenweb_oracle_key`` (oracle mode), ``playwright`` (render in Chromium:
:mod:`hiddenweb.browser`), ``hiddenweb_rerender`` (a page fetched over plain HTTP first, rendered
again because its scripts build links or forms), ``hiddenweb_explore`` (a form submission:
the form's signature, for the feedback loop of :mod:`hiddenweb.formexplore`),
``hiddenweb_browser_form`` (a submission made by page actions in Chromium),
``hiddenweb_origin`` (the form endpoint, ``"POST /c/2/locate"``, whose submission led to a hidden
page, directly or through links between hidden pages: :mod:`hiddenweb.harvest`),
``hiddenweb_query`` (the values of that submission, carried along those links: a record whose
value differs from them is evidence of the values the endpoint's records take,
:class:`~hiddenweb.harvest.ShownValues`), ``hiddenweb_reading`` (a token: an answer of the
endpoint still to be read while scheduled, ``HIDDENWEB_FORM_ANSWERS_FIRST``),
``hiddenweb_dependent`` (a probe of a form whose select is filled by a script once another is
chosen: the form's signature; :meth:`HwdlaSpider.dependent_probe`).

Forms are explored adaptively (:class:`~hiddenweb.formexplore.FormExplorer`): each answer
releases the next submission. A page whose visible text was already seen (a "no results" page,
the same result for other values) is a *repeat*: counted in ``hiddenweb/downloads`` and
``hiddenweb/repeats``, not emitted (``HIDDENWEB_EMIT_REPEATS``), not rewarded.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import scrapy
from form2request import form2request
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from twisted.python.failure import Failure

from hiddenweb import defaults
from hiddenweb.browser import (
    BROWSER_SLOT,
    DEPENDENT_PROBE_JS,
    BrowserConfig,
    BrowserPolicy,
    needs_browser,
    submitted_by_script,
)
from hiddenweb.cooccur import WordPages
from hiddenweb.formexplore import BlindBudget, FormExplorer, result_words
from hiddenweb.forms import (
    _SUBMITS,
    SAFE_FORM_CLASSES,
    ButtonInfo,
    FormInfo,
    button_class,
    classify,
    dependent_fields,
    extract_forms,
    looks_like_no_results,
    pin,
    submit_button,
)
from hiddenweb.harvest import endpoint, matched_fields, offer_record, record_fields
from hiddenweb.items import PageItem
from hiddenweb.lostsheep.labels import context_for, link_contexts
from hiddenweb.lvs import LVS, words_of
from hiddenweb.pagetext import fingerprint, page_fingerprint, visible_text


def parse_seed(seed: str | None) -> str:
    """Validate the ``seed`` argument; raise ``ValueError`` with a message a user can act on."""
    if not seed:
        raise ValueError("hwdla needs a start URL: scrapy crawl hwdla -a seed=http://host/")
    parts = urlsplit(seed.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"hwdla: seed {seed!r} is not an http(s) URL with a host "
            "(example: -a seed=http://127.0.0.1:8000/)"
        )
    try:
        parts.port  # noqa: B018  (raises ValueError on a malformed port)
    except ValueError as exc:
        raise ValueError(f"hwdla: seed {seed!r} has a malformed port: {exc}") from exc
    return seed.strip()


MAX_RECORDS_PER_ENDPOINT = 2000  # records kept per form endpoint for forms found later


def form_endpoint(form: FormInfo, button: ButtonInfo | None) -> str:
    """The endpoint (method, action path) a form's submissions go to, through ``button``."""
    return endpoint(button.method if button else form.method,
                    button.action if button else form.action)


def query_of(meta: dict) -> dict[str, str | None]:
    """The submission whose answers a hidden page belongs to (meta ``hiddenweb_query``, or the
    page's own ``hiddenweb_explore_data`` for a form's answer)."""
    return meta.get("hiddenweb_query") or meta.get("hiddenweb_explore_data") or {}


def explorer_endpoint(explorer: FormExplorer) -> str:
    """The endpoint of an explorer's submissions (computed once, kept in its context)."""
    ctx = explorer.context
    if "endpoint" not in ctx:
        ctx["endpoint"] = form_endpoint(ctx["form"], ctx.get("button"))
    return ctx["endpoint"]


class HwdlaSpider(scrapy.Spider):
    name = "hwdla"

    def __init__(self, seed: str | None = None, oracle: str | None = None,
                 recrawl: str | None = None, query: str | None = None,
                 find: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.recrawl = str(recrawl or "").lower() in ("1", "true", "yes", "on")
        self.seed = parse_seed(seed) if seed or not self.recrawl else None
        self.host = urlsplit(self.seed).hostname if self.seed else None
        self.allowed_domains = [self.host] if self.host else []
        self.oracle_path = oracle
        self.query = (query or "").strip() or None  # the lost sheep (hiddenweb.lostsheep)
        self.find = str(find or "").lower() in ("1", "true", "yes", "on")
        if self.find and (not self.query or not self.seed):
            raise ValueError('hwdla: find=1 needs a seed and a query: -a query="contact, phone"')
        self.forms_seen: set[str] = set()
        self.explorers: dict[str, FormExplorer] = {}
        self.records: dict[str, list[dict]] = defaultdict(list)  # endpoint → records shown
        self.blind_budgets: dict[str, BlindBudget] = {}  # endpoint → misses before any result
        # endpoint → its answers scheduled and not yet read (tokens: meta hiddenweb_reading)
        self.reading: dict[str, set[int]] = defaultdict(set)
        # endpoints whose forms may send more: reading ended, evidence changed, a slot freed
        self.to_release: set[str] = set()
        self.by_endpoint: dict[str, list[FormExplorer]] = defaultdict(list)
        self.reading_seq = 0
        self.dependents: dict[str, dict] = {}  # form signature → context of a dependent probe
        self.fingerprints: set[str] = set()
        self.site_words: Counter[str] = Counter()  # pages of this site showing each word
        self.word_pages: WordPages | None = None  # LVS values' pages (from_crawler: cooccur)
        self.oracle_children: dict[str, list[dict]] = defaultdict(list)
        self.oracle_home: dict | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> HwdlaSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        s = crawler.settings
        spider.submit_forms = s.getbool("HIDDENWEB_SUBMIT_FORMS", defaults.HIDDENWEB_SUBMIT_FORMS)
        spider.follow_links = s.getbool("HIDDENWEB_FOLLOW_LINKS", defaults.HIDDENWEB_FOLLOW_LINKS)
        spider.max_submissions = s.getint(
            "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM", defaults.HIDDENWEB_MAX_SUBMISSIONS_PER_FORM
        )
        unsafe = set(s.getlist("HIDDENWEB_UNSAFE_FORM_CLASSES",
                               defaults.HIDDENWEB_UNSAFE_FORM_CLASSES))
        spider.submit_classes = SAFE_FORM_CLASSES | unsafe
        spider.lvs = LVS.from_dir(s.get("HIDDENWEB_LVS_DIR", defaults.HIDDENWEB_LVS_DIR) or None)
        spider.link_extractor = LinkExtractor(unique=True)
        spider.browser = BrowserConfig.from_settings(s)
        spider.policy = BrowserPolicy(spider.browser.mode)
        spider.form_wave = s.getint("HIDDENWEB_FORM_WAVE", defaults.HIDDENWEB_FORM_WAVE)
        spider.harvest = s.getbool("HIDDENWEB_FORM_HARVEST", defaults.HIDDENWEB_FORM_HARVEST)
        spider.form_blind_budget = s.getint("HIDDENWEB_FORM_BLIND_BUDGET",
                                            defaults.HIDDENWEB_FORM_BLIND_BUDGET)
        spider.form_patience = s.getint("HIDDENWEB_FORM_PATIENCE",
                                        defaults.HIDDENWEB_FORM_PATIENCE)
        spider.lvs_learn = s.getint("HIDDENWEB_LVS_LEARN", defaults.HIDDENWEB_LVS_LEARN)
        spider.word_pages = (WordPages.for_lvs(spider.lvs)
                             if s.getbool("HIDDENWEB_FORM_AFFINITY",
                                          defaults.HIDDENWEB_FORM_AFFINITY) else None)
        spider.emit_repeats = s.getbool("HIDDENWEB_EMIT_REPEATS", defaults.HIDDENWEB_EMIT_REPEATS)
        spider.answers_first = s.getbool("HIDDENWEB_FORM_ANSWERS_FIRST",
                                         defaults.HIDDENWEB_FORM_ANSWERS_FIRST)
        if spider.answers_first:
            crawler.signals.connect(spider.answer_scheduled, signal=signals.request_scheduled)
            crawler.signals.connect(spider.answer_dropped, signal=signals.request_dropped)
        spider.finder = None
        crawler.signals.connect(spider.resume_paused_forms, signal=signals.spider_idle)
        if spider.find:
            from hiddenweb.lostsheep.find import SheepFinder
            from hiddenweb.lostsheep.middleware import SheepConfig

            spider.finder = SheepFinder(spider, SheepConfig.from_settings(s), spider.query)
        if spider.oracle_path:
            spider._load_oracle(spider.oracle_path)
        return spider

    # -- start -----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        if self.recrawl:
            for request in self.recrawl_requests():
                yield request
            return
        if self.finder is not None:
            yield self.finder.start_request(self.seed)
            return
        meta = {"hiddenweb_reached_by": {"kind": "seed", "form": None},
                "hiddenweb_form_only": False}
        if self.oracle_home is not None:
            meta["hiddenweb_oracle_key"] = self.oracle_home["key"]
        yield scrapy.Request(self.seed, callback=self.parse, errback=self.on_error,
                             meta=self.browser_meta(self.seed, meta))

    def browser_meta(self, url: str, meta: dict) -> dict:
        """``meta`` plus ``playwright`` when the URL's template goes straight to the browser."""
        if self.policy.direct(url):
            meta.update(playwright=True, download_slot=BROWSER_SLOT,
                        playwright_page_goto_kwargs={"wait_until": "domcontentloaded"})
        return meta

    # -- pages -----------------------------------------------------------------------------
    def parse(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        """A page: its item, links and forms (:meth:`read_page`); then, for a form's answer,
        the explorer's feedback (after the answer's own links are scheduled, so that a form
        whose answers are still to be read holds its blind values: ``holding``)."""
        self.answer_read(response.meta)
        yield from self.read_page(response)
        if response.meta.get("hiddenweb_explore"):
            yield from self.form_feedback(response, response.meta["hiddenweb_new_content"])
        yield from self.release_read()

    def read_page(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        stats = self.crawler.stats
        stats.inc_value("hiddenweb/downloads")
        meta = response.meta
        rendered = "playwright" in (response.flags or [])
        if rendered:
            stats.inc_value("hiddenweb/browser/pages")
        text = self.visible(response)
        item = self.page_item(response, text)
        fp = item["fingerprint"]
        new = fp is None or fp not in self.fingerprints
        if fp is not None:
            self.fingerprints.add(fp)
        if new and text:
            words = set(words_of(text))
            self.site_words.update(words)
            if self.word_pages is not None:
                self.word_pages.add_page(words)
        meta["hiddenweb_new_content"] = new  # the DLA feedback reads it (repeats: not emitted)
        if (new and self.harvest and meta.get("hiddenweb_origin")
                and isinstance(response, TextResponse)):
            yield from self.harvest_requests(response)
        if meta.get("hiddenweb_rerender"):
            stats.inc_value("hiddenweb/browser/rerendered")  # its plain copy was emitted
        elif new or self.emit_repeats or response.status != 200 or self.recrawl:
            yield item
            stats.inc_value("hiddenweb/pages")
            if item["form_only"]:
                stats.inc_value("hiddenweb/pages_form_only")
        else:
            stats.inc_value("hiddenweb/repeats")
        if not isinstance(response, TextResponse) or self.recrawl:
            return
        if self.oracle_path:
            yield from self.oracle_requests(response)
            return
        if not new and not meta.get("hiddenweb_rerender"):
            return  # same content as a page already expanded: same links, same forms
        deferred = False
        if not rendered and self.browser.mode != "never":
            try:
                deferred = needs_browser(response.selector)
            except (ValueError, AttributeError):
                deferred = False
            self.policy.record(response.url, deferred)
            if deferred:
                yield self.rerender(response)
        if self.follow_links:
            yield from self.link_requests(response)
        if self.submit_forms and not deferred:  # else: the forms of the rendered copy
            yield from self.form_requests(response)

    def rerender(self, response: TextResponse) -> scrapy.Request:
        self.crawler.stats.inc_value("hiddenweb/browser/needed")
        request = response.request
        meta = {k: v for k, v in request.meta.items()
                if k.startswith("hiddenweb_") and k != "hiddenweb_explore"}
        meta.update(playwright=True, hiddenweb_rerender=True, download_slot=BROWSER_SLOT,
                    # inline scripts have run by then; images and styles are not loaded anyway
                    playwright_page_goto_kwargs={"wait_until": "domcontentloaded"})
        if self.browser.reuse_body and response.status == 200 \
                and response.url == request.url and request.method == "GET":
            # Chromium gets the body already fetched instead of downloading it again
            ctype = _header(response.headers, b"Content-Type") or "text/html"
            meta.update(hiddenweb_body=response.body, hiddenweb_body_encoding=response.encoding,
                        hiddenweb_body_headers={"Content-Type": ctype},
                        playwright_page_init_callback="hiddenweb.browser.serve_fetched_body")
        return request.replace(meta=meta, dont_filter=True, priority=request.priority + 1)

    @staticmethod
    def visible(response: Response) -> str | None:
        """The page's visible text (markup), its whole text (JSON, plain text), or None."""
        if not isinstance(response, TextResponse):
            return None
        try:
            return visible_text(response.selector)
        except (ValueError, AttributeError):  # not markup
            return response.text

    def page_item(self, response: Response, text: str | None = None) -> PageItem:
        meta = response.meta
        request = response.request
        title = None
        text = self.visible(response) if text is None else text
        text_fp = None
        if isinstance(response, TextResponse):
            try:
                title = response.xpath("normalize-space(//title)").get() or None
                text_fp = page_fingerprint(text or "", response.selector)
            except (ValueError, AttributeError):  # not markup: JSON, plain text
                text_fp = fingerprint(text) if text is not None else None
        headers = response.headers
        by_browser = bool(meta.get("hiddenweb_browser_form"))  # the page the actions led to
        method = request.method if request else "GET"
        if by_browser:  # a navigation to the form's action keeps its method; else a GET
            form = meta.get("hiddenweb_reached_by", {}).get("form") or {}
            method = form.get("method", "GET") if response.url == form.get("action") else "GET"
        return PageItem(
            url=response.url if by_browser or not request else request.url,
            final_url=response.url,
            method=method,
            status=response.status,
            error=None,
            depth=meta.get("depth", 0),
            referrer=_header(request.headers, b"Referer") if request else None,
            reached_by=meta.get("hiddenweb_reached_by", {"kind": "seed", "form": None}),
            form_only=bool(meta.get("hiddenweb_form_only")),
            title=title,
            fingerprint=text_fp,
            fetch_seconds=round(float(meta.get("download_latency", 0.0)), 4),
            fetched_at=round(time.time(), 3),
            downloads=self.crawler.stats.get_value("hiddenweb/downloads", 0),
            action_score=meta.get("hiddenweb_dla_score"),
            content_type=_header(headers, b"Content-Type"),
            cache_control=_header(headers, b"Cache-Control"),
            expires=_header(headers, b"Expires"),
        )

    def on_error(self, failure: Failure) -> Iterator[PageItem | scrapy.Request]:
        self.answer_read(failure.request.meta)
        yield from self.failed(failure)
        yield from self.release_read()

    def failed(self, failure: Failure) -> Iterator[PageItem | scrapy.Request]:
        request = failure.request
        meta = request.meta
        if meta.get("hiddenweb_explore"):
            yield from self.form_feedback(None, False, request)
        if failure.check(IgnoreRequest):  # robots.txt, trap guard: counted where decided
            return
        if meta.get("playwright"):
            yield from self.browser_fallback(failure)
            return
        if request.url == self.seed:
            self.logger.error("Seed unreachable: %s (%s)", request.url, failure.getErrorMessage())
        else:
            self.logger.warning("Download failed: %s (%s)", request.url, failure.getErrorMessage())
        self.crawler.stats.inc_value("hiddenweb/download_errors")
        self.crawler.stats.inc_value("hiddenweb/downloads")
        yield PageItem(
            url=request.url, final_url=request.url, method=request.method, status=None,
            error=f"{failure.type.__name__}: {failure.getErrorMessage()}",
            depth=meta.get("depth", 0), referrer=_header(request.headers, b"Referer"),
            reached_by=meta.get("hiddenweb_reached_by", {"kind": "seed", "form": None}),
            form_only=bool(meta.get("hiddenweb_form_only")), title=None, fingerprint=None,
            fetch_seconds=None, fetched_at=round(time.time(), 3),
            downloads=self.crawler.stats.get_value("hiddenweb/downloads", 0),
            action_score=meta.get("hiddenweb_dla_score"), content_type=None,
            cache_control=None, expires=None,
        )

    def browser_fallback(self, failure: Failure) -> Iterator[scrapy.Request]:
        """A browser crash or timeout: the request is fetched again over plain HTTP (a rerender
        already has its plain copy; a browser form submission is dropped, its form's loop
        goes on)."""
        request = failure.request
        stats = self.crawler.stats
        stats.inc_value("hiddenweb/browser/failures")
        stats.inc_value("hiddenweb/downloads")
        self.logger.warning("Browser failed on %s (%s): %s", request.url,
                            failure.type.__name__, failure.getErrorMessage()[:200])
        if request.meta.get("hiddenweb_rerender") or request.meta.get("hiddenweb_browser_form"):
            return
        stats.inc_value("hiddenweb/browser/fallbacks")
        meta = {k: v for k, v in request.meta.items()
                if not k.startswith("playwright") and k != "download_slot"}
        meta["hiddenweb_browser_fallback"] = True
        yield request.replace(meta=meta, dont_filter=True)

    # -- actions ---------------------------------------------------------------------------
    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and parts.hostname == self.host

    def link_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        form_only = bool(response.meta.get("hiddenweb_form_only"))
        contexts = link_contexts(response) if self.query else None
        for link in self.link_extractor.extract_links(response):
            if not self.in_scope(link.url):
                self.crawler.stats.inc_value("hiddenweb/links/offsite")
                continue
            yield scrapy.Request(
                link.url, callback=self.parse, errback=self.on_error,
                meta=self.browser_meta(link.url, {
                    "hiddenweb_reached_by": {"kind": "link", "form": None},
                    "hiddenweb_form_only": form_only,
                    **({"hiddenweb_origin": response.meta["hiddenweb_origin"],
                        **self.answer_meta(query_of(response.meta))}
                       if form_only and response.meta.get("hiddenweb_origin") else {}),
                    "hiddenweb_action": {"kind": "link", "page": response.url,
                                         "label": link.text.strip()[:200], "form": None,
                                         **({"hidden": True} if form_only else {})},
                    **({} if contexts is None else
                       {"hiddenweb_label_context": context_for(contexts, link.url)}),
                }),
            )

    def form_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        stats = self.crawler.stats
        rendered = "playwright" in (response.flags or [])
        prior: Callable[[str], float] | None = None  # the page's words: read once, if needed
        for form in extract_forms(response.selector, response.url):
            form_class = classify(form)
            stats.inc_value(f"hiddenweb/forms/found/{form_class}")
            if form.signature in self.forms_seen:
                seen = self.explorers.get(form.signature)
                if seen is not None and seen.context.get("page") != response.url:
                    prior = prior or self.value_prior(response)
                    seen.add_prior(prior)  # a copy of the form
                continue
            by_script = submitted_by_script(response.selector, form.selector)
            if by_script and not rendered:
                # this copy needs a browser (its rendered copy, if any, comes back here); a
                # copy of the form on another page may not: the form is not marked seen
                stats.inc_value("hiddenweb/forms/skipped/needs_browser")
                continue
            self.forms_seen.add(form.signature)
            if form_class not in self.submit_classes:
                stats.inc_value(f"hiddenweb/forms/skipped/{form_class}")
                self.logger.debug("Not submitting %s form %s on %s", form_class,
                                  form.signature, response.url)
                continue
            button = submit_button(form, form_class, self.submit_classes)
            for b in form.buttons:
                if button_class(form, form_class, b) not in self.submit_classes:
                    stats.inc_value("hiddenweb/forms/skipped_buttons")
            if button is False:
                stats.inc_value(f"hiddenweb/forms/skipped/{form_class}")
                continue
            if not self.in_scope(button.action if button else form.action):
                stats.inc_value("hiddenweb/forms/skipped/offsite")
                continue
            dependent = dependent_fields(form) if rendered else None
            if dependent is not None:  # the child's options come only once a parent is chosen
                yield self.dependent_probe(response, form, form_class, button, dependent)
                continue
            prior = prior or self.value_prior(response)
            explorer = FormExplorer(form, self.lvs, self.max_submissions,
                                    self.wave_for(by_script),
                                    self.form_patience, self.lvs_learn,
                                    blind=self.blind_budget(form, button), prior=prior,
                                    cooccur=self.word_pages)
            if not explorer.fillable:
                stats.inc_value("hiddenweb/forms/unfillable")
                self.logger.info("Form %s on %s: nothing to fill (%s)", form.signature,
                                 response.url,
                                 f"required fields with no value: {explorer.unfillable}"
                                 if explorer.unfillable else "no field matches the LVS")
                continue
            explorer.context = {"form": form, "form_class": form_class, "button": button,
                                "page": response.url, "browser": by_script,
                                "form_only": bool(response.meta.get("hiddenweb_form_only"))}
            self.explorers[form.signature] = explorer
            self.by_endpoint[explorer_endpoint(explorer)].append(explorer)
            # the DLA rewards the link that led here (hiddenweb.dla.feedback)
            response.meta["hiddenweb_new_forms"] = response.meta.get("hiddenweb_new_forms", 0) + 1
            for record in self.records.get(explorer_endpoint(explorer), ()):
                offer_record(explorer, record, self.lvs)  # what its endpoint already showed
            stats.inc_value("hiddenweb/forms/submitted_forms")
            if by_script:
                stats.inc_value("hiddenweb/forms/browser_forms")
            for data in explorer.first():
                yield from self.submission(explorer, data)

    def wave_for(self, by_browser: bool) -> int:
        """Submissions of one form outstanding: ``HIDDENWEB_FORM_WAVE``; a form submitted in
        the browser keeps at least ``HIDDENWEB_BROWSER_MAX_PAGES`` (one per page it may use:
        a browser submission takes seconds, and a smaller wave leaves the browser idle)."""
        return max(self.form_wave, self.browser.max_pages) if by_browser else self.form_wave

    def dependent_probe(self, response: TextResponse, form: FormInfo, form_class: str,
                        button: ButtonInfo | None, dependent: tuple[str, str]
                        ) -> scrapy.Request:
        """A dependent select (issue 5): in Chromium, choose each value of the parent select
        and read the child's options (:data:`~hiddenweb.browser.DEPENDENT_PROBE_JS`); the
        answer (:meth:`dependent_options`) starts one bounded explorer per parent value."""
        from scrapy_playwright.page import PageMethod

        parent, child = dependent
        self.dependents[form.signature] = {
            "form": form, "form_class": form_class, "button": button, "page": response.url,
            "browser": submitted_by_script(response.selector, form.selector),
            "form_only": bool(response.meta.get("hiddenweb_form_only")), "dependent": dependent}
        self.crawler.stats.inc_value("hiddenweb/forms/dependent_probes")
        timeout_ms = int(min(5.0, self.browser.timeout) * 1000)
        return scrapy.Request(
            response.url, callback=self.dependent_options, errback=self.on_error,
            dont_filter=True, priority=response.request.priority + 1 if response.request else 1,
            meta={"playwright": True, "download_slot": BROWSER_SLOT,
                  "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
                  "playwright_page_methods": [PageMethod(
                      "evaluate", DEPENDENT_PROBE_JS,
                      [form.index, parent, child, self.max_submissions, timeout_ms])],
                  "hiddenweb_dependent": form.signature, "hiddenweb_browser_form": True,
                  "hiddenweb_form_only": bool(response.meta.get("hiddenweb_form_only")),
                  "hiddenweb_action": {"kind": "form", "page": response.url,
                                       "label": f"choose {parent}",
                                       "form": {"signature": form.signature, "fields": {}}}})

    def dependent_options(self, response: Response) -> Iterator[scrapy.Request]:
        """The child's options per parent value: one explorer per value with options, all of
        them together within ``HIDDENWEB_MAX_SUBMISSIONS_PER_FORM`` submissions."""
        stats = self.crawler.stats
        stats.inc_value("hiddenweb/downloads")  # a browser download, not a page of its own
        ctx = self.dependents.get(response.meta["hiddenweb_dependent"])
        methods = response.meta.get("playwright_page_methods") or []
        found = getattr(methods[0], "result", None) if methods else None
        options = {v: [o for o in opts if o] for v, opts in (found or {}).items()
                   if isinstance(opts, list) and any(opts)}
        response.meta["hiddenweb_new_content"] = bool(options)
        if ctx is None or not options:
            return
        parent, child = ctx["dependent"]
        share = max(1, self.max_submissions // len(options))
        for value, opts in options.items():
            form = pin(ctx["form"], parent, value, child, opts)
            if form.signature in self.forms_seen:
                continue
            self.forms_seen.add(form.signature)
            explorer = FormExplorer(form, self.lvs, share, self.wave_for(ctx["browser"]),
                                    self.form_patience,
                                    self.lvs_learn)
            if not explorer.fillable:
                continue
            explorer.context = {**ctx, "form": form}
            self.explorers[form.signature] = explorer
            self.by_endpoint[explorer_endpoint(explorer)].append(explorer)
            stats.inc_value("hiddenweb/forms/submitted_forms")
            stats.inc_value("hiddenweb/forms/dependent_values")
            for data in explorer.first():
                yield from self.submission(explorer, data)

    def blind_budget(self, form: FormInfo, button: ButtonInfo | None) -> BlindBudget:
        """The :class:`BlindBudget` shared by the forms of one endpoint."""
        key = form_endpoint(form, button)
        budget = self.blind_budgets.get(key)
        if budget is None:
            budget = self.blind_budgets[key] = BlindBudget(self.form_blind_budget)
        return budget

    # -- answers first (HIDDENWEB_FORM_ANSWERS_FIRST) ----------------------------------------
    def answer_meta(self, query: dict | None = None) -> dict[str, Any]:
        """Meta marking a request as an answer of its endpoint still to be read (a link on a
        form's answer, or a harvested submission), with the ``query`` it belongs to. Empty
        when the setting is off."""
        if not self.answers_first:
            return {}
        self.reading_seq += 1
        return {"hiddenweb_reading": self.reading_seq,
                **({"hiddenweb_query": query} if query is not None else {})}

    def _reading_changed(self, origin: str) -> None:
        budget = self.blind_budgets.get(origin)
        pending = self.reading.get(origin, ())
        if budget is not None:
            budget.reading = len(pending)
        if not pending:
            self.to_release.add(origin)

    def answer_scheduled(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """``request_scheduled``: an answer of an endpoint is now to be read."""
        token = request.meta.get("hiddenweb_reading")
        if token is not None and request.meta.get("hiddenweb_origin"):
            origin = request.meta["hiddenweb_origin"]
            self.reading[origin].add(token)
            self._reading_changed(origin)

    def answer_dropped(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """``request_dropped`` (a duplicate): it will not be read."""
        self.answer_read(request.meta)

    def answer_read(self, meta: dict) -> None:
        """An answer was read (or failed, or was dropped)."""
        token = meta.get("hiddenweb_reading")
        origin = meta.get("hiddenweb_origin")
        if token is not None and origin in self.reading and token in self.reading[origin]:
            self.reading[origin].discard(token)
            self._reading_changed(origin)

    def release_read(self) -> Iterator[scrapy.Request]:
        """What the forms of the endpoints in ``to_release`` may send now: their answers are
        all read, what the answers show changed, or an answer left room in their wave."""
        if not self.to_release:
            return
        done, self.to_release = self.to_release, set()
        for origin in done:
            for explorer in list(self.by_endpoint.get(origin, ())):
                yield from self.release(explorer)

    def release(self, explorer: FormExplorer) -> Iterator[scrapy.Request]:
        """The submissions ``explorer`` releases now (:meth:`FormExplorer.release`)."""
        holds = explorer.holds
        released = explorer.release()
        if explorer.holds > holds:
            self.crawler.stats.inc_value("hiddenweb/forms/guesses_held", explorer.holds - holds)
        for data in released:
            yield from self.submission(explorer, data)

    def resume_paused_forms(self) -> None:
        """``spider_idle``: nothing is left to download, so the paused forms (patience run out,
        :meth:`FormExplorer.resume`) get another round of blind submissions."""
        if self.crawler.stats.get_value("hiddenweb/dla/budget_exhausted"):
            return
        for origin, pending in self.reading.items():  # idle: nothing is left to read
            if pending:
                pending.clear()
                self._reading_changed(origin)
        for budget in self.blind_budgets.values():  # ... nor in flight (a lost answer)
            budget.flying = 0
        for explorer in self.explorers.values():
            explorer.flying.clear()
        requests = [request for explorer in list(self.explorers.values())
                    for data in explorer.resume() for request in self.submission(explorer, data)]
        if not requests:
            return
        self.crawler.stats.inc_value("hiddenweb/forms/resumed_submissions", len(requests))
        self.logger.debug("Idle: %d more submissions of paused forms", len(requests))
        for request in requests:
            self.crawler.engine.crawl(request)
        raise DontCloseSpider

    def harvest_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        """The ``label: value`` pairs a hidden page shows become the next submissions of the
        form endpoint that led to it (:mod:`hiddenweb.harvest`; meta ``hiddenweb_origin``)."""
        try:
            record = record_fields(response.selector)
        except (ValueError, AttributeError):  # not markup
            return
        if not record:
            return
        origin = response.meta["hiddenweb_origin"]
        records = self.records[origin]
        if len(records) < MAX_RECORDS_PER_ENDPOINT:
            records.append(record)
        stats = self.crawler.stats
        mine = self.by_endpoint.get(origin, [])
        budget = self.blind_budgets.get(origin)
        if budget is not None and self.answers_first:
            labels: dict[str, str] = {}
            for explorer in mine:  # the free-text fields: a finite one lists its values
                labels.update({label: name for label, name
                               in matched_fields(explorer, record, self.lvs).items()
                               if name in explorer.lvs_labels})
            if budget.shown.add(record, labels, query_of(response.meta)):
                self.to_release.add(origin)  # the evidence changed: a hold may end
        for explorer in mine:
            queued = offer_record(explorer, record, self.lvs)
            if queued:
                stats.inc_value("hiddenweb/forms/harvested_values", queued)
                yield from self.release(explorer)

    def form_feedback(self, response: Response | None, new: bool,
                      request: scrapy.Request | None = None) -> Iterator[scrapy.Request]:
        """Tell the form's explorer what a submission gave; yield the submissions it releases."""
        meta = (response.meta if response is not None else request.meta)
        explorer = self.explorers.get(meta["hiddenweb_explore"])
        if explorer is None:
            return
        data = meta.get("hiddenweb_explore_data") or {}
        success = empty = False
        words: list[str] = []
        if response is not None and response.status == 200 \
                and isinstance(response, TextResponse):
            try:
                text = " ".join(response.xpath("//body//text()").getall())
                empty = looks_like_no_results(text)
                success = new and not empty
                if success and explorer.learn:
                    words = result_words(response.xpath("//body//a//text()").getall())
            except (ValueError, AttributeError):
                success = False
        stats = self.crawler.stats
        stats.inc_value(f"hiddenweb/forms/answers_{'new' if success else 'nothing'}")
        pruned, reorders, holds = explorer.pruned, explorer.reorders, explorer.holds
        released = explorer.feedback(data, success, words, empty=empty)
        if explorer.holds > holds:
            stats.inc_value("hiddenweb/forms/guesses_held", explorer.holds - holds)
        if explorer.blind is not None and explorer.blind.flying < explorer.wave:
            self.to_release.add(explorer_endpoint(explorer))  # the endpoint's wave has room
        if explorer.pruned > pruned:
            stats.inc_value("hiddenweb/forms/pruned", explorer.pruned - pruned)
        if explorer.reorders > reorders:
            stats.inc_value("hiddenweb/forms/affinity_reorders")
        for next_data in released:
            yield from self.submission(explorer, next_data)

    def submission(self, explorer: FormExplorer, data: dict[str, str | None]
                   ) -> Iterator[scrapy.Request]:
        ctx = explorer.context
        form: FormInfo = ctx["form"]
        button: ButtonInfo | None = ctx["button"]
        if ctx["browser"]:
            request = self.browser_submission(ctx, data)
        else:
            request = self.form_request(form, button, data)
        if request is None:
            return
        fields = {k: v for k, v in data.items() if v is not None}
        if button is not None and button.kind == "image" and button.name:
            fields.update({f"{button.name}.x": "1", f"{button.name}.y": "1"})
        # the item records what was sent: hidden state and tokens too (over plain HTTP)
        sent = dict(parse_qsl(request.body.decode() if request.method == "POST"
                              else urlsplit(request.url).query, keep_blank_values=True))
        form_meta = {"action": button.action if button else form.action,
                     "method": button.method if button else form.method,
                     "fields": {**sent, **fields},
                     "form_class": ctx["form_class"], "signature": form.signature}
        request.meta.update({
            "hiddenweb_reached_by": {"kind": "form", "form": form_meta},
            "hiddenweb_form_only": True,
            "hiddenweb_action": {"kind": "form", "page": ctx["page"],
                                 "label": button.text[:200] if button else "",
                                 "form": {"signature": form.signature, "fields": fields},
                                 **({"source": "harvest"} if explorer.is_suggested(data)
                                    else {})},
            "hiddenweb_explore": form.signature,
            "hiddenweb_explore_data": dict(data),
            "hiddenweb_origin": explorer_endpoint(explorer),
            **(self.answer_meta() if explorer.is_suggested(data) else {}),
        })
        self.crawler.stats.inc_value("hiddenweb/forms/submissions")
        yield request

    def form_request(self, form: FormInfo, button: ButtonInfo | None,
                     data: dict[str, str | None]) -> scrapy.Request | None:
        """A submission over plain HTTP (form2request), clicking ``button`` if there is one."""
        data = dict(data)
        click = False
        if button is not None:
            click = form.selector.xpath(_SUBMITS)[button.index]
            if button.kind == "image" and button.name:  # a browser sends the click's x, y
                data.update({button.name: None, f"{button.name}.x": "1",
                             f"{button.name}.y": "1"})
        try:
            spec = form2request(form.selector, data, click=click)
        except (ValueError, NotImplementedError) as exc:  # a control form2request cannot build
            self.logger.warning("Cannot build a submission of %s: %s", form.signature, exc)
            return None
        request = spec.to_scrapy(callback=self.parse, errback=self.on_error)
        return request.replace(meta=self.browser_meta(request.url, {}))

    def browser_submission(self, ctx: dict, data: dict[str, str | None]) -> scrapy.Request:
        """A submission by page actions in Chromium: fill, select, check, click submit."""
        from scrapy_playwright.page import PageMethod

        form: FormInfo = ctx["form"]
        button: ButtonInfo | None = ctx["button"]
        scope = f"#{form.element_id}" if form.element_id else f"form >> nth={form.index}"
        kinds = {f.name: f.kind for f in form.fields}
        parent, child = ctx.get("dependent") or (None, None)
        methods = []
        for name, value in data.items():
            target = f'{scope} >> [name="{name}"]'
            kind = kinds.get(name, "text")
            if kind == "select":
                methods.append(PageMethod("select_option", target, value or ""))
                if name == parent and data.get(child):  # wait for the script's options
                    wanted = str(data[child]).replace('"', '\\"')
                    methods.append(PageMethod(
                        "wait_for_selector", f'{scope} >> [name="{child}"] >> '
                        f'option[value="{wanted}"]', state="attached"))
            elif kind == "radio":
                methods.append(PageMethod("check", f'{target}[value="{value}"]'))
            elif kind == "checkbox":
                methods.append(PageMethod("check" if value is not None else "uncheck", target))
            elif value is not None:
                methods.append(PageMethod("fill", target, value))
        if button is not None:
            clickable = ("button[type=submit], button:not([type]), input[type=submit],"
                         f" input[type=image] >> nth={button.index}")
            methods.append(PageMethod("click", f"{scope} >> {clickable}"))
        else:
            methods.append(PageMethod("evaluate", "i => document.forms[i].requestSubmit()",
                                      form.index))
        methods.append(PageMethod("wait_for_load_state", "networkidle"))
        return scrapy.Request(ctx["page"], callback=self.parse, errback=self.on_error,
                              dont_filter=True,
                              meta={"playwright": True, "playwright_page_methods": methods,
                                    "download_slot": BROWSER_SLOT,
                                    "hiddenweb_browser_form": True})

    def value_prior(self, response: TextResponse) -> Callable[[str], float]:
        """How much the site already speaks of an LVS value: its words on the form's own page
        (weight 3) and on the pages seen so far (log of how many), for :class:`FormExplorer`."""
        page = set(words_of(self.visible(response) or ""))
        site = self.site_words

        def prior(value: str) -> float:
            return sum(3.0 * (w in page) + math.log1p(site[w]) for w in words_of(value))

        return prior

    # -- recrawl ---------------------------------------------------------------------------
    def recrawl_requests(self) -> Iterator[scrapy.Request]:
        """The store's pages in rank order (``VisitStore.recrawl_targets``), highest first."""
        from hiddenweb.store import VisitStore, resolve_store_path

        s = self.crawler.settings
        path = resolve_store_path(s.get("HIDDENWEB_STORE_PATH", defaults.HIDDENWEB_STORE_PATH))
        if not path.exists():
            self.logger.error("recrawl=1: no visit store at %s (crawl first)", path)
            return
        with VisitStore(path) as store:
            targets = [t for t in store.recrawl_targets(by="combined")
                       if self.host is None or urlsplit(t.url).hostname == self.host]
        if not targets:
            self.logger.warning("Recrawl: no stored page is due in %s (crawl first)", path)
            return
        self.logger.info("Recrawl: %d stored pages due, in rank order", len(targets))
        self.crawler.stats.set_value("hiddenweb/recrawl/targets", len(targets))
        for rank, target in enumerate(targets):
            fields = target.formdata
            form = ({"action": target.url, "method": target.method, "fields": fields,
                     "form_class": "recrawl", "signature": "recrawl"} if fields else None)
            meta = {"hiddenweb_reached_by": {"kind": "recrawl", "form": form},
                    "hiddenweb_form_only": target.hidden}
            priority = len(targets) - rank
            if target.method == "POST" and fields:
                yield scrapy.FormRequest(target.url, formdata=fields,
                                         callback=self.parse, errback=self.on_error,
                                         meta=meta, priority=priority, dont_filter=True)
            else:
                yield scrapy.Request(target.url, callback=self.parse, errback=self.on_error,
                                     meta=meta, priority=priority, dont_filter=True)

    # -- oracle (benchmarks) ---------------------------------------------------------------
    def _load_oracle(self, path: str) -> None:
        """Keep the truth's hidden pages and the chains of actions that reach them."""
        pages = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                page = json.loads(line)
                pages[page["key"]] = page
        needed: set[str] = set()
        for page in pages.values():
            if page["hidden"] and not page.get("needs_browser"):
                key = page["key"]
                while key is not None and key not in needed:
                    needed.add(key)
                    action = pages[key].get("action")
                    key = action["from_key"] if action else None
        for key in needed:
            action = pages[key].get("action")
            if action is None:
                self.oracle_home = pages[key]
            else:
                self.oracle_children[action["from_key"]].append(pages[key])

    def oracle_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        parent_form_only = bool(response.meta.get("hiddenweb_form_only"))
        for page in self.oracle_children.get(response.meta.get("hiddenweb_oracle_key"), []):
            action = page["action"]
            is_form = action["via"] == "form"
            data = [tuple(pair) for pair in action.get("data") or []]
            url = response.urljoin(action["url"])  # the truth holds paths; the port is the run's
            meta = {
                "hiddenweb_oracle_key": page["key"],
                "hiddenweb_form_only": parent_form_only or is_form,
                "hiddenweb_reached_by": {
                    "kind": "form" if is_form else "link",
                    "form": {"action": url, "method": action["method"],
                             "fields": dict(data), "form_class": "search",
                             "signature": "oracle"} if is_form else None,
                },
            }
            if action["method"] == "POST":
                yield scrapy.FormRequest(url, formdata=data, callback=self.parse,
                                         errback=self.on_error, meta=meta, dont_filter=True)
            else:
                yield scrapy.Request(url, callback=self.parse, errback=self.on_error,
                                     meta=meta, dont_filter=True)


def _header(headers: Any, name: bytes) -> str | None:
    value = headers.get(name) if headers is not None else None
    return value.decode("latin-1") if value else None
