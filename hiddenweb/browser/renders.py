"""Which of the pages plain HTTP read are rendered again in Chromium: :class:`RenderGate`.

A page goes to the browser when its markup says scripts may build links or forms
(:func:`~hiddenweb.browser.detect.needs_browser`); many sites load scripts on every page that
build nothing a crawler can follow (a date picker, a help widget), and each render costs a
browser page load. The gate learns, per URL template (:class:`~hiddenweb.browser.detect.
BrowserPolicy`), whether renders add anything to the plain copy (:meth:`RenderGate.judged`:
a link, frame or form the plain copy lacks, a URL the page went to, a script GET not seen
before; with the lab knob ``browser_judge_acted``, on, only links and forms the crawl would
follow or submit count, in scope and allowed by the safety policy, the spider's ``acts_on``:
Trac's ticket query page renders a filter form the policy refuses, and every render of it
was useful; with the lab knob ``browser_judge_views``, on, links to other views of the page
itself, its own path with another query, do not count when its plain copy links such views
already: a table whose column menus, built by script, add sort, facet and hide-column links
beside the sort links of its plain headers, :func:`~hiddenweb.browser.detect.is_view_of`; with
the lab knob ``browser_judge_known``, on, a render whose additions an earlier render of any
page already added is not useful (:meth:`~hiddenweb.browser.detect.BrowserPolicy.
new_additions`, stat ``renders_known``): a form whose answers post back to
its page, each answer's select handler building the same frame, was rendered answer after
answer, every render "useful" by the frame its plain copy lacked), and
stops rendering a template whose renders add nothing (a few still are: the 10th, 20th, 40th, …
page of the template; :class:`~hiddenweb.browser.detect.BrowserPolicy`).

Until a template's first ``min_seen`` renders are judged, at most ``min_seen`` of its pages are
being rendered; its other pages are *held* (their re-render requests and plain copies kept, at
most :data:`MAX_HELD` per template, beyond which they are rendered) and, once the template is
judged, rendered (useful) or dropped (idle: their forms are then read from the plain copy);
with the lab knob ``browser_earned_renders`` (on), a useful verdict lets out only as many at
once as the template earned (``min_seen``, or one per render of it that added something), the
others held for the verdicts that follow (stats ``kept_unearned``, the held pages a verdict
kept, and ``held_unearned``, a page met while the renders it earned are out: a verdict of 1
useful render in 2 is a guess, and let out a tracker's every message page at once); while it
holds pages, a page of it sent straight to Chromium is read over plain HTTP as it would start
and held behind them, the first of them rendered in its place (stat ``direct_unearned``,
:meth:`RenderGate._behind_held`). A
render that fails counts as judged useful (the page keeps its chance); when the crawl is idle
every held page is rendered (``spider_idle``), so nothing waits for a verdict that never comes.
Where the same scripts (:func:`~hiddenweb.browser.detect.script_signature`) rendered idle on
other templates, one render of a new template is made before its verdict, not ``min_seen``
(:meth:`~hiddenweb.browser.detect.BrowserPolicy.scripts_idle`). And once the renders sent of
pages running one signature are enough to judge it (``2 * min_seen`` over ``min_templates``
templates, judged or in flight) and it is not judged yet, the page of a template with no render
of its own waits for that verdict (held; stat ``held_for_scripts``) and is then offered again:
a site whose every page is a template of its own (a table's drop, export, import … pages, each
one page) otherwise rendered each of them that it met before the first verdict.
The forms of a page not rendered are read from its plain copy at once (the spider). With a
``JOBDIR`` nothing is held (a held request is in no queue, and a crawl killed then would lose
it).

A page of a template whose renders were useful goes straight to Chromium
(:meth:`~hiddenweb.browser.detect.BrowserPolicy.direct`): it has no plain copy, and is judged
against the HTML document Chromium received for it, which is what plain HTTP reads
(:meth:`RenderGate.judged_direct`; the guard keeps that document), and counted with the
re-renders. With the lab knob ``browser_judge_direct`` (on) its verdict also counts in the
policy, so a template whose renders stop adding anything stops going straight to the browser:
in one corpus run, off / on, Datasette's browser pages 109 → 67, Trac's 132 → 72, every other
site's the same within 8, and no unit lost (``docs/benchmarks.md``).

A decision taken when a page is read can be stale by the time its browser request starts: a
template's first renders added links, so its pages met next were queued for Chromium, and the
renders that came back next added nothing. So the download handler asks again as each browser
request starts, once it has a page (:meth:`RenderGate.at_dispatch`): a queued re-render of a
template now judged idle is withdrawn (its forms read from the plain copy it carries), and a
page sent straight to Chromium by a template that no longer goes there is read over plain HTTP
(lab knob ``browser_withdraw``, on; stats ``renders_withdrawn``, ``direct_withdrawn``). In one
Datasette crawl 81 of the 92 renders of its main table's pages added nothing, most of them
started after the template was judged idle.

Lab knob ``browser_render_gate`` (on); off, every page whose markup asks is rendered. Lab knob
``render_trace``: a JSON-lines file that gets one line per re-render judged (``url``,
``useful``, ``failed``), for the benchmark that scores the decision against a truth
(``hiddenweb bench coverage --browser on``: ``render_precision``, ``render_recall``).

Stats (``hiddenweb/browser/``): ``renders_useful``, ``renders_idle``, ``renders_known`` (of the
idle, those whose additions earlier renders had made), ``direct_judged``, ``held``,
``held_for_scripts``, ``not_rendered`` (pages of an idle template not rendered: withdrawn
re-renders too, and pages read over plain HTTP instead of straight in Chromium, once offered),
``renders_withdrawn``, ``withdrawn_by_scripts`` (of those, judged by their scripts as they
started), ``direct_withdrawn``, ``direct_unearned``.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from parsel import Selector
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import HtmlResponse
from scrapy.utils.job import job_dir

from hiddenweb.browser.detect import (
    VIEWS_ITEM,
    BrowserPolicy,
    is_view_of,
    offer_items,
    offer_key,
    page_offer,
    script_signature,
)
from hiddenweb.browser.requests import DIRECT_META, DOCUMENT_META, browser_free
from hiddenweb.browser.shells import RouteShells
from hiddenweb.pagetext import RENDER_ADDED_META, is_markup, template_key
from hiddenweb.routes import is_route

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy.crawler import Crawler
    from scrapy.http import Response, TextResponse

logger = logging.getLogger(__name__)

OFFER_META = "hiddenweb_plain_offer"
#: meta of a re-render that its plain copy, read when the render is withdrawn, does not keep
#: (besides its browser meta, :func:`~hiddenweb.browser.requests.browser_free`)
WITHDRAWN_KEYS = (OFFER_META, "hiddenweb_rerender", "hiddenweb_body", "hiddenweb_body_encoding",
                  "hiddenweb_body_headers")
MAX_HELD = 500  # held re-renders of one template; beyond, rendered without waiting


def _form_answer(meta: dict) -> bool:
    """Whether a request's meta is a form submission's (its answer is the form's to read)."""
    return (meta.get("hiddenweb_reached_by") or {}).get("kind") == "form"


class RenderGate:
    _VIEWS = offer_key(VIEWS_ITEM)

    def __init__(self, crawler: Crawler, policy: BrowserPolicy,
                 in_scope: Callable[[str], bool], enabled: bool = True,
                 dropped: Callable[[TextResponse], Iterable[Request]] | None = None,
                 trace: str | None = None, learn_direct: bool = False,
                 withdraw: bool = False,
                 acts_on: Callable[[str, str, Selector, str], bool] | None = None,
                 judge_views: bool = False, redo_scripts: bool = False,
                 judge_known: bool = False, earned: bool = False,
                 route_shells: bool = False) -> None:
        self.crawler, self.policy, self.in_scope = crawler, policy, in_scope
        self.earned = earned  # lab knob browser_earned_renders (offer, _settle)
        #: lab knob browser_route_shells (judged_direct, at_dispatch)
        self.shells = RouteShells() if route_shells else None
        self.judge_views = judge_views  # lab knob browser_judge_views (judged)
        self.judge_known = judge_known  # lab knob browser_judge_known (judged)
        #: what a render's additions are judged by (page_offer): those the crawl acts on
        self.acts_on = acts_on
        self.withdraw = withdraw  # lab knob browser_withdraw (at_dispatch)
        self.redo_scripts = redo_scripts  # lab knob browser_withdraw_by_scripts (at_dispatch)
        self.learn_direct = learn_direct  # lab knob browser_judge_direct (judged_direct)
        self.trace = trace  # the lab knob render_trace (module docstring)
        self.enabled = enabled  # off: every page that asks is rendered (renders still judged)
        self.dropped = dropped  # what to send of a held page's plain copy when it is dropped
        self.pending: dict[str, int] = defaultdict(int)  # renders issued, not judged yet
        self.held: dict[str, list[tuple[Request, TextResponse]]] = defaultdict(list)
        self.hold = not job_dir(crawler.settings)  # a held request is in no queue
        #: per script signature, its renders issued and not judged yet, and the templates any
        #: of its renders was issued for; the signature each template's renders were issued
        #: with; templates held until their signature is judged
        self.sig_pending: dict[str, int] = defaultdict(int)
        self.sig_issued_templates: dict[str, set[str]] = defaultdict(set)
        self.issued_sig: dict[str, str] = {}
        self.on_trial: dict[str, dict[str, None]] = defaultdict(dict)  # in order met
        crawler.signals.connect(self.release_all, signal=signals.spider_idle)

    def offer(self, response: TextResponse, request: Request) -> Request | str:
        """``request`` (the re-render of ``response``) to send now; or ``"held"`` until its
        template is judged (its forms then come from the render, or from ``response`` through
        ``dropped``), or ``"skip"``: not rendered (an idle template)."""
        url = response.url
        sig = script_signature(response.selector, url)
        self.policy.note(url, sig)
        if self.enabled and not self.policy.worth_rendering(url):
            self.crawler.stats.inc_value("hiddenweb/browser/not_rendered")
            return "skip"
        request.meta[OFFER_META] = page_offer(response.selector, url)
        key = template_key(url)
        # renders in flight before a verdict: one where these scripts were idle elsewhere
        first = 1 if self.policy.scripts_idle(url) else self.policy.min_seen
        verdict = self.policy.verdict(url)
        if self.enabled and self.hold and verdict == "useful" and self.earned \
                and len(self.held[key]) < MAX_HELD and self.pending[key] >= self._earned(key):
            self.held[key].append((request, response))  # its renders out are all it earned
            self.crawler.stats.inc_value("hiddenweb/browser/held_unearned")
            return "held"
        if self.enabled and self.hold and verdict is None \
                and len(self.held[key]) < MAX_HELD:
            if self.pending[key] >= first:
                self.held[key].append((request, response))
                self.crawler.stats.inc_value("hiddenweb/browser/held")
                return "held"
            if not self.pending[key] and not self.policy.renders.get(key) \
                    and self._on_trial(sig):
                self.held[key].append((request, response))
                self.on_trial[sig][key] = None
                self.crawler.stats.inc_value("hiddenweb/browser/held_for_scripts")
                return "held"
        self._issue(key, sig)
        return request

    def _issue(self, key: str, sig: str | None = None) -> None:
        """A render of a page of template ``key`` (running ``sig``) is sent."""
        self.pending[key] += 1
        sig = self.issued_sig.setdefault(key, sig or self.policy.signature.get(key, ""))
        self.sig_issued_templates[sig].add(key)
        self.sig_pending[sig] += 1

    def _on_trial(self, sig: str) -> bool:
        """Whether the renders of pages running ``sig``, judged and in flight, are enough for
        the signature's verdict (:meth:`~hiddenweb.browser.detect.BrowserPolicy.scripts_idle`:
        ``2 * min_seen`` renders over ``min_templates`` templates) and it has none yet: a new
        template's page running it then waits for that verdict, not a render of its own."""
        policy = self.policy
        renders = policy.sig_renders.get(sig, 0)
        templates = policy.sig_templates.get(sig, set()) | self.sig_issued_templates[sig]
        if renders + self.sig_pending[sig] < 2 * policy.min_seen \
                or len(templates) < policy.min_templates:
            return False
        if renders < 2 * policy.min_seen or len(policy.sig_templates.get(sig, ())) \
                < policy.min_templates:
            return True  # judged when the renders in flight come back
        return False  # judged: idle (new templates go by it) or not (rendered as any)

    def judged(self, response: Response, learn: bool = True) -> None:
        """A re-render came back: did it add anything to follow? Release or drop the held
        pages of its template once it is judged. One that did (and ``learn``) is marked
        (:data:`~hiddenweb.pagetext.RENDER_ADDED_META`): the stale rule counts it fresh.
        ``learn`` False: counted (stats, trace) and nothing else, the policy's records left as
        they were."""
        meta = response.meta
        plain = meta.get(OFFER_META)
        if plain is None:
            return
        useful = True
        if is_markup(response):
            gets = [url for method, url in meta.get("hiddenweb_xhr") or ()
                    if method == "GET" and self.in_scope(url)]
            new_gets = self.policy.new_script_requests(gets) if learn \
                else any(url not in self.policy.script_requests for url in gets)
            added = {key: i for i in offer_items(response.selector, response.url, self.acts_on)
                     if (key := offer_key(i)) not in plain}
            if self.judge_views and self._VIEWS in plain:  # more views of a page with views
                added = {k: i for k, i in added.items() if not is_view_of(i, response.url)}
            if self.judge_known and added \
                    and not self.policy.new_additions(added.keys(), learn):
                self.crawler.stats.inc_value("hiddenweb/browser/renders_known")
                added = {}  # only what an earlier render added
            useful = new_gets or bool(added)
            if useful and learn:  # the stale rule's reading (hiddenweb.stale); not learning,
                meta[RENDER_ADDED_META] = True  # the same addition would be "new" every time
            if added and logger.isEnabledFor(logging.DEBUG):
                logger.debug("Render of %s added %s", response.url, sorted(added.values())[:3])
        self.crawler.stats.inc_value(f"hiddenweb/browser/renders_{'useful' if useful else 'idle'}")
        self._trace(response.url, useful, False)
        if learn:
            self._settle(response.url, useful)

    def judged_direct(self, response: Response) -> None:
        """A page sent straight to Chromium (its template's renders were useful,
        :meth:`~hiddenweb.browser.detect.BrowserPolicy.direct`): judged as a re-render is,
        against the HTML document Chromium received for it (meta ``hiddenweb_document``, the
        guard's), which is what plain HTTP reads, and counted in the stats and the trace. With
        the lab knob ``browser_judge_direct`` its verdict also counts as a re-render's, so a
        template whose renders stop adding anything stops going straight to the browser.
        Nothing without that document (a form submitted by page actions, a download, a
        non-HTML reply)."""
        document = response.meta.pop(DOCUMENT_META, None)
        if document is None or not is_markup(response):
            return
        if self.shells is not None:
            self.shells.note(response.url, document)
        text = document.decode(getattr(response, "encoding", None) or "utf-8", "replace")
        response.meta[OFFER_META] = page_offer(Selector(text=text), response.url)
        self.crawler.stats.inc_value("hiddenweb/browser/direct_judged")
        self.judged(response, learn=self.learn_direct)

    def failed(self, request: Request) -> None:
        """A re-render that failed: judged useful (its page keeps its chance)."""
        if OFFER_META in request.meta:
            self._trace(request.url, True, True)
            self._settle(request.url, True)

    def at_dispatch(self, request: Request) -> str:
        """The decision made again as a browser request starts (the download handler calls
        this, :class:`~hiddenweb.browser.handler.BrowserHandler`): ``"render"``; or
        ``"withdraw"``: a re-render whose template was judged idle since it was queued, and
        not one of the few pages of an idle template still looked at
        (:meth:`~hiddenweb.browser.detect.BrowserPolicy.worth_rendering`, as if the page were
        offered now), is not rendered: its forms are read from the plain copy it carries
        (``hiddenweb_body``), as a held page's are when dropped (one without that copy is
        rendered; stat ``…/renders_withdrawn``); or ``"plain"``: a page sent straight to
        Chromium by its template (meta ``hiddenweb_direct``) whose template no longer goes
        there is read over plain HTTP instead, its browser meta removed (the spider then offers
        it as any plain page; stat ``…/direct_withdrawn``); a hash route of a document whose
        routes render idle is withdrawn too, with no plain read (its plain copy is the app's
        shell: :meth:`~hiddenweb.browser.detect.BrowserPolicy.worth_routing`, stat
        ``…/routes_withdrawn``); and a hash route whose page was rendered under another query
        of the same app shell (:class:`~hiddenweb.browser.shells.RouteShells`, lab knob
        ``browser_route_shells``; ``…/routes_same_shell``). Lab knob ``browser_withdraw``.
        With the lab knob ``browser_withdraw_by_scripts`` (on), a re-render of a template with
        no render judged, queued before its scripts were judged idle on other templates, is
        judged by them now (:meth:`~hiddenweb.browser.detect.BrowserPolicy.note`), as a
        template met after that verdict is: withdrawn, but for the few such templates looked
        at (Trac's wiki pages: each page a template of its own, all on one bundle)."""
        meta = request.meta
        if not self.enabled or not self.withdraw:
            return "render"
        if meta.get(DIRECT_META):
            if self.shells is not None and not _form_answer(meta) \
                    and not self.shells.claim(request.url):
                self.crawler.stats.inc_value("hiddenweb/browser/routes_same_shell")
                return "withdraw"  # read as this route of the shell under another query
            if self.policy.anchor_of(request.url) is not None:
                self.crawler.stats.inc_value("hiddenweb/browser/routes_of_pages")
                return "withdraw"  # an anchor of a page read over plain HTTP since it was met
            if not self.policy.worth_routing(request.url):  # a hash route of idle routes
                self.crawler.stats.inc_value("hiddenweb/browser/routes_withdrawn")
                return "withdraw"
            if not self.policy.direct(request.url):
                stat = "direct_withdrawn"
            elif self._behind_held(request):  # read plain and offered: held behind them
                stat = "direct_unearned"
            else:
                return "render"
            for key in meta.keys() - browser_free(meta).keys():
                del meta[key]
            self.crawler.stats.inc_value(f"hiddenweb/browser/{stat}")
            return "plain"
        body = meta.get("hiddenweb_body")
        if OFFER_META not in meta or body is None:
            return "render"
        key = template_key(request.url)
        by_scripts = key in self.policy.by_scripts
        if self.redo_scripts and (sig := self.issued_sig.get(key)) is not None:
            self.policy.note(request.url, sig)  # met before its scripts were judged idle
        if self.policy.worth_rendering(request.url):
            return "render"  # (worth rendering: not idle, or one of the idle pages looked at)
        self._render_gone(key)
        self.crawler.stats.inc_value("hiddenweb/browser/renders_withdrawn")
        if not by_scripts and key in self.policy.by_scripts:
            self.crawler.stats.inc_value("hiddenweb/browser/withdrawn_by_scripts")
        self.crawler.stats.inc_value("hiddenweb/browser/not_rendered")  # as a dropped page is
        plain_meta = {k: v for k, v in browser_free(meta).items() if k not in WITHDRAWN_KEYS}
        plain = HtmlResponse(request.url, body=body,
                             encoding=meta.get("hiddenweb_body_encoding") or "utf-8",
                             request=request.replace(meta=plain_meta))
        for follow in self.dropped(plain) if self.dropped else ():
            self.crawler.engine.crawl(follow)
        return "withdraw"

    def _trace(self, url: str, useful: bool, failed: bool) -> None:
        if self.trace:
            with open(self.trace, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"url": url, "useful": useful, "failed": failed}) + "\n")

    def _render_gone(self, key: str) -> str | None:
        """A render issued for template ``key`` is no longer out (judged, failed or withdrawn):
        the counts of renders in flight, its template's and its signature's (returned)."""
        self.pending[key] = max(0, self.pending[key] - 1)
        sig = self.issued_sig.get(key)
        if sig is not None:
            self.sig_pending[sig] = max(0, self.sig_pending[sig] - 1)
        return sig

    def _settle(self, url: str, useful: bool) -> None:
        key = template_key(url)
        sig = self._render_gone(key)
        self.policy.rendered(url, useful)
        if sig is not None and self.on_trial.get(sig) and not self._on_trial(sig):
            self._release_trial(sig)
        verdict = self.policy.verdict(url)
        logger.debug("Render of %s %s: template %s, %d renders, verdict %s", url,
                     "added something" if useful else "added nothing", key,
                     self.policy.renders.get(key, 0), verdict)
        if verdict is None or not self.held.get(key):
            return
        held = self.held.pop(key)
        if verdict == "idle":
            self.crawler.stats.inc_value("hiddenweb/browser/not_rendered", len(held))
            logger.info("Not rendering %d pages of %s: its renders added nothing", len(held),
                        key)
            for _, plain in held:  # their forms, from the plain copy
                for request in self.dropped(plain) if self.dropped else ():
                    self.crawler.engine.crawl(request)
            return
        if self.earned:  # as many as it earned, the rest held for the next verdicts
            room = max(0, self._earned(key) - self.pending[key])
            held, self.held[key] = held[:room], held[room:]
            if self.held[key]:
                self.crawler.stats.inc_value("hiddenweb/browser/kept_unearned",
                                             len(self.held[key]))
        for request, _ in held:
            self._issue(key)
            self.crawler.engine.crawl(request)

    def _behind_held(self, request: Request) -> bool:
        """Whether a page sent straight to Chromium (``request``) by a template judged useful
        should wait behind the template's pages held for what its renders earned (lab knob
        ``browser_earned_renders``): it is then read over plain HTTP and offered as they were
        (held behind them, stat ``…/direct_unearned``), and the first of them is rendered in
        its place. Without this a held page, met first, waited while the pages met after it
        went straight to Chromium, and was dropped unread when their renders turned the
        template idle. A hash route (its plain copy is the app's shell) and a form's answer
        always go."""
        if not (self.earned and self.hold) or is_route(request.url) \
                or _form_answer(request.meta):
            return False
        key = template_key(request.url)
        if not self.held.get(key) or self.policy.verdict(request.url) != "useful":
            return False
        first, _ = self.held[key].pop(0)  # met first, rendered first
        self._issue(key)
        self.crawler.engine.crawl(first)
        return True

    def _earned(self, key: str) -> int:
        """How many renders of template ``key`` a useful verdict lets out at once (lab knob
        ``browser_earned_renders``): ``min_seen``, or one per render of it that added
        something, if more. A verdict made on ``min_seen`` renders, one of them useful, is a
        guess: its next renders confirm it or turn it idle before the template's other pages
        are all in Chromium."""
        return max(self.policy.min_seen, self.policy.useful.get(key, 0))

    def _release_trial(self, sig: str) -> None:
        """The signature ``sig`` was judged: the pages held for it are offered again (idle
        scripts: most new templates are then not rendered, :meth:`~hiddenweb.browser.detect.
        BrowserPolicy.note`)."""
        for key in self.on_trial.pop(sig, ()):
            for request, response in self.held.pop(key, ()):
                verdict = self.offer(response, request)
                if isinstance(verdict, Request):
                    self.crawler.engine.crawl(verdict)
                elif verdict == "skip" and self.dropped:
                    for dropped in self.dropped(response):
                        self.crawler.engine.crawl(dropped)

    def release_all(self) -> None:
        """``spider_idle``: every held page is rendered (nothing waits for a verdict)."""
        if not any(self.held.values()):
            return
        held, self.held = self.held, defaultdict(list)
        self.on_trial.clear()
        for key, pages in held.items():
            for request, _ in pages:
                self._issue(key)
                self.crawler.engine.crawl(request)
        raise DontCloseSpider
