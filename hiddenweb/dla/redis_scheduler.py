"""The DLA scheduler in shared mode: N workers, one frontier and one set of kind automata in Redis.

Set by :class:`hiddenweb.Addon` when ``HIDDENWEB_REDIS_URL`` is set (docs/scaling.md). The order
is :class:`~hiddenweb.dla.scheduler.DLAScheduler`'s with transfer on (a bucket per kind, its kind
automaton's ``p(pursue)``, the same waiting rules), but the buckets, the kind automata and the
leases are in Redis (:mod:`hiddenweb.dla.redis_frontier`): every worker serves the best request
of the whole crawl, and every feedback teaches all workers at once.

* **Owners.** A request whose answer only this worker's memory can read — a form's submission
  (meta ``hiddenweb_explore``: its explorer is here) or an answer the form's endpoint waits for
  (``hiddenweb_reading``) — is marked as this worker's (meta ``hiddenweb_owner``) and waits in
  the shared frontier like any other: whoever downloads it hands the response to its owner
  (:mod:`hiddenweb.dla.relay`), through the owner's own lane (:meth:`relay`). A worker serves
  the better of its lane and the shared one.
* **Leases.** A request served is leased to the worker until it leaves the engine (its answer
  and the requests it led to are handled, or it failed or was dropped); then the feeds are
  flushed and the visit store's buffered visits written (``flush_items``), and its lease ends
  (a store another process keeps locked holds the lease until they are). A worker renews
  ``hw:{KEY}:alive:<worker>`` every 0.2 s (:data:`TICK` x :data:`HEARTBEAT_TICKS`); one that
  stops (SIGKILL) has, ``HIDDENWEB_REDIS_LEASE`` seconds later, its leased requests and its lane
  handed to the shared lane by whichever worker reaps first, and the pages of the forms it
  explored queued again (a live worker reads each form again and takes it over); a request
  handed back carries ``hiddenweb_handed_back`` (the spider emits and expands its page even when
  its content was seen: the dead worker may have read it without its item reaching the feed).
* **End.** A worker with nothing to serve stays open (``DontCloseSpider``) while any request is
  queued in any lane or leased, or another live worker has not been idle since it last took a
  request (it may still queue paused forms at its own ``spider_idle``); the crawl ends when the
  frontier and all leases are empty and every live worker is idle
  (:meth:`~hiddenweb.dla.redis_frontier.RedisFrontier.over`). A worker is marked idle only at a
  ``spider_idle`` in which nothing was offered to its scheduler since the last one (a paused
  form's next round, even all duplicates, is work it can still produce), and unmarked as soon as
  it takes a request, even when another ``spider_idle`` handler kept it open after the mark. A
  worker kept open has its ``spider_idle`` again at every tick, not only at the engine's 5 s
  heartbeat.

Not shared: the page automata (they order nothing with transfer on; ``dla_transfer`` off is
refused), the step budget ``dla_max_steps`` (per worker), ``best_served`` (per worker).
Meta: as :class:`DLAScheduler`, plus ``hiddenweb_lease`` (the lease id) and
``hiddenweb_owner``. Stats: as :class:`DLAScheduler`'s ``hiddenweb/dla/*``, plus
``hiddenweb/redis/{handed_back,acked,acks_held,unserializable,idle_waits}``.
"""

from __future__ import annotations

import logging
import pickle
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import request_from_dict
from twisted.internet import task

from hiddenweb.dla.config import DLAConfig
from hiddenweb.dla.feedback import Outcome, feedback_signal
from hiddenweb.dla.journal import flush_items
from hiddenweb.dla.kinds import (
    PRIOR_REWARDS,
    RENDER,
    action_of,
    is_nofollow,
    kinds,
    parent_kind,
)
from hiddenweb.dla.redis_frontier import (
    HANDED_MARK,
    HANDED_META,
    RELAY,
    SHARED,
    RedisFrontier,
)
from hiddenweb.dla.relay import OWNER_META, RELAY_META
from hiddenweb.dla.scheduler import (
    GROUP_META,
    KINDS_META,
    RERENDER_META,
    SCORE_META,
    DLAScheduler,
)
from hiddenweb.redis_dupefilter import RedisDupeFilter
from hiddenweb.redis_shared import RedisConfig, connection, worker_id

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter

logger = logging.getLogger(__name__)

