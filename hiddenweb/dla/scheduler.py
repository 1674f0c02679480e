"""DLA scheduler: pending requests leave in the order the learning automata prefer.

Activate with ``SCHEDULER = "hiddenweb.dla.scheduler.DLAScheduler"`` and the spider middleware
``hiddenweb.dla.middleware.DLAFeedbackMiddleware`` (it reports each response's outcome).

Model (paper ``seeds/000_0c3830255053559c.txt``, ALGORITHMS.md section 1):

* **automaton**: every page (``hiddenweb_action["page"]``) has an :class:`Automaton` over its
  actions, updated by the reward (eqs. 4-7) and penalty (eq. 2) rules of
  :mod:`hiddenweb.dla.automaton` when the response of one of its actions comes back
  (:mod:`hiddenweb.dla.feedback` decides which).
* **action**: an outgoing edge of a page, keyed by its primary kind (:mod:`hiddenweb.dla.kinds`):
  a form (washy edge) submitted with any of its value assignments, or the links of one URL
  template (boldface edges). Requests of one action are its repeated executions (different
  values / ids), so what the page's automaton learns from one is used for the next.
* **kind** (transfer, ``dla_transfer = True``): every kind also has a two-action
  automaton ("pursue" / "skip", same equations with ``r = 2``) shared by all pages; the feedback
  of an action updates its page's automaton and the automata of all its kinds.

Order. Requests wait in FIFO *buckets*; a heap over bucket groups picks the best group
(:mod:`hiddenweb.dla.heap`):

* transfer on: a bucket per kind, the group is the bucket, its score is the kind automaton's
  ``p(pursue)``. A request goes to its primary kind's bucket, or to the bucket of one of its
  other kinds (a form value, a label word) when that kind was rewarded and now scores higher;
* transfer off: a bucket per (page, action), grouped by page. Inside a page, buckets are ordered
  by the page automaton's ``q`` (an update never reorders the other actions, see automaton.py);
  the page's score is ``r * p`` of its best pending action (1 = uniform, comparable across pages).

A page rendered again in Chromium (meta ``hiddenweb_rerender``: its plain copy showed scripts
that build its links or forms) is the second half of a read already chosen, not a new action:
its group (its primary kind plus :data:`~hiddenweb.dla.kinds.RENDER`, scored as that kind)
is served before any other. Filed in its link's kind, it sank with every public link (its
plain copy, whose forms wait for the rendered one, was just penalised) and lost each tie to
the older templates: on Datasette the canned-query form's page waited behind 400 detail pages,
and whether it did was a race of the crawl's first second (docs/benchmarks.md).

Links their page marks ``rel="nofollow"`` (a wiki's edit, history and backlinks links, a
tracker's other formats; their own kind, :func:`~hiddenweb.dla.kinds.is_nofollow`) go last:
their groups are served, best first, only when no other group is pending (the heap adds
:data:`~hiddenweb.dla.heap.LAST` to their keys; ``dla_nofollow_last``). Demoted, not dropped:
learning orders them among themselves, but a reward (a new form on an edit page) never lifts
them above the content links, which the site's own markup says they are not.

Ties go to the group whose URL template has fewer query keys (a table's pages before its facet
values': ``GroupHeap._breadth``, ``dla_fewer_keys_first``), then to the oldest group; the group
of a link kind one of whose pages showed words no page showed (the ``fresh`` outcome) keeps
the age of its first group when it empties and is made again (``_keep_age``). A kind with no
automaton yet scores as its parent (:func:`~hiddenweb.dla.kinds.parent_kind`); the URL
template of a link on a public page scores at most as ``links:public`` until it is rewarded
(``paid`` in JOBDIR); ``src:harvest`` starts after one reward
(:data:`~hiddenweb.dla.kinds.PRIOR_REWARDS`). Why, and what it was measured to buy:
``docs/design-notes.md``.

Concurrency. Feedback comes back out of order; it carries the action in the request's meta, so
it updates the right automata whenever it arrives. The best pending request *waits*
(``next_request`` returns ``None``; the engine asks again as each answer is processed), with
``w = HIDDENWEB_DLA_WAIT``:

1. while a request in flight scores, now, more than ``1/w`` times it;
2. once the site has paid (the first reward), when it is *speculative* (it scores below ``w``
   times the best score served since then), while ``dla_explore_in_flight`` speculative
   requests are in flight;
3. when it is a link marked nofollow, while a request of another group is in flight (its
   answer may bring content links, which go first; with a thin frontier of content links the
   free slots would otherwise go to nofollow pages and the forms they show).

A lifted group (served first: the stale rule's, a request asking so on arrival) waits for
neither 1 nor 2 (lab knob ``dla_lifted_go``, off). A request asking to be served next (meta
``hiddenweb_serve_next``: the first route of a URL template, lab knob
``route_templates_first``, off) lifts its group for itself only, when it is the group's only
pending request. And a request naming a download slot of its own in its meta
(``download_slot``: Chromium's pages) stays pending while that slot holds as many requests as
its concurrency; the best group whose request can go is served instead (lab knob
``dla_hold_full_slot``, off; stat ``hiddenweb/dla/slot_full``, groups passed over, at most
:data:`MAX_HELD_GROUPS` a call). Scrapy's engine takes requests while the downloader has room
in all (``CONCURRENT_REQUESTS``, which the browser add-on raises by the browser's pages), and a
slot's queue is FIFO: on a single-page app, whose every view is a render, 16 renders waited
there in the order they were served, and a group lifted meanwhile (its sibling views) went
after them, 20-30 s later. Both are off: in same-run corpus pairs neither brought MLflow a unit
at 80 s, and Trac read to its time cap with fewer requests (``docs/design-notes.md``).

Nothing waits with nothing in flight, so the crawl never stalls. "In flight" is the engine's
downloader and scraper sets; scores in flight are compared rounded as the heap keys the pending
one (:data:`SCORE_DECIMALS`). The measurements: ``docs/design-notes.md``.

Cost. An update changes the score of O(kinds of the action) groups (on) or one page group
(off); each change pushes a new versioned heap entry and older entries are skipped when popped
(the heap is compacted when stale entries outnumber live ones). The groups that follow
``links:public`` are re-keyed at once when it rises and lazily (when they come up) when it
sinks. So ``enqueue`` and ``next_request`` cost O(log groups) and a feedback
O(kinds * log groups).

Budget (the paper's ``k_threshold``): after ``dla_max_steps`` dequeued requests the
scheduler reports nothing pending, and the crawl ends; pending requests stay saved in JOBDIR.

JOBDIR: a journal of every request accepted, done and emitted (:mod:`hiddenweb.dla.journal`),
from which a crawl killed at any instant resumes; the automata checkpointed in
``hiddenweb_dla.json``; the pending requests also in a disk queue per bucket, a cache
(:mod:`hiddenweb.dla.jobdir`, :mod:`hiddenweb.dla.queues`). A JOBDIR that cannot be resumed
closes the crawl at once: finish reason and ``hiddenweb/failed`` ``jobdir_inconsistent``.

Meta: reads ``hiddenweb_action`` (see :mod:`hiddenweb.dla.kinds`); writes ``hiddenweb_dla_kinds``
(the request's kinds, a list of str, primary first) so that feedback needs no second parse,
``hiddenweb_dla_group`` (the group it was served from: its kind, or its page without transfer),
and ``hiddenweb_dla_score`` (the score of the action's group when it was dequeued: ``p(pursue)``
of its kind, or ``r * p`` of its page's action without transfer; the item's ``action_score``).

Settings: ``HIDDENWEB_DLA_WAIT`` (docs/settings.md); lab knobs ``dla_max_steps``,
``dla_a``, ``dla_b``, ``dla_transfer``, ``dla_converge_p``, ``dla_label_words``,
``dla_explore_in_flight`` (``HIDDENWEB_LAB``, docs/design-notes.md). Also Scrapy's
``DUPEFILTER_CLASS``, ``JOBDIR`` and ``SCHEDULER_DEBUG``.
Stats: ``hiddenweb/dla/{enqueued,dequeued,rewards,penalties,neutral,actions,automata,kinds,
waits,unserializable,budget_exhausted,lifted,fresh,slot_full}`` (``waits``: times
``next_request`` held the best request back, and ``waits/{better,speculative,nofollow}`` by the
rule that held it, 1–3 of "Concurrency"; ``lifted``: groups served first at the stale rule's
asking, :meth:`DLAScheduler.serve_first`; ``lifted_on_arrival``: groups served first since a
request of theirs asked so, meta ``hiddenweb_serve_first``, the spider's sibling views of a
single-page app's records, :mod:`hiddenweb.routesiblings`; ``fresh``: link kinds whose groups
keep their age, ``_keep_age``; ``slot_full``: groups passed over while their download slot was
full); the spider counts ``hiddenweb/dla/previews`` (form answers penalised as previews of
queued pages, :mod:`hiddenweb.dla.previews`).
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object

from hiddenweb.dla.automaton import Automaton
from hiddenweb.dla.config import DLAConfig
from hiddenweb.dla.feedback import Outcome, feedback_signal
from hiddenweb.dla.heap import SCORE_DECIMALS, GroupHeap
from hiddenweb.dla.jobdir import holding_for_commit, item_emitted, settle, start_job, stop_job
from hiddenweb.dla.journal import Journal, fingerprint, remade_key
from hiddenweb.dla.kinds import (
    NOFOLLOW,
    PRIOR_REWARDS,
    PURSUE,
    RENDER,
    ROOT_KINDS,
    SERVE_FIRST_META,
    SERVE_NEXT_META,
    SKIP,
    action_of,
    is_nofollow,
    is_render,
    kinds,
    parent_kind,
)
from hiddenweb.dla.queues import DiskQueues, Group
from hiddenweb.signals import download_budget_exhausted, serve_first_wanted

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter

logger = logging.getLogger(__name__)

KINDS_META = "hiddenweb_dla_kinds"
#: set by the spider on a page's second read, in Chromium (hiddenweb.browser.requests)
RERENDER_META = "hiddenweb_rerender"
SCORE_META = "hiddenweb_dla_score"
GROUP_META = "hiddenweb_dla_group"
#: groups passed over in one ``next_request`` because their download slot is full, at most;
#: beyond, the next one is served into its slot's queue (``dla_hold_full_slot``)
MAX_HELD_GROUPS = 64


class DLAScheduler(GroupHeap):
    """Scrapy scheduler (``BaseScheduler`` contract) ordered by learning automata."""

    def __init__(self, crawler: Crawler, dupefilter: BaseDupeFilter, config: DLAConfig,
                 jobdir: str | None = None, logunser: bool = False) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.df = dupefilter
        self.config = config
        self.jobdir = jobdir
        self.disk = DiskQueues(crawler, jobdir, logunser) if jobdir else None
        self.pages: dict[str, Automaton] = {}
        self.kind_la: dict[str, Automaton] = {}
        # parent kind -> groups of child kinds with no automaton yet (they score as the parent)
        self.heirs: dict[str, set[str]] = {}
        # link kind -> its root (``links:public``): where a kind with no parent starts
        self.roots: dict[str, str] = {}
        # kinds rewarded at least once: a link kind not in it scores at most as its root
        self.paid: set[str] = set()
        self.groups: dict[str, Group] = {}
        self.lifted: set[str] = set()  # groups served first until emptied (serve_first)
        self.lifted_once: set[str] = set()  # ... for their next request only (SERVE_NEXT_META)
        #: download slots named by requests' meta (kept with ``dla_hold_full_slot`` on)
        self.named_slots: set[str] = set()
        self.heap: list[tuple[float, int, int, int, str]] = []
        self.pending = 0
        self.steps = 0
        # the best score served since the first reward: what the site showed an action is worth
        self.best_served = 0.0
        self.rewarded = False
        self.engine: Any = None
        self.next_seq = 0
        #: the seq of each group key's first group, and the link kinds whose groups keep it
        #: when made again (a page of theirs showed words no page showed: ``_keep_age``)
        self.first_seq: dict[str, int] = {}
        self.aged: set[str] = set()
        self.ended_versions: dict[str, int] = {}  # an emptied group's last version (heap.py)
        self._budget_logged = False
        self.journal: Journal | None = None  # with a JOBDIR (hiddenweb.dla.jobdir)
        self.ticks, self._timer, self.failed = 0, None, None
        #: when the parts' checkpoint fell due (None: not due; hiddenweb.dla.jobdir)
        self._commit_timer, self.commit_due, self.commit_cost = None, None, 0.0
        #: requests given back by the journal whose parent's answer will make them again
        self.remade: Counter[tuple] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        dupefilter_cls = load_object(crawler.settings["DUPEFILTER_CLASS"])
        scheduler = cls(
            crawler,
            build_from_crawler(dupefilter_cls, crawler),
            DLAConfig.from_settings(crawler.settings),
            jobdir=job_dir(crawler.settings),
            logunser=crawler.settings.getbool("SCHEDULER_DEBUG"),
        )
        crawler.signals.connect(scheduler.learn, signal=feedback_signal)
        crawler.signals.connect(scheduler.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(scheduler.serve_first, signal=serve_first_wanted)
        return scheduler

    # -- BaseScheduler contract ------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        try:  # the engine that opens the scheduler (none when a test drives it by hand)
            self.engine = self.crawler.engine
        except RuntimeError:
            self.engine = None
        if self.jobdir:
            start_job(self)
        return self.df.open()

    def close(self, reason: str) -> Any:
        stop_job(self, reason)
        return self.df.close(reason)

    def refuse(self) -> None:
        """``spider_opened`` when the JOBDIR cannot be resumed (:func:`~.jobdir.start_job`)."""
        raise CloseSpider(self.failed)

    def item_scraped(self, item: Any, response: Any, spider: Spider) -> None:
        item_emitted(self, item, response)

    def has_pending_requests(self) -> bool:
        return self.pending > 0 and not self._budget_exhausted()

    def __len__(self) -> int:
        return self.pending

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if request.dont_filter and self.remade:  # after a resume (hiddenweb.dla.journal)
            key = remade_key(request, fingerprint(self.df, self.crawler, request))
            if self.remade.get(key):
                self.remade[key] -= 1
                self.stats.inc_value("hiddenweb/jobdir/remade_dropped")
                return False
        if self.journal is not None:
            fp = None if request.dont_filter else fingerprint(self.df, self.crawler, request)
            if not self.journal.enqueued(request, fp):
                self.stats.inc_value("hiddenweb/jobdir/unjournaled")
        self._place(request)
        return True

    def _place(self, request: Request) -> None:
        """Queue an accepted request in its bucket (also a request the journal gives back)."""
        action = action_of(request)
        page = str(action.get("page") or "")
        ks = kinds(action, request.url, self.config.label_words, self.config.nofollow_last)
        request.meta[KINDS_META] = ks  # read back by learn(): no second parse of the URL
        la = self.pages.get(page)
        if la is None:
            la = self.pages[page] = Automaton(a=self.config.a, b=self.config.b,
                                              converge_p=self.config.converge_p)
            self.stats.inc_value("hiddenweb/dla/automata")
        if la.add_action(ks[0]):
            self.stats.inc_value("hiddenweb/dla/actions")
        if self.config.transfer:
            if ks[-1] in ROOT_KINDS:
                for kind in ks[:-1]:
                    if not kind.startswith(("word:", "hword:")):
                        self.roots.setdefault(kind, ks[-1])
            key = group = self._bucket_kind(ks)
            if request.meta.get(RERENDER_META):
                key = group = ks[0] + RENDER
        else:  # a page's nofollow links: a group of their own, served last
            group, key = page + (NOFOLLOW if is_nofollow(ks[0]) else ""), f"{page}\n{ks[0]}"
            if request.meta.get(RERENDER_META):
                group = page + RENDER
        self._push(request, key, group, page, ks[0])
        if self.config.hold_full_slot and (slot := request.meta.get("download_slot")):
            self.named_slots.add(slot)
        if request.meta.get(SERVE_FIRST_META) and self.config.transfer \
                and self._lift(self.groups[group]):
            self.stats.inc_value("hiddenweb/dla/lifted_on_arrival")
        elif request.meta.get(SERVE_NEXT_META) and self.config.transfer \
                and sum(map(len, self.groups[group].buckets.values())) == 1 \
                and self._lift(self.groups[group]):
            self.lifted_once.add(group)
            self.stats.inc_value("hiddenweb/dla/lifted_once")
        self.stats.inc_value("hiddenweb/dla/enqueued")

    def next_request(self) -> Request | None:
        if self._budget_exhausted():
            if not self._budget_logged:
                logger.info("DLA step budget reached (%(steps)d requests): stopping",
                            {"steps": self.steps}, extra={"spider": self.spider})
                self._budget_logged = True
                self.stats.set_value("hiddenweb/dla/budget_exhausted", True)
                self.crawler.signals.send_catch_log(download_budget_exhausted)
            return None
        settle(self)
        if self.journal is not None and holding_for_commit(self):
            return None
        held: list[tuple[float, int, int, int, str]] = []  # groups whose slot is full
        try:
            return self._serve(self._full_slots(), held)
        finally:
            for entry in held:
                heapq.heappush(self.heap, entry)

    def _serve(self, full: set[str], held: list[tuple[float, int, int, int, str]]
               ) -> Request | None:
        """The best pending request that may go now (``next_request``): a group whose next
        request names a download slot in ``full`` is passed over, its heap entry put in
        ``held`` (the caller pushes them back)."""
        while self.heap:
            entry = heapq.heappop(self.heap)
            heap_key, breadth, _, version, gkey = entry
            group = self.groups.get(gkey)
            if group is None or group.version != version:
                continue
            if self._follows_root(gkey):  # its entry may predate the root's last penalty
                if self._heap_key(group) > heap_key:
                    self._rekey(group)
                    continue
            score = round(self._last(gkey) - heap_key, SCORE_DECIMALS)
            reason = self._wait_reason(gkey, score) if self.config.wait else None
            if reason is not None:
                heapq.heappush(self.heap, (heap_key, breadth, group.seq, version, gkey))
                self.stats.inc_value("hiddenweb/dla/waits")
                self.stats.inc_value(f"hiddenweb/dla/waits/{reason}")
                return None
            if full and len(held) < MAX_HELD_GROUPS and self._slot_of(group) in full:
                held.append(entry)
                self.stats.inc_value("hiddenweb/dla/slot_full")
                continue
            request = self._pop_from(group)
            if request is None:
                continue
            if gkey in self.lifted_once:  # its one request served: back among the others
                self._lower(gkey)
            # the automata's score when the action was chosen (precision-recall, HWDLA fig. 4)
            request.meta[SCORE_META] = score
            request.meta[GROUP_META] = gkey
            if self.rewarded and score > self.best_served:
                self.best_served = score
            self.pending -= 1
            self.steps += 1
            self.stats.inc_value("hiddenweb/dla/dequeued")
            if self.journal is not None:
                self.journal.served(request)
            return request
        return None

    def _full_slots(self) -> set[str]:
        """The download slots named by requests' meta (``download_slot``: Chromium's pages,
        :mod:`hiddenweb.browser.requests`) that have as many requests in the downloader as the
        slot takes at once (its ``concurrency``, from ``DOWNLOAD_SLOTS``): a request for one of
        them would wait in the slot's FIFO queue, out of the scheduler's order, so it stays
        pending (lab knob ``dla_hold_full_slot``; stat ``hiddenweb/dla/slot_full``, groups
        passed over). Counted in the downloader's ``active`` set, which a request joins as the
        engine takes it: the slot's own ``active`` set is joined only once the downloader
        middlewares have run, after the engine has taken the next requests."""
        if not (self.config.hold_full_slot and self.named_slots) or self.engine is None:
            return set()
        downloader = self.engine.downloader
        taken = Counter(key for r in downloader.active
                        if (key := r.meta.get("download_slot")) in self.named_slots)
        return {key for key, n in taken.items() if n >= _concurrency(downloader, key)}

    def _slot_of(self, group: Group) -> str | None:
        """The download slot its next request names in its meta (None: its host's)."""
        request = self._peek(group)
        return request.meta.get("download_slot") if request is not None else None

    def serve_first(self, wanted: Callable[[str], bool], **kwargs: Any) -> int:
        """``serve_first_wanted`` (sent by the stale rule, :mod:`hiddenweb.stale`): the groups
        holding a pending request whose URL is ``wanted`` are served before any other but the
        re-renders, until they are emptied (their requests keep their order; groups of links
        marked nofollow stay last). A request in a disk queue is known by its bucket's first
        URL. Returns the number of groups lifted (stat ``hiddenweb/dla/lifted``)."""
        lifted = 0
        for group in list(self.groups.values()):
            once = group.key in self.lifted_once  # lifted for one request: now until emptied
            if (once or self._liftable(group)) and any(
                    bucket.url is not None and wanted(bucket.url)
                    or any(wanted(r.url) for r in bucket.mq or ())
                    for bucket in group.buckets.values()):
                if once:
                    self.lifted_once.discard(group.key)
                    lifted += 1
                else:
                    lifted += self._lift(group)
        if lifted:
            self.stats.inc_value("hiddenweb/dla/lifted", lifted)
        return lifted

    def _liftable(self, group: Group) -> bool:
        """Whether ``group`` can be lifted: not yet, not served last (links marked nofollow),
        not the re-renders (served first already)."""
        return not (group.key in self.lifted or is_nofollow(group.key) or is_render(group.key))

    def _lift(self, group: Group) -> bool:
        """Serve ``group`` before any other but the re-renders until it empties (``serve_first``,
        and a request with meta ``hiddenweb_serve_first`` on arrival); False if it cannot be."""
        if not self._liftable(group):
            return False
        self.lifted.add(group.key)
        self._rekey(group)
        return True

    def _lower(self, gkey: str) -> None:
        """End a lift for one request (``lifted_once``): the group, if it still has requests,
        is keyed again by its score."""
        self.lifted_once.discard(gkey)
        self.lifted.discard(gkey)
        if (group := self.groups.get(gkey)) is not None:
            self._rekey(group)

    # -- waiting for answers in flight ----------------------------------------------------
    def in_flight(self) -> list[Request]:
        """Requests this scheduler served whose answers are not processed yet: in the
        downloader or in the scraper (the engine's own sets, which Scrapy's telnet console
        shows as ``engine.downloader.active`` and ``engine.scraper.slot.active``)."""
        engine = self.engine
        if engine is None:
            return []
        active = set(getattr(engine.downloader, "active", ()))
        slot = getattr(engine.scraper, "slot", None)
        if slot is not None:
            active.update(slot.active)
        return [r for r in active if GROUP_META in r.meta]

    def _awaited(self) -> list[Request]:
        """The requests in flight whose answers a pending request may wait for: all of them,
        or, lab knob ``dla_wait_for_browser`` off, those not loading in Chromium."""
        if self.config.wait_for_browser:
            return self.in_flight()
        return [r for r in self.in_flight() if not r.meta.get("playwright")]

    def current_score(self, request: Request) -> float:
        """What the automata think *now* of a request they served: its group's score (its
        kind's ``p(pursue)``; without transfer, ``r * p`` of its action on its page)."""
        if self.config.transfer:
            return self.kind_score(request.meta[GROUP_META])
        la = self.pages.get(request.meta[GROUP_META].removesuffix(NOFOLLOW).removesuffix(RENDER))
        kind = (request.meta.get(KINDS_META) or [""])[0]
        return la.relative(kind) if la is not None and kind in la else 0.0

    def _wait_reason(self, gkey: str, score: float) -> str | None:
        """Why the best pending request (of group ``gkey``, scoring ``score``) waits, by the
        rules of "Concurrency": ``nofollow`` (3), ``better`` (1), ``speculative`` (2); None
        when it does not (stat ``hiddenweb/dla/waits/REASON``). A lifted group waits for
        none of 1 and 2 (lab knob ``dla_lifted_go``, off): a guess the crawl wants read now (a
        single-page app's sibling views) otherwise waited behind four speculative renders."""
        if self._after_others(gkey):
            return "nofollow"
        if self.config.lifted_go and gkey in self.lifted:
            return None  # served first means now (lab knob dla_lifted_go, off)
        return self._waits(score)

    def _after_others(self, gkey: str) -> bool:
        """Rule 3 of "Concurrency": a group served last (links marked nofollow) waits while a
        request of any other group is in flight, whose answer may bring requests that go first."""
        return is_nofollow(gkey) and any(
            not is_nofollow(r.meta[GROUP_META]) for r in self._awaited())

    def _waits(self, score: float) -> str | None:
        """Whether the best pending request, scoring ``score``, waits for the answers in flight
        (module docstring, "Concurrency"): (1) while one of them scores more than
        ``score / wait``; (2) when ``score`` is speculative (below ``wait`` times the best
        score served since the first reward), while ``explore_in_flight`` speculative ones
        are in flight. With nothing in flight nothing waits."""
        wait = self.config.wait
        speculative = wait * self.best_served
        cap = self.config.explore_in_flight if score < speculative else 0
        if score >= wait and not cap:
            return None  # (1) cannot hold: no score is above 1
        scores: dict[str, float] = {}  # requests of one group score alike: one look-up each
        low = 0
        for request in self._awaited():
            key = request.meta[GROUP_META]
            if not self.config.transfer:
                key = f"{key}\n{(request.meta.get(KINDS_META) or [''])[0]}"
            current = scores.get(key)
            if current is None:  # rounded as the heap keys ``score``: 0 is not below 1e-17
                current = scores[key] = round(self.current_score(request), SCORE_DECIMALS)
            if score < wait * current:
                return "better"
            low += current < speculative
        return "speculative" if low >= cap > 0 else None

    # -- learning --------------------------------------------------------------------------
    def learn(self, request_meta: dict[str, Any], url: str, outcome: Outcome | None) -> None:
        """Apply one feedback (connected to :data:`feedback_signal`; any arrival order)."""
        if outcome is None:
            self.stats.inc_value("hiddenweb/dla/neutral")
            return
        action = request_meta.get("hiddenweb_action") or {}
        page = str(action.get("page") or "")
        ks = request_meta.get(KINDS_META) or kinds(action, url, self.config.label_words,
                                                   self.config.nofollow_last)
        if outcome == "fresh":
            self._keep_age(ks[0])
            return
        if outcome == "reward":
            self.rewarded = True
        self.stats.inc_value("hiddenweb/dla/rewards" if outcome == "reward"
                             else "hiddenweb/dla/penalties")
        la = self.pages.get(page)
        if la is not None and ks[0] in la:
            (la.reward if outcome == "reward" else la.penalize)(ks[0])
            # without transfer a page has two groups: its links marked nofollow, the rest
            for gkey in () if self.config.transfer else (page, page + NOFOLLOW, page + RENDER):
                group = self.groups.get(gkey)
                if group is None:
                    continue
                bucket = group.buckets.get(f"{page}\n{ks[0]}")
                if group.epoch != la.epoch:  # the automaton folded: re-key all, O(r) per r steps
                    group.epoch = la.epoch
                    for b in group.buckets.values():
                        b.version += 1
                    group.heap = [(-la.order_key(b.action), b.seq, b.version, b.key)
                                  for b in group.buckets.values()]
                    heapq.heapify(group.heap)
                elif bucket is not None:
                    bucket.version += 1
                    heapq.heappush(group.heap, (-la.order_key(ks[0]), bucket.seq,
                                                bucket.version, bucket.key))
                self._rekey(group)
        if self.config.transfer:
            for kind in ks:
                kla = self._kind(kind)
                if outcome == "reward":
                    kla.reward(PURSUE)
                    self.paid.add(kind)
                else:
                    kla.penalize(PURSUE)
                if kind in self.groups:
                    self._rekey(self.groups[kind])
                heirs = self.heirs.get(kind)
                # groups still scored by (or capped at) this kind follow it: at once when it
                # rises; when a root sinks (every public page that shows no form), lazily, as
                # each comes up in next_request: O(1) per feedback, not O(templates)
                if heirs and (outcome == "reward" or kind not in ROOT_KINDS):
                    for child in [c for c in heirs if not self._follows(c, kind)]:
                        heirs.discard(child)
                    for child in heirs:
                        self._rekey(self.groups[child])

    def _keep_age(self, kind: str) -> None:
        """A public page of link kind ``kind`` showed words no page showed (the ``fresh``
        outcome, :mod:`hiddenweb.dla.feedback`): no automaton moves, but the kind's group
        keeps its age when it empties and is made again, so that it wins ties as the oldest
        group (it first held a request) rather than as a new one. Stat ``hiddenweb/dla/fresh``
        (kinds so kept; ``hiddenweb/dla/neutral`` counts the outcomes)."""
        self.stats.inc_value("hiddenweb/dla/neutral")
        if "?" in kind and not self.config.fresh_views:
            return  # another view of a page (a sort, a facet, a filter): not a page of content
        if kind not in self.aged and kind in self.first_seq:
            self.aged.add(kind)
            self.stats.inc_value("hiddenweb/dla/fresh")

    def _follows_root(self, kind: str) -> bool:
        """Whether ``kind``'s group follows its root (no roots without transfer)."""
        root = self.roots.get(kind)
        return root is not None and self._follows(kind, root)

    def _follows(self, kind: str, ancestor: str) -> bool:
        """Whether ``kind``'s pending group still moves with ``ancestor``: a kind with no
        automaton follows its parent and its root; a link kind never rewarded stays capped at
        its root (:meth:`kind_score`)."""
        if kind not in self.groups:
            return False
        if kind not in self.kind_la:
            return True
        return ancestor in ROOT_KINDS and kind not in self.paid

    def kind_score(self, kind: str) -> float:
        """``p(pursue)`` of a kind; a kind not seen yet: its parent's, else the uniform 1/2
        (after its :data:`~hiddenweb.dla.kinds.PRIOR_REWARDS`, if any). A link kind with a root
        that was never rewarded scores at most as its root: what it taught alone is no better
        than what all the site's public links taught."""
        kla = self.kind_la.get(kind)
        if kla is None:
            if kind not in PRIOR_REWARDS:
                return self._start_score(kind)
            kla = self._kind(kind)
        p = kla.prob(PURSUE)
        root = self.roots.get(kind)
        if root is not None and kind not in self.paid and root in self.kind_la:
            return min(p, self.kind_la[root].prob(PURSUE))
        return p

    def _start_score(self, kind: str) -> float:
        """Where a kind with no automaton starts: the lower of its parent's and its root's
        ``p(pursue)`` (those that exist), else 1/2."""
        known = [self.kind_la[k].prob(PURSUE) for k in (parent_kind(kind), self.roots.get(kind))
                 if k and k in self.kind_la]
        return min(known) if known else 0.5

    # -- internals (buckets and heaps: GroupHeap, hiddenweb.dla.heap) ----------------------
    def _budget_exhausted(self) -> bool:
        return 0 < self.config.max_steps <= self.steps

    def _kind(self, kind: str) -> Automaton:
        kla = self.kind_la.get(kind)
        if kla is None:
            start = self._start_score(kind)  # its parent's, if the parent is known
            kla = self.kind_la[kind] = Automaton(a=self.config.a, b=self.config.b)
            kla.add_action(PURSUE)
            kla.add_action(SKIP)
            if start != 0.5:
                kla.load_state({"keys": [PURSUE, SKIP], "p": [start, 1.0 - start]})
            for _ in range(PRIOR_REWARDS.get(kind, 0)):
                kla.reward(PURSUE)
            self.stats.inc_value("hiddenweb/dla/kinds")
        return kla

    def _bucket_kind(self, ks: list[str]) -> str:
        """The primary kind, unless another kind of the action was rewarded and scores higher
        (a nofollow link's always: it is served last, whatever its other kinds taught)."""
        best, best_score = ks[0], max(self.kind_score(ks[0]), 0.5)
        if is_nofollow(best):
            return best
        for kind in ks[1:]:
            if kind in ROOT_KINDS:
                continue
            score = self.kind_score(kind)
            if score > best_score:
                best, best_score = kind, score
        return best

    def _add_heir(self, gkey: str) -> None:
        """Register the group of kind ``gkey`` with the ancestors it follows (:meth:`_follows`)."""
        for ancestor in (parent_kind(gkey), self.roots.get(gkey)):
            if ancestor and self._follows(gkey, ancestor):
                self.heirs.setdefault(ancestor, set()).add(gkey)


def _concurrency(downloader: Any, key: str) -> int:
    """How many requests the downloader's slot ``key`` takes at once (``DOWNLOAD_SLOTS``, else
    ``CONCURRENT_REQUESTS_PER_DOMAIN``), read from the slot once it exists."""
    slot = downloader.slots.get(key)
    if slot is not None:
        return slot.concurrency
    return downloader.per_slot_settings.get(key, {}).get("concurrency",
                                                         downloader.domain_concurrency)
