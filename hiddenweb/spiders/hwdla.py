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
and fields), ``hiddenweb_oracle_key`` (oracle mode).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from form2request import form2request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from twisted.python.failure import Failure

from hiddenweb import defaults
from hiddenweb.forms import SAFE_FORM_CLASSES, FormInfo, classify, extract_forms, plan_submissions
from hiddenweb.items import PageItem
from hiddenweb.lostsheep.labels import context_for, link_contexts
from hiddenweb.lvs import LVS
from hiddenweb.pagetext import fingerprint, visible_text


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
        spider.finder = None
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
        yield scrapy.Request(self.seed, callback=self.parse, errback=self.on_error, meta=meta)

    # -- pages -----------------------------------------------------------------------------
    def parse(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        self.crawler.stats.inc_value("hiddenweb/downloads")
        item = self.page_item(response)
        yield item
        self.crawler.stats.inc_value("hiddenweb/pages")
        if item["form_only"]:
            self.crawler.stats.inc_value("hiddenweb/pages_form_only")
        if not isinstance(response, TextResponse) or self.recrawl:
            return
        if self.oracle_path:
            yield from self.oracle_requests(response)
            return
        if self.follow_links:
            yield from self.link_requests(response)
        if self.submit_forms:
            yield from self.form_requests(response)

    def page_item(self, response: Response) -> PageItem:
        meta = response.meta
        request = response.request
        title = text_fp = None
        if isinstance(response, TextResponse):
            try:
                title = response.xpath("normalize-space(//title)").get() or None
                text_fp = fingerprint(visible_text(response.selector))
            except (ValueError, AttributeError):  # not markup: JSON, plain text
                text_fp = fingerprint(response.text)
        headers = response.headers
        return PageItem(
            url=request.url if request else response.url,
            final_url=response.url,
            method=request.method if request else "GET",
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
            content_type=_header(headers, b"Content-Type"),
            cache_control=_header(headers, b"Cache-Control"),
            expires=_header(headers, b"Expires"),
        )

    def on_error(self, failure: Failure) -> Iterator[PageItem]:
        request = failure.request
        if failure.check(IgnoreRequest):  # robots.txt, trap guard: counted where decided
            return
        if request.url == self.seed:
            self.logger.error("Seed unreachable: %s (%s)", request.url, failure.getErrorMessage())
        else:
            self.logger.warning("Download failed: %s (%s)", request.url, failure.getErrorMessage())
        self.crawler.stats.inc_value("hiddenweb/download_errors")
        self.crawler.stats.inc_value("hiddenweb/downloads")
        meta = request.meta
        yield PageItem(
            url=request.url, final_url=request.url, method=request.method, status=None,
            error=f"{failure.type.__name__}: {failure.getErrorMessage()}",
            depth=meta.get("depth", 0), referrer=_header(request.headers, b"Referer"),
            reached_by=meta.get("hiddenweb_reached_by", {"kind": "seed", "form": None}),
            form_only=bool(meta.get("hiddenweb_form_only")), title=None, fingerprint=None,
            fetch_seconds=None, fetched_at=round(time.time(), 3),
            downloads=self.crawler.stats.get_value("hiddenweb/downloads", 0), content_type=None,
            cache_control=None, expires=None,
        )

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
                meta={
                    "hiddenweb_reached_by": {"kind": "link", "form": None},
                    "hiddenweb_form_only": form_only,
                    "hiddenweb_action": {"kind": "link", "page": response.url,
                                         "label": link.text.strip()[:200], "form": None},
                    **({} if contexts is None else
                       {"hiddenweb_label_context": context_for(contexts, link.url)}),
                },
            )

    def form_requests(self, response: TextResponse) -> Iterator[scrapy.Request]:
        stats = self.crawler.stats
        for form in extract_forms(response.selector, response.url):
            form_class = classify(form)
            stats.inc_value(f"hiddenweb/forms/found/{form_class}")
            if form.signature in self.forms_seen:
                continue
            self.forms_seen.add(form.signature)
            if form_class not in self.submit_classes:
                stats.inc_value(f"hiddenweb/forms/skipped/{form_class}")
                self.logger.debug("Not submitting %s form %s on %s", form_class,
                                  form.signature, response.url)
                continue
            if not self.in_scope(form.action):
                stats.inc_value("hiddenweb/forms/skipped/offsite")
                continue
            plan = plan_submissions(form, self.lvs, self.max_submissions)
            if not plan.assignments:
                stats.inc_value("hiddenweb/forms/unfillable")
                self.logger.info("Form %s on %s: nothing to fill (no field matches the LVS%s)",
                                 form.signature, response.url,
                                 f"; required: {plan.unfillable}" if plan.unfillable else "")
                continue
            stats.inc_value("hiddenweb/forms/submitted_forms")
            for data in plan.assignments:
                request = self.form_request(response, form, form_class, data)
                if request is not None:
                    stats.inc_value("hiddenweb/forms/submissions")
                    yield request

    def form_request(self, response: TextResponse, form: FormInfo, form_class: str,
                     data: dict[str, str | None]) -> scrapy.Request | None:
        try:
            spec = form2request(form.selector, data)
        except ValueError as exc:  # a control form2request cannot build
            self.logger.warning("Cannot build a submission of %s: %s", form.signature, exc)
            return None
        fields = {k: v for k, v in data.items() if v is not None}
        form_meta = {"action": form.action, "method": form.method, "fields": fields,
                     "form_class": form_class, "signature": form.signature}
        return spec.to_scrapy(
            callback=self.parse, errback=self.on_error,
            meta={
                "hiddenweb_reached_by": {"kind": "form", "form": form_meta},
                "hiddenweb_form_only": True,
                "hiddenweb_action": {"kind": "form", "page": response.url, "label": "",
                                     "form": {"signature": form.signature, "fields": fields}},
            },
        )

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