LEASE_META = "hiddenweb_lease"
#: seconds between ticks: leases of handled requests ended, the engine woken up when requests
#: wait (a response another worker handed over is read within a tick)
TICK = 0.05
#: ticks between two heartbeats, and between two reaps (dead workers' requests handed back)
HEARTBEAT_TICKS = 4
REAP_TICKS = 20
#: request meta that ties a request to this worker's memory (module docstring, "Owners")
OWNED_META = ("hiddenweb_explore", "hiddenweb_reading")


def owned(request: Request) -> bool:
    """Whether only this worker can read the request's answer (marked ``hiddenweb_owner``: its
    response is handed to this worker when another downloads it)."""
    return any(request.meta.get(key) for key in OWNED_META)


class RedisDLAScheduler(DLAScheduler):
    """Scrapy scheduler: the DLA order over a frontier shared in Redis (module docstring)."""

    def __init__(self, crawler: Crawler, dupefilter: BaseDupeFilter, config: DLAConfig,
                 redis_config: RedisConfig, frontier: RedisFrontier) -> None:
        super().__init__(crawler, dupefilter, config)
        self.redis_config = redis_config
        self.frontier = frontier
        self.worker = frontier.worker
        self.lanes = [frontier.worker, SHARED]
        self.leases: dict[str, Request] = {}
        self.local: deque[Request] = deque()  # requests that cannot be pickled: never shared
        self.idling = False  # kept open by :meth:`idle` for the others' work
        self.marked = False  # maybe in ``P idle``: unmarked when it takes a request
        self.scheduled = 0  # requests offered to the scheduler (duplicates too)
        self.scheduled_at_idle = 0  # ... when :meth:`idle` last looked
        self._loop: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        redis_config, client = connection(crawler)  # NotConfigured without HIDDENWEB_REDIS_URL
        config = DLAConfig.from_settings(crawler.settings)
        if not config.transfer:
            raise ValueError("HIDDENWEB_REDIS_URL needs the lab knob dla_transfer on: "
                             "workers share kind automata, not page automata")
        frontier = RedisFrontier(client, redis_config.prefix, worker_id(crawler),
                                 redis_config.lease, config.fewer_keys_first)
        dupefilter_cls = load_object(crawler.settings["DUPEFILTER_CLASS"])
        scheduler = cls(crawler, build_from_crawler(dupefilter_cls, crawler), config,
                        redis_config, frontier)
        crawler.signals.connect(scheduler.learn, signal=feedback_signal)
        crawler.signals.connect(scheduler.idle, signal=signals.spider_idle)
        return scheduler

    # -- BaseScheduler contract ------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        try:
            self.engine = self.crawler.engine
        except RuntimeError:
            self.engine = None
        self.frontier.heartbeat()
        logger.info("Shared crawl %(key)s on Redis as worker %(worker)s (%(pending)d requests "
                    "queued, %(leased)d leased)",
                    {"key": self.redis_config.key, "worker": self.worker,
                     "pending": self.frontier.pending(), "leased": self.frontier.leased()},
                    extra={"spider": spider})
        self._loop = task.LoopingCall(self.tick)
        self._loop.start(TICK, now=False)
        return self.df.open()

    def close(self, reason: str) -> Any:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.sweep()
        if self.leases:  # not handled (a forced stop): handed to the others after the lease
            logger.info("%(n)d leased requests not handled: handed back after the lease",
                        {"n": len(self.leases)}, extra={"spider": self.spider})
        self.frontier.retire()
        for key, value in self.frontier.counts().items():
            self.stats.set_value(f"hiddenweb/redis/crawl/{key}", value)
        return self.df.close(reason)

    def item_scraped(self, item: Any, response: Any, spider: Spider) -> None:
        """No JOBDIR journal in shared mode."""

    def has_pending_requests(self) -> bool:
        return len(self) > 0 and not self._budget_exhausted()

    def __len__(self) -> int:
        return len(self.local) + self.frontier.pending(self.lanes)

    def enqueue_request(self, request: Request) -> bool:
        self.scheduled += 1  # a duplicate too: its form may send more at the next spider_idle
        shared_df = isinstance(self.df, RedisDupeFilter)
        if not request.dont_filter and not shared_df and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        fingerprint = "" if request.dont_filter or not shared_df \
            else self.df.request_fingerprint(request)
        action = action_of(request)
        ks = kinds(action, request.url, self.config.label_words, self.config.nofollow_last)
        request.meta[KINDS_META] = ks
        if owned(request):
            request.meta.setdefault(OWNER_META, self.worker)
        try:
            payload = pickle.dumps(request.to_dict(spider=self.spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError):
            if fingerprint and self.df.request_seen(request):
                self.df.log(request, self.spider)
                return False
            self.stats.inc_value("hiddenweb/redis/unserializable")
            self.local.append(request)
            return True
        group = self.frontier.enqueue(SHARED, payload, ks, self._parents(ks), self._prior(ks),
                                      bool(request.meta.get(RERENDER_META)), self.config.a,
                                      fingerprint=fingerprint)
        if group is None:  # another worker found it first
            self.stats.inc_value("hiddenweb/redis/dupefilter/filtered")
            self.df.log(request, self.spider)
            return False
        self.stats.inc_value("hiddenweb/dla/enqueued")
        return True

    @staticmethod
    def _parents(ks: list[str]) -> dict[str, str]:
        parents = {k: p for k in (*ks, ks[0] + RENDER) if (p := parent_kind(k))}
        parents[ks[0] + RELAY] = ks[0]  # a handed-over answer scores as its kind
        return parents

    @staticmethod
    def _prior(ks: list[str]) -> dict[str, int]:
        return {k: PRIOR_REWARDS[k] for k in ks if k in PRIOR_REWARDS}

    def relay(self, request: Request, owner: str, key: str) -> None:
        """Queue for ``owner`` the response of ``request`` stored at ``key``
        (:mod:`hiddenweb.dla.relay`): a copy in its own lane, served first."""
        ks = request.meta.get(KINDS_META) or ["links:public"]
        meta = {k: v for k, v in request.meta.items() if k not in (LEASE_META, GROUP_META)}
        copy = request.replace(meta={**meta, RELAY_META: key}, dont_filter=True)
        payload = pickle.dumps(copy.to_dict(spider=self.spider), protocol=4)
        self.frontier.enqueue(owner, payload, ks, self._parents(ks), self._prior(ks), False,
                              self.config.a, relay=True)

    def next_request(self) -> Request | None:
        if self._budget_exhausted():
            return super().next_request()  # logs and signals the budget, returns None
        self.sweep()
        groups = sorted({r.meta[GROUP_META] for r in self.in_flight()})
        out = self.frontier.pop(
            self.lanes, groups, others=any(not is_nofollow(g) for g in groups),
            wait=self.config.wait, best=self.best_served if self.rewarded else 0.0,
            cap=self.config.explore_in_flight)
        if isinstance(out, float):
            self.stats.inc_value("hiddenweb/dla/waits")
            return None
        if out is None:
            return self.local.popleft() if self.local else None
        lease, payload, group, score = out
        handed = payload.startswith(HANDED_MARK)
        request = request_from_dict(pickle.loads(payload.lstrip(HANDED_MARK)), spider=self.spider)
        if handed:
            request.meta[HANDED_META] = True
        self.idling = False
        if self.marked:  # marked idle at a spider_idle, even one another handler kept open
            self.marked = False
            self.frontier.busy()
        request.meta[SCORE_META] = score
        request.meta[GROUP_META] = group
        request.meta[LEASE_META] = lease
        self.leases[lease] = request
        if self.rewarded and score > self.best_served:
            self.best_served = score
        self.steps += 1
        self.stats.inc_value("hiddenweb/dla/dequeued")
        return request

    # -- leases, heartbeat, end ------------------------------------------------------------
    def held(self) -> set[str]:
        """Lease ids of the requests this worker's engine still holds: from download until
        the requests their answer led to are scheduled."""
        engine = self.engine
        slot = getattr(engine, "_slot", None)
        active = getattr(slot, "inprogress", None)
        if active is None:
            active = self.in_flight()
        return {r.meta[LEASE_META] for r in active if LEASE_META in r.meta}

    def sweep(self) -> None:
        """End the leases of the requests the engine is done with."""
        if not self.leases:
            return
        held = self.held()
        done = [lease for lease in self.leases if lease not in held]
        if done:
            # their items in the feeds (on the OS's side) and the visit store before the leases
            # end: a worker killed after this hands nothing back, so what it read must be kept
            if not flush_items(self.crawler):
                self.stats.inc_value("hiddenweb/redis/acks_held")
                return  # the store is locked: the leases wait (and are renewed) for a tick
            # the stored answers of relayed copies (hiddenweb.dla.relay) are read: deleted now
            self.frontier.ack(done, [key for lease in done
                                     if (key := self.leases[lease].meta.get(RELAY_META))])
            for lease in done:
                del self.leases[lease]
            self.stats.inc_value("hiddenweb/redis/acked", len(done))

    def tick(self) -> None:
        """Every :data:`TICK`: leases ended, the engine woken (a request waits in this worker's
        lanes, or it idles and the crawl is over: it closes now, not at the engine's next 5 s
        heartbeat); every few ticks, heartbeat and reap."""
        self.ticks += 1
        try:
            if self.ticks % HEARTBEAT_TICKS == 0:
                self.frontier.heartbeat()
            self.sweep()
            if self.ticks % REAP_TICKS == 0:
                self.reap()
            slot = getattr(self.engine, "_slot", None)
            if slot is not None and (self.idling or self.frontier.pending(self.lanes)):
                # idling: its next spider_idle (a paused form's next round, then the check of
                # the crawl's end, :meth:`idle`) comes now, not at the engine's 5 s heartbeat
                slot.nextcall.schedule()
        except Exception:  # Redis away for a moment: the next tick tries again
            logger.exception("Shared frontier tick failed", extra={"spider": self.spider})

    def reap(self) -> None:
        """Hand back the requests of dead workers (any worker may; one script)."""
        back = self.frontier.reap()
        if back:
            self.stats.inc_value("hiddenweb/redis/handed_back", back)
            logger.info("%(n)d requests of a dead worker handed back", {"n": back},
                        extra={"spider": self.spider})

    def idle(self, spider: Spider) -> None:
        """``spider_idle``: stay open while any worker's request is queued or leased, or another
        live worker is not idle yet (it may still queue what it holds in memory).

        This worker is marked idle (``P idle``) only at a ``spider_idle`` in which nothing was
        offered to the scheduler since the last one: the form crawler's handler runs first
        (:meth:`FormCrawler.resume_paused`) and may send a paused form's next round. Marked then,
        and kept open by that handler, it stayed marked while it worked (only a worker
        :attr:`idling` was unmarked), and the others closed at the first moment nothing was
        queued or leased (issue 27): :meth:`next_request` unmarks it whenever it was marked."""
        self.sweep()
        self.reap()
        quiet = self.scheduled == self.scheduled_at_idle
        self.scheduled_at_idle = self.scheduled
        if logger.isEnabledFor(logging.DEBUG):  # two more calls to Redis: only when asked
            logger.debug("spider_idle: quiet %(quiet)s, marked %(marked)s, pending %(pending)d,"
                         " leased %(leased)d",
                         {"quiet": quiet, "marked": self.marked,
                          "pending": self.frontier.pending(), "leased": self.frontier.leased()},
                         extra={"spider": self.spider})
        if quiet:
            self.marked = True  # the script marks it when nothing is queued or leased
        self.idling = not (quiet and self.frontier.over(idle=True))
        if self.idling:
            self.stats.inc_value("hiddenweb/redis/idle_waits")
            raise DontCloseSpider

    # -- learning --------------------------------------------------------------------------
    def learn(self, request_meta: dict[str, Any], url: str, outcome: Outcome | None) -> None:
        """One feedback on the shared kind automata (one atomic script)."""
        if outcome is None or outcome == "fresh":  # (the stale rule is off in shared mode)
            self.stats.inc_value("hiddenweb/dla/neutral")
            return
        ks = request_meta.get(KINDS_META) or kinds(
            request_meta.get("hiddenweb_action") or {}, url, self.config.label_words,
            self.config.nofollow_last)
        if outcome == "reward":
            self.rewarded = True
        self.stats.inc_value("hiddenweb/dla/rewards" if outcome == "reward"
                             else "hiddenweb/dla/penalties")
        prior = {k: PRIOR_REWARDS[k] for k in ks if k in PRIOR_REWARDS}
        self.frontier.learn(outcome, list(ks), prior, self.config.a, self.config.b)

    def kind_score(self, kind: str) -> float:
        """The shared ``p(pursue)`` of a kind (as :meth:`DLAScheduler.kind_score`)."""
        return self.frontier.scores([kind])[0]
