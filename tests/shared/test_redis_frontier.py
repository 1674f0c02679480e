"""The shared frontier's scripts on a real Redis: order, lanes, leases, dead workers, and
updates that stay right when several processes make them at once."""

from __future__ import annotations

import math
import multiprocessing

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from hiddenweb.dla.redis_frontier import SHARED, RedisFrontier
from hiddenweb.pagetext import SeenContent
from hiddenweb.redis_shared import RedisConfig, form_claims, seen_content

PREFIX = "hw:{test}:"
LINKS = ["url:a/{n}", "links:public"]


def frontier(client, worker: str = "w1", lease: float = 30.0) -> RedisFrontier:
    f = RedisFrontier(client, PREFIX, worker, lease)
    f.heartbeat()
    return f


def pop(f: RedisFrontier, lanes=None):
    return f.pop(lanes or [f.worker, SHARED], [], others=False, wait=0.0, best=0.0, cap=0)


def open_scheduler(redis_url, spider_name: str = "hwdla", wake=lambda: None):
    """A shared-mode scheduler opened on a crawler whose engine is only what it reads (its
    in-progress set, its next call: ``wake``)."""
    from types import SimpleNamespace

    from scrapy import Spider

    from hiddenweb.dla.redis_scheduler import RedisDLAScheduler

    crawler = get_crawler(Spider, settings_dict={"HIDDENWEB_REDIS_URL": redis_url,
                                                 "HIDDENWEB_REDIS_KEY": "test"})
    crawler.spider = Spider.from_crawler(crawler, spider_name)
    scheduler = RedisDLAScheduler.from_crawler(crawler)
    crawler.engine = SimpleNamespace(
        _slot=SimpleNamespace(inprogress=set(), nextcall=SimpleNamespace(schedule=wake)),
        downloader=SimpleNamespace(active=set()), scraper=SimpleNamespace(slot=None))
    scheduler.open(crawler.spider)
    return crawler, scheduler


def test_off_without_url():
    crawler = get_crawler()
    with pytest.raises(NotConfigured):
        RedisConfig.from_crawler(crawler)
    assert type(seen_content(crawler)) is SeenContent
    assert form_claims(crawler) is None


def test_jobdir_refused(redis_url):
    crawler = get_crawler(settings_dict={"HIDDENWEB_REDIS_URL": redis_url, "JOBDIR": "x"})
    with pytest.raises(ValueError, match="JOBDIR"):
        RedisConfig.from_crawler(crawler)


def test_best_kind_first_ties_to_oldest(redis_client):
    f = frontier(redis_client)
    f.enqueue(SHARED, b"a1", LINKS, {}, {}, False, None)
    f.enqueue(SHARED, b"b1", ["url:b", "links:public"], {}, {}, False, None)
    f.enqueue(SHARED, b"a2", LINKS, {}, {}, False, None)
    f.learn("reward", ["url:b"], {}, None, 0.05)
    assert [pop(f)[1] for _ in range(3)] == [b"b1", b"a1", b"a2"]
    assert pop(f) is None
    assert f.pending() == 0 and f.leased() == 3


@pytest.mark.parametrize("fewer_keys_first", [True, False])
def test_ties_go_to_fewer_query_keys_then_to_the_oldest_group(redis_client, fewer_keys_first):
    """As in one process (``test_dla_scheduler``'s test of the same name, lab knob
    ``dla_fewer_keys_first``): of groups of one score, a record's page and a table's next
    page before a facet value's page; off, the oldest first. A render group of a template with
    a query counts its keys too."""
    f = RedisFrontier(redis_client, PREFIX, "w1", 30.0, fewer_keys_first)
    f.heartbeat()
    kinds = {b"render?": "url:h/cars?_next", b"render": "url:h/cars/{slug}",
             b"facet": "url:h/cars?Horsepower&_facet", b"next": "url:h/cars?_next",
             b"record": "url:h/cars/{slug}"}
    for payload, kind in kinds.items():
        f.enqueue(SHARED, payload, [kind, "links:public"], {}, {}, payload.startswith(b"render"),
                  None)
    order = [pop(f)[1] for _ in kinds]
    assert pop(f) is None
    if fewer_keys_first:
        assert order == [b"render", b"render?", b"record", b"next", b"facet"]
    else:  # renders first, then by age
        assert order == [b"render?", b"render", b"facet", b"next", b"record"]


