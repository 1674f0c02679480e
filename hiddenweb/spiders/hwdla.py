"""The ``hwdla`` spider: crawl one site, follow its links, submit its safe forms.

    scrapy crawl hwdla -a seed=http://127.0.0.1:8000/ -O items.jsonl

Arguments (``-a``): ``seed`` (required: the start URL; the crawl stays on its host),
``recrawl=1`` (revisit the visit store's pages in rank order, :mod:`hiddenweb.recrawl`; ``seed``
is then optional and only narrows the recrawl to its host), ``query`` (the lost-sheep
pre-filter on link labels, :mod:`hiddenweb.lostsheep.middleware`), ``find=1`` with ``query``
(find mode, :mod:`hiddenweb.lostsheep.find`: look for the one target page and stop),
``oracle`` (benchmarks only: :mod:`hiddenweb.bench.oracle`).

The spider reads a page into its item (:func:`hiddenweb.items.page_item`), its links and its
forms, and hands the forms to :class:`hiddenweb.forms.crawl.FormCrawler`, which explores them
and returns their submissions. Whether a page is new is judged once (``pagetext.SeenContent``):
a page whose content was already seen (a "no results" page) is a *repeat*, counted in
``hiddenweb/downloads`` and ``hiddenweb/repeats``, not emitted (``HIDDENWEB_EMIT_REPEATS``) and
not expanded. A page whose scripts build links or forms is rendered again in Chromium
(:mod:`hiddenweb.browser`). Scope is the seed's *host* (any port: Scrapy's
``LinkExtractor(allow_domains=…)`` compares ``host:port``); robots.txt is obeyed.

Every submission, button, link and recrawl replay is judged by the safety policy
(:mod:`hiddenweb.safety`, ``docs/safety.md``), asked at one call site each, marked ``SAFETY:``;
refusals are counted (:meth:`HwdlaSpider.refuse`). The request meta keys, all ``hiddenweb_``
and picklable, are listed in ``docs/architecture.md``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from itertools import chain
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy
from parsel import Selector
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure

from hiddenweb import defaults
from hiddenweb import signals as hw_signals
from hiddenweb.browser import BrowserConfig, BrowserPolicy, needs_browser
from hiddenweb.browser.formtarget import FormGone
from hiddenweb.browser.renders import RenderGate
from hiddenweb.browser.requests import (
    DIRECT_META,
    direct_meta,
    fallback_request,
    rerender_request,
)
from hiddenweb.config import lab
from hiddenweb.dla.kinds import SERVE_FIRST_META, SERVE_NEXT_META
from hiddenweb.dla.previews import PREVIEW_META, Previews
from hiddenweb.dla.redis_frontier import HANDED_META
from hiddenweb.estimate import HiddenMass
from hiddenweb.forms.crawl import ANSWER_META, FormCrawler, FormsConfig, query_of
from hiddenweb.forms.extract import extract_forms, submittable
from hiddenweb.framedocs import with_srcdoc
from hiddenweb.items import PageItem, failed_item, page_item
from hiddenweb.lostsheep.labels import context_for, link_contexts
from hiddenweb.pagetext import (
    AWAITED_META,
    NEW_CONTENT_META,
    NOVEL_META,
    READ_META,
    RECHECK_META,
    RENDER_ADDED_META,
    SeenContent,
    echoed_words,
    is_markup,
    template_key,
    text_blocks,
    visible_text,
)
from hiddenweb.quietlogs import log_level_set
from hiddenweb.recrawl import recrawl_requests
from hiddenweb.redis_shared import seen_content, shown_text
from hiddenweb.routepatterns import FIRST_RECORDS, MAX_GIVEN, RoutePatterns
from hiddenweb.routes import is_route
from hiddenweb.routesiblings import RouteSiblings
from hiddenweb.safety import SafetyPolicy, anchor_markup, link_markup
from hiddenweb.urlsources import (
    SKIPPED_EXTENSIONS,
    Found,
    names_data,
    reply_type,
    reply_urls,
)

_TRUE = ("1", "true", "yes", "on")
#: fetched once the seed answered (``HIDDENWEB_URL_SOURCES``), source ``well-known``
WELL_KNOWN = ("/robots.txt", "/sitemap.xml")
#: reply types whose text is the site's words (forms' vocabulary); a script or a stylesheet
#: (fetched as URL sources) is not
WORDS = ("html", "json", "xml", "text")


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


def link_extractor() -> LinkExtractor:
    """The spider's link extractor: anchors, areas and the pages a page frames (forms in
    iframes); PDFs and feeds are read, :data:`SKIPPED_EXTENSIONS` are not."""
    return LinkExtractor(unique=True, tags=("a", "area", "iframe", "frame"),
                         attrs=("href", "src"), deny_extensions=sorted(SKIPPED_EXTENSIONS))


class HwdlaSpider(scrapy.Spider):
    name = "hwdla"

    def __init__(self, seed: str | None = None, oracle: str | None = None,
                 recrawl: str | None = None, query: str | None = None,
                 find: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.recrawl = str(recrawl or "").lower() in _TRUE
        self.seed = parse_seed(seed) if seed or not self.recrawl else None
        self.host = urlsplit(self.seed).hostname if self.seed else None
        self.allowed_domains = [self.host] if self.host else []
        self.oracle_path = oracle
        self.query = (query or "").strip() or None  # the lost sheep (hiddenweb.lostsheep)
        self.find = str(find or "").lower() in _TRUE
        if self.find and (not self.query or not self.seed):
            raise ValueError('hwdla: find=1 needs a seed and a query: -a query="contact, phone"')
        self.seen = SeenContent()
        self.previews: Previews | None = None  # lab knob dla_previews (from_crawler)
        self.siblings: RouteSiblings | None = None  # lab knob route_siblings (from_crawler)
        self.siblings_last = False  # lab knob route_siblings_last (from_crawler)
        self.siblings_first = False  # lab knob route_siblings_first (from_crawler)
        #: URL templates of the hash routes requested (lab knob route_templates_first, from_crawler)
        self.route_templates: set[str] | None = None
        self.patterns: RoutePatterns | None = None  # lab knob route_patterns (from_crawler)
        self.oracle = None
        self.finder = None

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """The crawl logs at INFO (progress, warnings, the closing report) unless the user set
        ``LOG_LEVEL`` (``-L DEBUG`` gives every request and item line back)."""
        super().update_settings(settings)
        if not log_level_set(settings):
            settings.set("LOG_LEVEL", "INFO", priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> HwdlaSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        s = crawler.settings
        spider.follow_links = s.getbool("HIDDENWEB_FOLLOW_LINKS", defaults.HIDDENWEB_FOLLOW_LINKS)
        spider.emit_repeats = s.getbool("HIDDENWEB_EMIT_REPEATS", defaults.HIDDENWEB_EMIT_REPEATS)
        spider.url_sources = s.getbool("HIDDENWEB_URL_SOURCES", defaults.HIDDENWEB_URL_SOURCES)
        spider.url_guesses = s.getbool("HIDDENWEB_URL_GUESSES", defaults.HIDDENWEB_URL_GUESSES)
        spider.obey_robots = s.getbool("ROBOTSTXT_OBEY")
        spider.link_extractor = link_extractor()
        spider.browser = BrowserConfig.from_settings(s)
        spider.policy = BrowserPolicy(spider.browser.mode,
                                      min_seen=max(1, lab(s, "browser_min_renders")),
                                      useful_share=lab(s, "browser_useful_share"),
                                      judge_new=lab(s, "browser_judge_new_templates"),
                                      route_share=lab(s, "browser_route_share"),
                                      judge_read=lab(s, "browser_judge_read"),
                                      route_templates=lab(s, "browser_route_templates"),
                                      route_anchors=lab(s, "route_anchors"))
        spider.renders = RenderGate(crawler, spider.policy, spider.in_scope,
                                    lab(s, "browser_render_gate"), spider.dropped_render,
                                    lab(s, "render_trace") or None,
                                    lab(s, "browser_judge_direct"), lab(s, "browser_withdraw"),
                                    spider.acts_on if lab(s, "browser_judge_acted") else None,
                                    judge_views=lab(s, "browser_judge_views"),
                                    judge_known=lab(s, "browser_judge_known"),
                                    redo_scripts=lab(s, "browser_withdraw_by_scripts"),
                                    earned=lab(s, "browser_earned_renders"),
                                    route_shells=lab(s, "browser_route_shells"))
        spider.safety = SafetyPolicy.from_settings(s)  # SAFETY: the policy and its opt-ins
        spider.forms = FormCrawler(crawler, spider, FormsConfig.from_settings(s))
        spider.mass = HiddenMass(crawler, lab(s, "estimate_trace") or None)
        spider.shown = shown_text(crawler, lab(s, "novelty"))  # in Redis in shared mode
        spider.seen = seen_content(crawler)  # in Redis when HIDDENWEB_REDIS_URL is set
        spider.previews = Previews() if lab(s, "dla_previews") else None
        spider.siblings = RouteSiblings() if lab(s, "route_siblings") and spider.url_guesses \
            and spider.browser.hash_routes and spider.browser.mode != "never" else None
        spider.siblings_last = lab(s, "route_siblings_last")  # served last, as other guesses
        spider.siblings_first = lab(s, "route_siblings_first") and not spider.siblings_last
        spider.route_templates = set() if lab(s, "route_templates_first") \
            and spider.browser.hash_routes and spider.browser.mode != "never" else None
        # a view a pattern names is asked for under its first records, then by the siblings
        # rule under the others once a render proved it (routepatterns.py)
        spider.patterns = RoutePatterns(FIRST_RECORDS if spider.siblings else MAX_GIVEN) \
            if lab(s, "route_patterns") and spider.url_guesses and spider.browser.hash_routes \
            and spider.browser.mode != "never" else None
        crawler.signals.connect(spider.recheck, signal=hw_signals.recheck_wanted)
        if spider.find:
            from hiddenweb.lostsheep.find import SheepFinder
            from hiddenweb.lostsheep.middleware import SheepConfig

            spider.finder = SheepFinder(
                spider, SheepConfig.from_settings(s), spider.query,
                str(s.get("HIDDENWEB_FIND_STRATEGY", defaults.HIDDENWEB_FIND_STRATEGY)).lower(),
                str(s.get("HIDDENWEB_FIND_TEXT", defaults.HIDDENWEB_FIND_TEXT)).lower())
        if spider.oracle_path:
            from hiddenweb.bench.oracle import Oracle

            spider.oracle = Oracle(spider.oracle_path)
        return spider

    # -- JOBDIR ------------------------------------------------------------------------------
    #: the name of its part of a JOBDIR's checkpoint (:mod:`hiddenweb.dla.jobdir`)
    jobdir_name = "spider"

    def jobdir_state(self) -> dict[str, Any]:
        """What the crawl learned that a resume after a kill should not learn again: the forms
        (:meth:`FormCrawler.jobdir_state`), the texts pages showed (``ShownText``) and which URL
        templates need the browser (``BrowserPolicy``). Pages already read are the journal's
        (:mod:`hiddenweb.dla.journal`)."""
        return {"forms": self.forms.jobdir_state(), "shown": self.shown, "policy": self.policy}

    def restore_jobdir_state(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`jobdir_state` (a resumed crawl, before any request)."""
        self.forms.restore_jobdir_state(state["forms"])
        for name in ("shown", "policy"):  # other parts hold these objects: updated in place
            getattr(self, name).__dict__.update(state[name].__dict__)

    # -- start -----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        if self.recrawl:
            for request in recrawl_requests(self):
                yield request
            return
        if self.finder is not None:
            yield self.finder.start_request(self.seed)
            return
        meta = {"hiddenweb_reached_by": {"kind": "seed", "form": None},
                "hiddenweb_form_only": False, "hiddenweb_source": "seed"}
        if self.oracle is not None and self.oracle.home is not None:
            meta["hiddenweb_oracle_key"] = self.oracle.home["key"]
        yield scrapy.Request(self.seed, callback=self.parse, errback=self.on_error,
                             meta=self.browser_meta(self.seed, meta))

    def browser_meta(self, url: str, meta: dict) -> dict:
        """``meta`` plus ``playwright`` when the URL's template goes straight to the browser."""
        if self.policy.direct(url):
            meta.update(direct_meta(), **{DIRECT_META: True})
        return meta

    # -- pages -----------------------------------------------------------------------------
    def parse(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        """A page: its item, links and forms (:meth:`read_page`); then, for a form's answer,
        the explorer's feedback (after the answer's own links are scheduled, so that a form
        whose answers are still to be read holds its blind values)."""
        meta = response.meta
        if meta.get(RECHECK_META):  # read again for the stale rule's comparison, only that
            self.crawler.signals.send_catch_log(hw_signals.page_read, blocks=text_blocks(response),
                                                echoed=set(), url=response.url, spider=self)
            return
        self.forms.answer_read(meta)
        yield from self.read_page(response)
        if meta.get("hiddenweb_explore"):
            yield from self.forms.feedback(meta, response,
                                           meta[NEW_CONTENT_META] and meta[NOVEL_META])
        blocks, echoed, title = meta.pop(READ_META, ([], set(), None))
        get = response.request is None or response.request.method == "GET"
        self.crawler.signals.send_catch_log(hw_signals.page_read, blocks=blocks, echoed=echoed,
                                            title=title,
                                            answer=meta.get(ANSWER_META),
                                            url=response.url if get else None, spider=self,
                                            awaited=meta.get(AWAITED_META, False),
                                            request=response.request)
        yield from self.forms.release_read()

    def read_page(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        stats = self.crawler.stats
        stats.inc_value("hiddenweb/downloads")
        meta = response.meta
        rendered = "playwright" in (response.flags or [])
        if rendered:
            stats.inc_value("hiddenweb/browser/pages")
        blocks = text_blocks(response)  # (none in a binary reply: its fingerprint decides)
        if not rendered and (response.request is None or response.request.method == "GET"):
            # a render's script GET of it adds nothing; a page of text is no app's shell
            self.policy.read_plain(response.url, sum(len(b.split()) for b in blocks)
                                   if response.status == 200 else 0)
        if self.previews is not None:
            self.previews.page_read(response.url, *(
                [response.request.url] if response.request is not None else []))
        text = self.visible(response, blocks if is_markup(response) else None)
        found = self.named_urls(response)  # its URL sources: part of what makes a page new
        item = self.page_item(response, text, [f.url for f in found])
        new = self.seen.judge(meta, item["fingerprint"])  # the DLA feedback reads it too
        # handed back from a dead worker (shared mode), which may have read it without its item
        # reaching the feed: emitted and expanded again (the dupefilter drops what it queued)
        fresh = new or bool(meta.get(HANDED_META))
        # does it show anything new (not only another order of what was shown)? A repeat
        # does not, but its set's hash tells a form's explorer what its answer showed
        echoed = echoed_words(response.request) | self.forms.typed_echoes(meta)
        novel = not blocks or self.shown.judge(meta, blocks, echoed)
        # for page_read, sent once a form's answer is judged
        meta[READ_META] = (blocks, echoed, item["title"])
        meta[NOVEL_META] = new and novel
        if item["form_only"] and response.status == 200:
            self.mass.capture(response.request, item["fingerprint"])  # what is left: estimate
        kind = reply_type(response)
        if new and kind in WORDS:  # the site's words and values: not its scripts and styles
            yield from self.forms.new_page(response, text)
        if rendered and not meta.get("hiddenweb_rerender"):
            self.renders.judged_direct(response)  # against the document Chromium received
        if meta.get("hiddenweb_rerender"):
            stats.inc_value("hiddenweb/browser/rerendered")  # its plain copy was emitted
            self.renders.judged(response)
        elif fresh or self.emit_repeats or response.status != 200 or self.recrawl:
            yield item
            stats.inc_value("hiddenweb/pages")
            if item["form_only"]:
                stats.inc_value("hiddenweb/pages_form_only")
        else:
            stats.inc_value("hiddenweb/repeats")
        if meta.get("hiddenweb_source") == "seed" and self.url_sources and self.follow_links \
                and self.oracle is None and not self.recrawl:  # the site answered: its
            for path in WELL_KNOWN:  # robots.txt (Sitemap lines) and sitemap.xml, read by type
                yield self.follow(None, urljoin(self.seed, path), "", "well-known")
        if kind != "html" or self.recrawl:  # JSON, XML, text, PDF, binary: by type, no forms
            if new and self.follow_links and not self.recrawl:
                yield from self.source_requests(response, found, set())
            return
        if self.oracle is not None:
            yield from self.oracle.requests(response, self.parse, self.on_error)
            return
        if not fresh and not meta.get("hiddenweb_rerender"):
            return  # same content as a page already expanded: same links, same forms
        page = with_srcdoc(response)  # its links and forms: its srcdoc frames' too
        deferred = False
        # an error page (a 404 for robots.txt, a 500) is not rendered: the same page answers
        # every missing URL, and what its scripts build is the site's chrome, read elsewhere
        if not rendered and self.browser.mode != "never" and 200 <= response.status < 300:
            try:
                deferred = needs_browser(page.selector)
            except (ValueError, AttributeError):
                deferred = False
            self.policy.record(response.url, deferred)
            if deferred:  # unless its template's renders add nothing (browser/renders.py)
                self.crawler.stats.inc_value("hiddenweb/browser/needed")
                action = self.renders.offer(
                    page, rerender_request(response, self.browser.reuse_body))
                if isinstance(action, scrapy.Request):
                    yield action
                deferred = action != "skip"  # not rendered: its forms are read from this copy
        if self.follow_links:
            links = list(self.link_requests(page))
            if self.previews is not None and self.previews.judge(
                    response.url, (r.url for r in links), bool(item["form_only"])):
                meta[PREVIEW_META] = True  # the DLA feedback: a penalty (dla/previews.py)
                stats.inc_value("hiddenweb/dla/previews")
            yield from links
            yield from self.sibling_requests(response, (r.url for r in links))
            yield from self.pattern_requests(response, (r.url for r in links))
            yield from self.source_requests(response, found, {r.url for r in links})
            yield from self.xhr_requests(response)
        if not deferred:  # else: those of the rendered copy (held: renders.RenderGate)
            yield from self.forms.page(page, text)

    def dropped_render(self, response: TextResponse) -> Iterator[scrapy.Request]:
        """The forms of a page whose render was held, then dropped (its template's renders
        added nothing): read from its plain copy (``response``), as they would have been."""
        yield from self.forms.page(response, self.visible(response))
        yield from self.forms.release_read()

    @staticmethod
    def visible(response: Response, nodes: list[str] | None = None) -> str | None:
        """The page's visible text (HTML; from its text ``nodes`` when already read), its whole
        text (JSON, XML, plain text, CSS, scripts), or None (PDF, binary)."""
        if not isinstance(response, TextResponse):
            return None
        if reply_type(response) != "html":
            return response.text
        try:
            return visible_text(response.selector, nodes)
        except (ValueError, AttributeError):  # not markup
            return response.text

    def page_item(self, response: Response, text: str | None = None,
                  named: list[str] | None = None) -> PageItem:
        text = self.visible(response) if text is None else text
        return page_item(response, text,
                         self.crawler.stats.get_value("hiddenweb/downloads", 0), named)

    def dependent_options(self, response: Response) -> Iterator[scrapy.Request]:
        """The answer of a dependent-select probe (``FormVersions.probe``, forms/versions.py)."""
        yield from self.forms.dependent_options(response)

    def recheck(self, url: str) -> None:
        """``recheck_wanted``: queue a GET of ``url`` again, read only by the stale rule."""
        self.crawler.engine.crawl(scrapy.Request(
            url, callback=self.parse, errback=self.recheck_failed, dont_filter=True,
            meta={RECHECK_META: True, "hiddenweb_source": "recheck"}))

    def recheck_failed(self, failure: Failure) -> None:
        self.crawler.stats.inc_value("hiddenweb/stale/rechecks_failed")

    def on_error(self, failure: Failure) -> Iterator[PageItem | scrapy.Request]:
        meta = failure.request.meta
        if meta.get(AWAITED_META):  # nothing to read: the stopping rule waits for it no more
            self.crawler.signals.send_catch_log(hw_signals.page_read, blocks=[], echoed=set(),
                                                spider=self, awaited=meta[AWAITED_META])
        self.forms.answer_read(meta)
        if failure.check(FormGone):  # its form is not on its page: no more submissions of it
            self.forms.gone(meta)
        if meta.get("hiddenweb_explore"):
            yield from self.forms.feedback(meta, None, False)
        yield from self.failed(failure)
        yield from self.forms.release_read()

    def failed(self, failure: Failure) -> Iterator[PageItem | scrapy.Request]:
        request = failure.request
        if failure.check(IgnoreRequest):  # robots.txt, trap guard: counted where decided
            return
        if request.meta.get("playwright"):
            self.renders.failed(request)
            yield from self.browser_fallback(failure)
            return
        if self.seed in (request.url, *request.meta.get("redirect_urls", ())[:1]):
            self.logger.error("Seed unreachable: %s (%s)", request.url, failure.getErrorMessage())
            self.crawler.stats.set_value("hiddenweb/failed", "seed_unreachable")  # exit 1
        else:
            self.logger.warning("Download failed: %s (%s)", request.url, failure.getErrorMessage())
        stats = self.crawler.stats
        stats.inc_value("hiddenweb/download_errors")
        stats.inc_value("hiddenweb/downloads")
        if not request.meta.get("hiddenweb_emitted"):  # else emitted before a kill (JOBDIR)
            yield failed_item(failure, stats.get_value("hiddenweb/downloads", 0))

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
        fallback = fallback_request(request)
        if fallback is not None:
            stats.inc_value("hiddenweb/browser/fallbacks")
            yield fallback

    # -- links -----------------------------------------------------------------------------
    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and parts.hostname == self.host

    def acts_on(self, kind: str, target: str, element: Selector, url: str) -> bool:
        """Whether the crawl would follow a link (``kind`` ``"link"``) or submit a form
        (``"form"``) that a render of the page at ``url`` shows: in scope, allowed by the
        safety policy (nothing counted: a question, not a refusal), a form with a control. The
        render gate counts only those as what a render added (lab knob
        ``browser_judge_acted``): a render that adds only a login link, or a filter form the
        policy refuses, adds nothing to the crawl."""
        if not self.in_scope(target):
            return False
        if kind == "link":
            label, attrs = anchor_markup(element.attrib)
            text = element.xpath("normalize-space(string())").get("")
            return self.follow_links and self.safety.link(target, f"{text} {label}",
                                                          attrs).allowed
        forms = extract_forms(Selector(text=f"<html><body>{element.get()}</body></html>"), url)
        return bool(forms) and submittable(forms[0]) and self.safety.form(forms[0]).allowed

    def link_allowed(self, url: str, text: str, markup: dict[str, tuple[str, dict]]) -> bool:
        """Whether the safety policy lets the crawl follow a link (``markup``: the page's
        :func:`~hiddenweb.safety.link_markup`); a refusal is counted."""
        label, attrs = markup.get(url, ("", {}))
        verdict = self.safety.link(url, f"{text} {label}", attrs)
        if not verdict.allowed:
            self.refuse("links", verdict.reason)
            self.logger.debug("Not following %s (%s: %s)", url, verdict.reason,
                              verdict.evidence)
        return verdict.allowed

    def refuse(self, what: str, reason: str | None) -> None:
        """Count a refusal of the safety policy: ``what`` forms, buttons, links or replays."""
        stats = self.crawler.stats
        stats.inc_value(f"hiddenweb/safety/refused/{reason}")
        stats.inc_value(f"hiddenweb/safety/{what}_refused")

    def link_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        """The page's anchor, area and frame links (source ``link``; ``navigation`` for a URL
        the browser saw the page go to), in scope and allowed by the safety policy."""
        contexts = link_contexts(response) if self.query else None
        markup = link_markup(response.selector, response.url)
        navigated = set(response.meta.get("hiddenweb_found") or ())
        for link in self.link_extractor.extract_links(response):
            if not self.in_scope(link.url):
                self.crawler.stats.inc_value("hiddenweb/links/offsite")
                continue
            if not self.link_allowed(link.url, link.text, markup):  # SAFETY: a link
                continue
            yield self.follow(
                response, link.url, link.text, "navigation" if link.url in navigated else "link",
                nofollow=link.nofollow,
                extra={"hiddenweb_label_context": context_for(contexts, link.url)}
                if contexts is not None else None)

    def named_urls(self, response: Response) -> list[Found]:
        """The URLs a reply names besides its links (:mod:`hiddenweb.urlsources`: headers,
        refresh, CSS, srcset, data attributes, scripts, comments, robots.txt, sitemaps, feeds,
        JSON); none with ``HIDDENWEB_URL_SOURCES`` off, links off or in a recrawl; the guessed
        ones not with ``HIDDENWEB_URL_GUESSES`` off (JSON values are not guessed)."""
        if not self.url_sources or not self.follow_links or self.recrawl or self.host is None:
            return []
        found = reply_urls(response, self.host, obey_robots=self.obey_robots)
        return found if self.url_guesses else [f for f in found if not f.guessed]

    def source_requests(self, response: Response, named: list[Found], linked: set[str]
                        ) -> Iterator[scrapy.Request]:
        """Requests of the URLs ``named`` (:meth:`named_urls`) but those ``linked``, each
        allowed by the safety policy; guessed ones and JSON values
        (:data:`~hiddenweb.urlsources.SERVED_LAST`) are filed as links served last, after the
        pages' links and forms, teaching nothing to the site's public links. Counted in
        ``hiddenweb/sources/<source>`` (each time a new page names one; the dupefilter drops
        those already asked)."""
        stats = self.crawler.stats
        for found in named:
            if found.url in linked:
                continue
            markup = {found.url: ("", dict(found.marks))} if found.marks else {}
            if not self.link_allowed(found.url, found.label, markup):  # SAFETY: a link
                continue
            stats.inc_value(f"hiddenweb/sources/{found.source}")
            yield self.follow(response, found.url, found.label, found.source,
                              nofollow=found.last, guess=found.last)

    def redirect_body_requests(self, response: Response, urls: list[str]
                               ) -> Iterator[scrapy.Request]:
        """Requests of the links a redirect's own HTML body shows (``response``: the ``3xx``
        reply; :mod:`hiddenweb.redirectbody` schedules them), source ``redirect-body``, each
        allowed by the safety policy; none when :meth:`named_urls` would name none."""
        if not self.url_sources or not self.follow_links or self.recrawl or self.host is None:
            return
        yield from self.source_requests(response, [Found(u, "redirect-body") for u in urls],
                                        set())

    def sibling_requests(self, response: Response, links: Iterable[str]
                         ) -> Iterator[scrapy.Request]:
        """Requests of the sibling views of the hash routes of the page read and of its
        ``links`` (:mod:`hiddenweb.routesiblings`, lab knob ``route_siblings``; none with
        ``HIDDENWEB_URL_GUESSES`` off): the page's views are proven when its render added
        something. Source ``sibling``, guessed links each allowed by the safety policy (in
        scope: each shares its document with an in-scope URL)."""
        if self.siblings is None:
            return
        siblings = self.siblings
        proven = bool(response.meta.get(RENDER_ADDED_META))
        given = (siblings.proven if proven else siblings.met)(response.url)
        # a proven view under another record: the scheduler serves its group first
        first = {SERVE_FIRST_META: True} if self.siblings_first else None
        if given:
            self.logger.debug("Sibling views of %s (%s): %s", response.url,
                              "proven" if proven else "met", given[:5])
        for url in chain(given, *(siblings.met(link) for link in links)):
            if not self.link_allowed(url, "", {}):  # SAFETY: a link
                continue
            self.crawler.stats.inc_value("hiddenweb/sources/sibling")
            yield self.follow(response, url, "", "sibling", nofollow=self.siblings_last,
                              guess=True, extra=first)

    def pattern_requests(self, response: Response, links: Iterable[str]
                         ) -> Iterator[scrapy.Request]:
        """Requests of the views the router patterns of the page's scripts name under the hash
        routes of the page read and of its ``links`` (:mod:`hiddenweb.routepatterns`, lab knob
        ``route_patterns``; none with ``HIDDENWEB_URL_GUESSES`` off). Source
        ``route-pattern``, guessed links each allowed by the safety policy."""
        if self.patterns is None:
            return
        patterns = self.patterns
        learned = response.meta.get("hiddenweb_route_patterns") or ()
        given = chain(patterns.learn(response.url, list(learned)) if learned else (),
                      patterns.met(response.url), *(patterns.met(link) for link in links))
        for url in given:
            if not self.link_allowed(url, "", {}):  # SAFETY: a link
                continue
            self.crawler.stats.inc_value("hiddenweb/sources/route_pattern")
            yield self.follow(response, url, "", "route-pattern", guess=True)

    def xhr_requests(self, response: Response) -> Iterator[scrapy.Request]:
        """The same-site GETs the page's scripts made when Chromium rendered it (``fetch``,
        XHR: ``meta["hiddenweb_xhr"]``, :mod:`hiddenweb.browser.guard`), as requests of their
        own (source ``xhr``), their replies read by type; not those of a form submitted in
        Chromium (its answer, already read). Other methods are only on the item."""
        meta = response.meta
        if meta.get("hiddenweb_browser_form"):
            return
        for method, url in meta.get("hiddenweb_xhr") or ():
            if method != "GET" or not self.in_scope(url) or url == response.url:
                continue
            if not self.link_allowed(url, "", {}):  # SAFETY: a link
                continue
            self.crawler.stats.inc_value("hiddenweb/sources/xhr")
            yield self.follow(response, url, "", "xhr")

    def follow(self, response: Response | None, url: str, label: str, source: str,
               nofollow: bool = False, extra: dict | None = None,
               guess: bool = False) -> scrapy.Request:
        """The request of a URL found on ``response`` (None: the seed's well-known URLs), a
        link for the scheduler (``hiddenweb_action``: its source; ``nofollow`` to be served
        last and ``guess`` to teach nothing to the site's public links, for a guessed
        source; a link served last on a form's answer is not one its form's blind values wait
        for, ``FormCrawler.answer_meta``), with ``hiddenweb_source``; never to Chromium when it
        names data
        (:func:`~hiddenweb.urlsources.names_data`: its reply is read by type)."""
        if (document := self.policy.anchor_of(url)) is not None:  # an anchor of a page read
            url = document
            self.crawler.stats.inc_value("hiddenweb/links/route_anchors")
        meta = response.meta if response is not None else {}
        form_only = bool(meta.get("hiddenweb_form_only"))
        answer = form_only and meta.get("hiddenweb_origin")  # links on a form's answer
        page = response.url if response is not None else self.seed
        meta_of = (lambda _, m: m) if names_data(url, source) else self.browser_meta
        if self.route_templates is not None and is_route(url) \
                and (template := template_key(url)) not in self.route_templates:
            self.route_templates.add(template)  # a view not asked for yet: served first
            self.crawler.stats.inc_value("hiddenweb/dla/route_templates_first")
            extra = {SERVE_NEXT_META: True, **(extra or {})}
        return scrapy.Request(
            url, callback=self.parse, errback=self.on_error,
            meta=meta_of(url, {
                "hiddenweb_reached_by": {"kind": "link", "form": None},
                "hiddenweb_form_only": form_only,
                "hiddenweb_source": source,
                **({"hiddenweb_origin": answer,
                    **self.forms.answer_meta(query_of(meta), reading=not nofollow)}
                   if answer else {}),
                "hiddenweb_action": {"kind": "link", "page": page,
                                     "label": label.strip()[:200], "form": None,
                                     **({"source": source} if source != "link" else {}),
                                     **({"hidden": True} if form_only else {}),
                                     **({"nofollow": True} if nofollow else {}),
                                     **({"guess": True} if guess else {})},
                **(extra or {}),
            }),
        )