def test_kind_with_no_automaton_follows_its_root(redis_client):
    """``url:a/{n}`` was never rewarded: it scores as ``links:public`` (its root), re-keyed
    when the root rises, as ``DLAScheduler.kind_score``."""
    f = frontier(redis_client)
    f.enqueue(SHARED, b"b1", ["url:b", "links:public"], {}, {}, False, None)
    f.enqueue(SHARED, b"a1", LINKS, {}, {}, False, None)
    f.learn("penalty", ["url:b"], {}, None, 0.05)
    f.learn("reward", ["links:public"], {}, None, 0.05)
    assert f.scores(["url:a/{n}", "url:b"]) == [pytest.approx(0.7046919454), 0.475]
    assert pop(f)[1] == b"a1"


def test_own_lane_served_only_to_its_worker(redis_client):
    one, two = frontier(redis_client, "w1"), frontier(redis_client, "w2")
    one.enqueue("w1", b"form", ["form:x", "links:public"], {}, {}, False, None)
    assert pop(two) is None
    assert pop(one)[1] == b"form"


def test_ack_ends_lease(redis_client):
    f = frontier(redis_client)
    f.enqueue(SHARED, b"r", LINKS, {}, {}, False, None)
    lease = pop(f)[0]
    f.ack([lease])
    assert f.leased() == 0 and f.reap() == 0


def test_dead_workers_leases_and_lane_handed_back(redis_client):
    dead, alive = frontier(redis_client, "dead", lease=0.05), frontier(redis_client, "alive")
    dead.enqueue(SHARED, b"taken", LINKS, {}, {}, False, None)
    dead.enqueue("dead", b"own", ["form:x", "links:public"], {}, {}, False, None)
    assert pop(dead, [SHARED])[1] == b"taken"
    redis_client.delete(PREFIX + "alive:dead")  # SIGKILL: no more heartbeats
    redis_client.zadd(PREFIX + "leases", {"1": 0})  # ... and its lease's deadline passed
    assert alive.reap() == 2
    served = {pop(alive)[1], pop(alive)[1]}
    assert served == {b"Htaken", b"Hown"}  # marked handed back (HANDED_MARK)
    assert alive.pending() == 0


def test_live_workers_lease_renewed(redis_client):
    f = frontier(redis_client, lease=0.05)
    f.enqueue(SHARED, b"slow", LINKS, {}, {}, False, None)
    pop(f)
    redis_client.zadd(PREFIX + "leases", {"1": 0})
    f.heartbeat()
    assert f.reap() == 0 and f.leased() == 1


def _hammer(url: str, outcome: str, n: int, a: float | None) -> None:
    import redis

    f = RedisFrontier(redis.Redis.from_url(url), PREFIX, "x", 30.0)
    for _ in range(n):
        f.learn(outcome, ["url:c"], {}, a, 0.01)


@pytest.mark.parametrize("outcome", ["penalty", "reward"])
def test_concurrent_updates_lose_nothing(redis_url, redis_client, outcome):
    """4 processes x 250 updates of one kind automaton: penalties (and fixed-step rewards)
    commute, so the result is known exactly; a read-modify-write race would lose some."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(redis_url, outcome, 250, 0.01))
             for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    p = float(redis_client.hget(PREFIX + "kla", "url:c"))
    expected = 0.5 * 0.99 ** 1000
    got = p if outcome == "penalty" else 1.0 - p
    assert math.isclose(got, expected, rel_tol=1e-9)


def _drain(url: str, worker: str, out) -> None:
    import redis

    f = RedisFrontier(redis.Redis.from_url(url), PREFIX, worker, 30.0)
    got = []
    while (item := f.pop([SHARED], [], False, 0.0, 0.0, 0)) is not None:
        got.append(item[1])
    out.put(got)


def test_concurrent_pops_serve_each_request_once(redis_url, redis_client):
    f = frontier(redis_client)
    for i in range(600):
        f.enqueue(SHARED, str(i).encode(), [f"url:k{i % 7}", "links:public"], {}, {}, False,
                  None)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_drain, args=(redis_url, f"w{i}", out)) for i in range(4)]
    for p in procs:
        p.start()
    served = [x for _ in procs for x in out.get(timeout=60)]
    for p in procs:
        p.join(60)
    assert sorted(served) == sorted(str(i).encode() for i in range(600))
    assert f.pending() == 0 and f.leased() == 600


def test_answer_downloaded_elsewhere_is_read_by_the_forms_worker(redis_url, redis_client):
    """B downloads a submission of A's form: the response goes to A (AnswerRelay), B drops it.
    A reads it, and is killed before its lease ends: the copy is handed back, and B reads the
    same stored answer instead of downloading it again; it is deleted when B's lease ends."""
    import time
    from types import SimpleNamespace

    from scrapy import Request, Spider
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http import HtmlResponse

    from hiddenweb.dla.redis_scheduler import RedisDLAScheduler
    from hiddenweb.dla.relay import OWNER_META, RELAY_META, AnswerRelay

    settings = {"HIDDENWEB_REDIS_URL": redis_url, "HIDDENWEB_REDIS_LEASE": 0.3}
    workers = []
    for _ in range(2):
        crawler = get_crawler(Spider, settings_dict=settings)
        crawler.spider = Spider("hwdla")
        scheduler = RedisDLAScheduler.from_crawler(crawler)
        crawler.engine = SimpleNamespace(  # the parts of the engine the two components read
            _slot=SimpleNamespace(scheduler=scheduler, inprogress=set()),
            downloader=SimpleNamespace(active=set()), scraper=SimpleNamespace(slot=None))
        scheduler.open(crawler.spider)
        workers.append((scheduler, AnswerRelay.from_crawler(crawler)))
    (a, relay_a), (b, relay_b) = workers
    try:
        submission = Request("http://127.0.0.1:1/search?q=fern",
                             meta={"hiddenweb_explore": "GET /search [q]",
                                   "hiddenweb_action": {"kind": "form", "page": "p"}})
        assert a.enqueue_request(submission)
        taken = b.next_request()
        assert taken.meta[OWNER_META] == a.worker
        answer = HtmlResponse(taken.url, body=b"<p>fern: 3 records</p>", request=taken)
        with pytest.raises(IgnoreRequest):
            relay_b.process_response(taken, answer)
        assert b.next_request() is None  # in A's own lane
        copy = a.next_request()
        assert copy.meta[RELAY_META]
        read = relay_a.process_request(copy)
        assert read.body == answer.body and read.url == taken.url
        assert relay_a.process_response(copy, read) is read  # A reads it itself
        key = copy.meta[RELAY_META]
        assert redis_client.exists(key)  # kept until the copy's lease ends
        # a redirect of the copy (its meta copied) is downloaded, not answered again
        assert relay_a.process_request(copy.replace(url=copy.url + "&next=1")) is None
        a.crawler.engine._slot.inprogress.add(copy)  # A still reading it, and then killed
        redis_client.delete(a.frontier.prefix + "alive:" + a.worker)
        time.sleep(0.4)  # the lease
        assert b.frontier.reap() >= 1
        again = b.next_request()
        assert again.meta[RELAY_META] == key
        reread = relay_b.process_request(again)
        assert reread is not None and reread.body == answer.body  # no second download
        assert relay_b.process_response(again, reread) is reread
        b.sweep()  # B's engine is done with it: its lease ends, the stored answer goes
        assert not redis_client.exists(key)
    finally:
        for scheduler, _ in workers:
            scheduler.close("finished")


def test_shown_text_shared(redis_url, redis_client):
    """A set of texts one worker showed is not novel on another (as in one process)."""
    from hiddenweb.redis_shared import shown_text

    crawler = get_crawler(settings_dict={"HIDDENWEB_REDIS_URL": redis_url})
    one, two = shown_text(crawler, True), shown_text(crawler, True)
    blocks = ["Ada Lovelace, London", "Charles Babbage, London"]
    assert one.judge({}, blocks, set())
    assert not two.judge({}, list(reversed(blocks)), set())  # same set, another order
    assert two.judge({}, blocks[:1], set())  # a subset is another set


def test_dead_workers_forms_read_again(redis_url, redis_client):
    """A dead worker's form claims end and the page of each of its forms is queued again,
    marked handed back, with the page's response kept in Redis (read there, not downloaded
    again); a live worker then claims the form."""
    import pickle

    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse

    from hiddenweb.dla.redis_frontier import HANDED_MARK
    from hiddenweb.dla.relay import RELAY_META
    from hiddenweb.redis_shared import CLAIMED, OWN, TAKEN_OVER, FormClaims, worker_id

    crawlers = []
    for _ in range(2):
        crawler = get_crawler(Spider, settings_dict={"HIDDENWEB_REDIS_URL": redis_url,
                                                     "HIDDENWEB_REDIS_KEY": "test"})
        crawler.spider = Spider("x")
        crawlers.append(crawler)
    dead, alive = (FormClaims.from_crawler(c) for c in crawlers)
    survivor = frontier(redis_client, worker_id(crawlers[1]))
    frontier(redis_client, worker_id(crawlers[0]))  # both alive
    request = Request("http://127.0.0.1:1/search", meta={"hiddenweb_dla_group": "url:search"})
    page = HtmlResponse(request.url, body=b"<form><input name=q></form>", request=request)
    assert dead.claim("GET /search [q]", page)
    assert not alive.claim("GET /search [q]", page)  # its worker is alive
    assert dead.claim("GET /other [x]", page)  # same page: queued again once
    redis_client.delete(PREFIX + "alive:" + worker_id(crawlers[0]))  # SIGKILLed
    assert survivor.reap() == 1
    _, payload, group, _ = pop(survivor)
    assert payload.startswith(HANDED_MARK) and group == "url:search"
    key = pickle.loads(payload[len(HANDED_MARK):])["meta"][RELAY_META]
    assert pickle.loads(redis_client.get(key))["body"] == page.body  # read there
    assert pop(survivor) is None
    assert alive.claim("GET /search [q]", page) == TAKEN_OVER  # explored by the dead one
    assert alive.claim("GET /search [q]", page) == OWN
    assert alive.claim("GET /new [q]", page) == CLAIMED
    assert crawlers[1].stats.get_value("hiddenweb/redis/forms/taken_over") == 1
    assert crawlers[1].stats.get_value("hiddenweb/redis/forms/claimed") == 1


def test_an_idle_worker_closes_when_the_others_finish(redis_url, redis_client):
    """A worker kept open for another's work has its spider_idle again at every tick (not at
    the engine's 5 s heartbeat) and closes at the first one after that worker is idle too and
    nothing is queued or leased; not before: a worker between its last answer and its own
    spider_idle may still queue paused forms."""
    from scrapy.exceptions import DontCloseSpider

    woken = []
    crawler, scheduler = open_scheduler(redis_url, wake=lambda: woken.append(1))
    try:
        scheduler.tick()
        assert not woken  # busy, nothing queued: the engine asks when it needs to
        other = frontier(redis_client, "other")
        other.enqueue(SHARED, b"r", LINKS, {}, {}, False, None)
        lease = pop(other, [SHARED])[0]
        with pytest.raises(DontCloseSpider):
            scheduler.idle(crawler.spider)
        scheduler.tick()
        assert woken  # idling: its spider_idle comes again at the next tick
        other.ack([lease])
        with pytest.raises(DontCloseSpider):
            scheduler.idle(crawler.spider)  # the other has not been idle since: it may queue
        assert other.over(idle=True)  # it is idle now: the crawl is over ...
        scheduler.idle(crawler.spider)  # ... for this worker too: no DontCloseSpider, it closes
    finally:
        scheduler.close("finished")


def test_a_worker_sending_more_at_its_spider_idle_is_not_idle(redis_url, redis_client):
    """A spider_idle in which the worker offered requests to the scheduler (a paused form's
    next round, duplicates all: nothing queued) does not mark it idle: the others would find
    the crawl over and close while its answers release more. The next quiet one does."""
    from scrapy import Request
    from scrapy.exceptions import DontCloseSpider

    crawler, scheduler = open_scheduler(redis_url)
    try:
        seen = Request("http://127.0.0.1:1/search?q=fern")
        assert scheduler.enqueue_request(seen)
        lease = scheduler.next_request().meta["hiddenweb_lease"]
        scheduler.frontier.ack([lease])
        scheduler.leases.clear()
        with pytest.raises(DontCloseSpider):
            scheduler.idle(crawler.spider)  # it was busy since the last look
        assert not scheduler.enqueue_request(seen.replace())  # the round: a duplicate
        with pytest.raises(DontCloseSpider):
            scheduler.idle(crawler.spider)
        assert not redis_client.sismember(PREFIX + "idle", scheduler.worker)
        scheduler.idle(crawler.spider)  # quiet: idle, and alone, the crawl is over
        assert redis_client.sismember(PREFIX + "idle", scheduler.worker)
    finally:
        scheduler.close("finished")


def test_a_worker_that_closes_is_never_found_dead(redis_url, redis_client):
    """A worker that closes with the crawl (:meth:`RedisFrontier.retire`) stops being alive
    and leaves the crawl in one step: another worker's reap at any moment of it finds nothing
    to hand back. Were it two steps (its 'alive' key deleted, then its own reap), a reap in
    between found it dead and queued its forms' pages again: downloaded twice by a worker still
    open, or left queued when all closed at once (issue 27). The other worker reaps after every
    command the closing one sends."""
    import redis
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse

    from hiddenweb.redis_shared import FormClaims, worker_id

    crawler = get_crawler(Spider, settings_dict={"HIDDENWEB_REDIS_URL": redis_url,
                                                 "HIDDENWEB_REDIS_KEY": "test"})
    crawler.spider = Spider("x")
    claims = FormClaims.from_crawler(crawler)
    other = frontier(redis_client, "other")
    reaped = []

    class Interleaved(redis.Redis):
        def execute_command(self, *args, **options):
            out = super().execute_command(*args, **options)
            reaped.append(other.reap())  # another worker's reap, right after this command
            return out

    closing = frontier(Interleaved.from_url(redis_url), worker_id(crawler))
    request = Request("http://127.0.0.1:1/search", meta={"hiddenweb_dla_group": "url:search"})
    page = HtmlResponse(request.url, body=b"<form><input name=q></form>", request=request)
    assert claims.claim("GET /search [q]", page)
    assert redis_client.keys(PREFIX + "formbody:*")  # the page, kept for a takeover
    reaped.clear()
    closing.retire()
    assert reaped and sum(reaped) == 0
    assert not redis_client.keys(PREFIX + "formbody:*")  # retired: nothing to take over
    assert redis_client.hget(PREFIX + "pending", SHARED) in (None, b"0")
    assert not redis_client.sismember(PREFIX + "workers", worker_id(crawler))
    assert other.reap() == 0


def test_a_worker_kept_open_by_another_handler_is_idle_no_more_once_it_takes_work(
        redis_url, redis_client):
    """A worker that found the crawl over at a spider_idle, and was kept open by another
    handler (a paused form's next round), is marked idle no more when it takes a request: left
    marked, the others found every worker idle at the first moment nothing was queued or leased
    and closed while it went on alone (issue 27)."""
    from scrapy import Request

    crawler, scheduler = open_scheduler(redis_url)
    try:
        scheduler.idle(crawler.spider)  # alone and quiet: over (the engine would close ...)
        assert redis_client.sismember(PREFIX + "idle", scheduler.worker)
        # ... but the form crawler's handler raised DontCloseSpider and sent its next round
        assert scheduler.enqueue_request(Request("http://127.0.0.1:1/search?q=fern"))
        assert scheduler.next_request() is not None
        assert not redis_client.sismember(PREFIX + "idle", scheduler.worker)
    finally:
        scheduler.close("finished")
