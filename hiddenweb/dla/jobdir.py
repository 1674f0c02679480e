"""The DLA scheduler's job in ``JOBDIR``: what it learned, and where its pending requests are.

* ``hiddenweb_journal.log`` (:mod:`hiddenweb.dla.journal`): every request accepted, done and
  emitted, appended as it happens: the frontier of record. :func:`open_job` replays it and queues
  the pending requests again; the buckets' disk queues (:mod:`hiddenweb.dla.queues`) are only a
  memory-saving cache of them, emptied at open.
* ``hiddenweb_dla.json``: the automata, written atomically (tmp file, fsync, rename) every
  :data:`CHECKPOINT_SECONDS` and at close, read at open (after a kill: the last checkpoint; what
  was learned since is learned again; the order, never what is crawled, depends on it)::

    {"format": "hiddenweb-dla", "version": 2, "transfer": bool, "a": float|null, "b": float,
     "steps": int, "next_seq": int,
     "pages": {page_url: {"keys": [...], "p": [...], "steps": int, "converged": bool}},
     "kinds": {kind: p_pursue}, "roots": {kind: root kind}, "paid": [kind, ...],
     "rewarded": bool, "best_served": float}

A state with another format/version or another ``dla_transfer`` is refused with a
``ValueError`` naming the cause; changed ``a``/``b`` are accepted.

* ``hiddenweb_parts.pickle``: what the crawl's other parts learned in memory, each a *stateful
  part* (the spider, a downloader or spider middleware, an extension or an item pipeline with
  ``jobdir_name``, ``jobdir_state()`` and ``restore_jobdir_state(state)``: the form explorers,
  :meth:`~hiddenweb.spiders.hwdla.HwdlaSpider.jobdir_state`; the trap guard's records,
  :meth:`~hiddenweb.trapguard.TemplateTrapGuard.jobdir_state`), pickled in one piece, written
  atomically every :data:`COMMIT_SECONDS` (or, when writing it takes longer than a
  :data:`COMMIT_SHARE` of that, so much less often) and at close; the journal's ``D`` of the
  requests done before it are written only after it (:meth:`Journal.commit`), so that after a
  kill at any instant the parts' state holds every answer the journal calls done, and the
  answers read since are read again. It is written only at an instant when no answer is being read
  (:func:`quiescent`): a state holding half of an answer's effects (an explorer's values marked
  sent whose requests were not journaled yet) would lose them when the answer is read again.
  Restored at open, before any request; one that cannot be read is an inconsistent JOBDIR.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals

from hiddenweb.dla.automaton import Automaton
from hiddenweb.dla.journal import (
    EMITTED_META,
    JID_META,
    PARENT_META,
    Journal,
    JournalError,
    fingerprint,
    flush_feeds,
    fsync_dir,
    load_request,
    reconcile_dupefilter,
    remade_key,
)
from hiddenweb.dla.kinds import PURSUE, SKIP
from hiddenweb.dla.queues import QUEUE_DIR
from hiddenweb.pagetext import NEW_CONTENT_META, REREAD_META

if TYPE_CHECKING:
    from hiddenweb.dla.scheduler import DLAScheduler

logger = logging.getLogger(__name__)

STATE_FILE = "hiddenweb_dla.json"
STATE_FORMAT = "hiddenweb-dla"
STATE_VERSION = 2
#: how often the automata are checkpointed during a crawl
CHECKPOINT_SECONDS = 10.0
PARTS_FILE = "hiddenweb_parts.pickle"
PARTS_FORMAT = "hiddenweb-parts"
PARTS_VERSION = 1
#: how often the stateful parts are checkpointed and the requests done since journaled ``D``:
#: what a kill costs is the answers read since (read again)
COMMIT_SECONDS = 2
#: at most this share of the crawl's time goes to writing the parts' checkpoint
COMMIT_SHARE = 0.05
#: a checkpoint due for this long without an instant when no answer is being read (a busy
#: crawl's scraper is seldom idle) holds new downloads back until the answers in hand are read
COMMIT_PATIENCE = 0.5


def stateful_parts(scheduler: DLAScheduler) -> dict[str, Any]:
    """The crawl's parts that keep state in the JOBDIR checkpoint, by ``jobdir_name``."""
    crawler, engine = scheduler.crawler, scheduler.engine
    candidates: list[Any] = [scheduler.spider]
    for manager in (getattr(getattr(engine, "downloader", None), "middleware", None),
                    getattr(getattr(engine, "scraper", None), "spidermw", None),
                    getattr(getattr(engine, "scraper", None), "itemproc", None),
                    getattr(crawler, "extensions", None)):
        candidates.extend(getattr(manager, "middlewares", ()) or ())
    return {part.jobdir_name: part for part in candidates
            if isinstance(getattr(part, "jobdir_name", None), str)
            and callable(getattr(part, "jobdir_state", None))
            and callable(getattr(part, "restore_jobdir_state", None))}


def save_parts(scheduler: DLAScheduler, jobdir: Path) -> int:
    """Write the stateful parts' state atomically (tmp file, fsync, rename); its size."""
    parts = stateful_parts(scheduler)
    if not parts:
        return 0
    data = pickle.dumps({"format": PARTS_FORMAT, "version": PARTS_VERSION,
                         "parts": {name: part.jobdir_state() for name, part in parts.items()}},
                        protocol=pickle.HIGHEST_PROTOCOL)
    tmp = jobdir / (PARTS_FILE + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(jobdir / PARTS_FILE)
    fsync_dir(jobdir)
    return len(data)


def load_parts(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Restore the stateful parts from the last checkpoint (a resume); raise ``ValueError``
    when it cannot be read."""
    path = jobdir / PARTS_FILE
    if not path.exists():
        return
    try:
        state = pickle.loads(path.read_bytes())
    except Exception as exc:  # a class renamed or gone, a damaged file
        raise JournalError(f"{path}: cannot be read back ({exc!r}). Use a new JOBDIR.") from None
    if not isinstance(state, dict) or (state.get("format"), state.get("version")) != (
            PARTS_FORMAT, PARTS_VERSION):
        raise JournalError(f"{path}: not a {PARTS_FORMAT} checkpoint of version "
                           f"{PARTS_VERSION}. Use a new JOBDIR.")
    parts = stateful_parts(scheduler)
    for name, part_state in state["parts"].items():
        part = parts.get(name)
        if part is not None:
            part.restore_jobdir_state(part_state)
            scheduler.stats.inc_value("hiddenweb/jobdir/parts_restored")


def quiescent(scheduler: DLAScheduler) -> bool:
    """Whether no answer is being read: every request the engine has in progress is still in
    the downloader (no answer came back: the parts saw nothing of it) and the scraper holds no
    response. True when no engine drives the scheduler (tests)."""
    engine = scheduler.engine
    slot = getattr(engine, "_slot", None)
    if slot is None:
        return True
    scraping = getattr(getattr(getattr(engine, "scraper", None), "slot", None), "active", None)
    if scraping:
        return False
    downloading = getattr(getattr(engine, "downloader", None), "active", None) or set()
    return all(request in downloading for request in slot.inprogress)


def try_commit(scheduler: DLAScheduler) -> None:
    """A timer (20 a second): :func:`commit` once it is due and no answer is being read."""
    if scheduler.commit_due is not None and scheduler.journal is not None \
            and quiescent(scheduler):
        scheduler.commit_due = None
        commit(scheduler, Path(scheduler.jobdir))
        nextcall = getattr(getattr(scheduler.engine, "_slot", None), "nextcall", None)
        if nextcall is not None:  # downloads held back by holding_for_commit go on
            nextcall.schedule()
    elif scheduler.commit_due is not None:
        scheduler.stats.inc_value("hiddenweb/jobdir/commit_waits")


def holding_for_commit(scheduler: DLAScheduler) -> bool:
    """Whether to start no download now: a checkpoint has waited :data:`COMMIT_PATIENCE` for
    an instant when no answer is being read; the answers in hand are read first (the
    downloads in flight go on), then :func:`try_commit` writes it and the crawl goes on."""
    due = scheduler.commit_due
    if due is None or time.monotonic() - due < COMMIT_PATIENCE:
        return False
    scheduler.stats.inc_value("hiddenweb/jobdir/commit_holds")
    return True


def commit(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Checkpoint the stateful parts, then journal ``D`` for the requests done before it."""
    started = time.monotonic()
    settle(scheduler)
    journal = scheduler.journal
    jids = journal.take_settled()
    size = save_parts(scheduler, jobdir)
    journal.commit(jids)
    scheduler.commit_cost = time.monotonic() - started
    scheduler.stats.max_value("hiddenweb/jobdir/commit_seconds_max",
                              round(scheduler.commit_cost, 3))
    scheduler.stats.set_value("hiddenweb/jobdir/parts_bytes", size)
    scheduler.stats.inc_value("hiddenweb/jobdir/commits")


def save_state(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Write the automata (see the module docstring) atomically."""
    state = {
        "format": STATE_FORMAT, "version": STATE_VERSION,
        "transfer": scheduler.config.transfer, "a": scheduler.config.a, "b": scheduler.config.b,
        "steps": scheduler.steps, "next_seq": scheduler.next_seq,
        "pages": {page: la.to_state() for page, la in scheduler.pages.items()},
        "kinds": {k: la.prob(PURSUE) for k, la in scheduler.kind_la.items()},
        "roots": scheduler.roots,
        "paid": sorted(scheduler.paid),
        "rewarded": scheduler.rewarded, "best_served": scheduler.best_served,
    }
    jobdir.mkdir(parents=True, exist_ok=True)
    tmp = jobdir / (STATE_FILE + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(state))
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(jobdir / STATE_FILE)
    fsync_dir(jobdir)


def start_job(scheduler: DLAScheduler) -> None:
    """Open the scheduler's JOBDIR (:func:`open_job`) and start its checkpoints; a JOBDIR that
    cannot be resumed is logged, left as it was found, and closes the crawl once the engine has
    opened it (``CloseSpider`` from ``spider_opened``: raised in ``open``, it leaves Scrapy's
    scraper unopened and its close fails with a traceback)."""
    try:
        open_job(scheduler, Path(scheduler.jobdir))
    except (OSError, ValueError) as exc:  # JournalError too
        logger.error("Cannot resume from JOBDIR %s: %s", scheduler.jobdir, exc,
                     extra={"spider": scheduler.spider})
        scheduler.failed = "jobdir_inconsistent"
        if scheduler.journal is not None:
            scheduler.journal.close(compact=False)
            scheduler.journal = None
        scheduler.crawler.signals.connect(scheduler.refuse, signal=signals.spider_opened)
        return
    if scheduler.pending:
        logger.info("Resuming crawl (%(queuesize)d requests scheduled)",
                    {"queuesize": scheduler.pending}, extra={"spider": scheduler.spider})
    from twisted.internet import task

    scheduler._timer = task.LoopingCall(checkpoint, scheduler)
    scheduler._timer.start(1.0, now=False)
    scheduler._commit_timer = task.LoopingCall(try_commit, scheduler)
    scheduler._commit_timer.start(0.05, now=False)


def stop_job(scheduler: DLAScheduler, reason: str) -> None:
    for timer in (scheduler._timer, scheduler._commit_timer):
        if timer is not None and timer.running:
            timer.stop()
    if scheduler.failed:
        scheduler.stats.set_value("hiddenweb/failed", scheduler.failed)
    elif scheduler.journal is not None:
        close_job(scheduler, Path(scheduler.jobdir))


def settle(scheduler: DLAScheduler) -> None:
    """Collect (``D`` at the next :func:`commit`) the served requests the engine is done with:
    no longer in its in-progress set (Scrapy's ``engine._slot.inprogress``: from the download
    to the last item and request of the answer); all of them when no engine drives the
    scheduler (tests)."""
    if scheduler.journal is not None:
        slot = getattr(scheduler.engine, "_slot", None)
        scheduler.journal.settle(getattr(slot, "inprogress", None) or ())


def item_emitted(scheduler: DLAScheduler, item: Any, response: Any) -> None:
    """``item_scraped``: the item went through the pipelines and into the feeds; flush the
    feeds, then journal it (``I``, with the page's content fingerprint when it was new)."""
    request = getattr(response, "request", None)
    jid = request.meta.get(JID_META) if request is not None else None
    if scheduler.journal is None or jid is None:
        return
    flush_feeds(scheduler.crawler)
    fp = ItemAdapter(item).get("fingerprint") if request.meta.get(NEW_CONTENT_META) else None
    scheduler.journal.emitted(jid, fp)


def open_job(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Open the job: the automata, then the journal's pending requests queued again (module
    docstring); raise ``ValueError`` (:class:`~hiddenweb.dla.journal.JournalError`) when the
    JOBDIR cannot be resumed."""
    journal, replay = Journal.open(jobdir, scheduler.spider)
    scheduler.journal = journal
    load_state(scheduler, jobdir)
    shutil.rmtree(jobdir / QUEUE_DIR, ignore_errors=True)  # a cache of the journal's pending
    if replay is None:
        return
    load_parts(scheduler, jobdir)
    stats = scheduler.stats
    forgotten = reconcile_dupefilter(scheduler.df, replay.seen)
    if forgotten:
        logger.info("Resuming: %d requests the dupefilter saw were never queued (the crawl was "
                    "killed in between): they will be made again", forgotten)
        stats.set_value("hiddenweb/jobdir/forgotten", forgotten)
    pending = {jid for jid, _ in replay.pending}
    forms = getattr(scheduler.spider, "forms", None)
    if not callable(getattr(forms, "pending_after_resume", None)):
        forms = None
    for jid, payload in replay.pending:
        try:
            request = load_request(payload, scheduler.spider)
        except Exception as exc:  # a callback the spider no longer has, a class gone
            raise JournalError(f"{journal.path}: request {jid} cannot be read back: "
                               f"{exc!r}. Use a new JOBDIR.") from None
        if request.dont_filter and request.meta.get(PARENT_META) in pending:
            request.meta.pop(JID_META, None)  # its parent, read again, makes it again
            scheduler.remade[remade_key(request, fingerprint(scheduler.df, scheduler.crawler,
                                                             request))] += 1
        request.meta[JID_META] = jid
        if forms is not None:  # a form's submission: its explorer counts it as sent
            forms.pending_after_resume(request.meta)
        if jid in replay.emitted:  # its items are in the feeds: download, do not emit again
            request.meta[EMITTED_META] = True
            if replay.emitted[jid]:  # its page: a repeat to any other request (SeenContent)
                request.meta[REREAD_META] = replay.emitted[jid]
        scheduler._place(request)
    stats.set_value("hiddenweb/jobdir/resumed", len(replay.pending))
    seen = getattr(getattr(scheduler.spider, "seen", None), "fingerprints", None)
    if isinstance(seen, set):  # the hwdla spider's SeenContent: pages read before are repeats
        seen.update(replay.content)
        seen.update(fp for fp in replay.emitted.values() if fp)


def checkpoint(scheduler: DLAScheduler) -> None:
    """Collect what is done; every :data:`COMMIT_SECONDS` checkpoint the stateful parts and
    journal it (:func:`commit`); every :data:`CHECKPOINT_SECONDS` the automata (a timer)."""
    settle(scheduler)
    scheduler.ticks += 1
    every = max(COMMIT_SECONDS, round(scheduler.commit_cost / COMMIT_SHARE))
    if scheduler.journal is not None and scheduler.jobdir and scheduler.ticks % every == 0:
        if scheduler.commit_due is None:  # written by try_commit once no answer is being read
            scheduler.commit_due = time.monotonic()
    if scheduler.journal is not None and scheduler.journal.compact_if_grown():
        scheduler.stats.inc_value("hiddenweb/jobdir/compactions")
    if scheduler.ticks % int(CHECKPOINT_SECONDS) == 0 and scheduler.jobdir:
        save_state(scheduler, Path(scheduler.jobdir))


def close_job(scheduler: DLAScheduler, jobdir: Path) -> None:
    """At close (the engine has processed every request in flight): write the automata and the
    stateful parts, journal what is done, drop the disk queues (the journal has their
    requests), compact the journal."""
    settle(scheduler)
    save_state(scheduler, jobdir)
    commit(scheduler, jobdir)
    for group in scheduler.groups.values():
        for b in group.buckets.values():
            if b.dq is not None:
                b.dq.close()
    shutil.rmtree(jobdir / QUEUE_DIR, ignore_errors=True)
    scheduler.journal.close(compact=True)


def load_state(scheduler: DLAScheduler, jobdir: Path) -> None:
    """Read a saved state back into a fresh scheduler; refuse an incompatible one."""
    path = jobdir / STATE_FILE
    if not path.exists():
        return
    state = json.loads(path.read_text(encoding="utf-8"))
    if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
        raise ValueError(
            f"{path}: saved DLA state has format {state.get('format')!r} version "
            f"{state.get('version')!r}; this scheduler reads {STATE_FORMAT!r} version "
            f"{STATE_VERSION}. Use a new JOBDIR.")
    if bool(state.get("transfer")) != scheduler.config.transfer:
        raise ValueError(
            f"{path}: the job was saved with dla_transfer="
            f"{bool(state.get('transfer'))} and is resumed with "
            f"dla_transfer={scheduler.config.transfer}: the queues are laid out "
            "differently. Resume with the same setting or use a new JOBDIR.")
    if (state.get("a"), state.get("b")) != (scheduler.config.a, scheduler.config.b):
        logger.info("Resuming with new DLA steps a=%s b=%s (saved: a=%s b=%s)",
                    scheduler.config.a, scheduler.config.b, state.get("a"), state.get("b"))
    scheduler.steps = int(state["steps"])
    scheduler.next_seq = int(state["next_seq"])
    scheduler.rewarded = bool(state.get("rewarded", False))
    scheduler.best_served = float(state.get("best_served", 0.0))
    for page, la_state in state["pages"].items():
        config = scheduler.config
        la = Automaton(a=config.a, b=config.b, converge_p=config.converge_p)
        la.load_state(la_state)
        scheduler.pages[page] = la
    for kind, p in state["kinds"].items():
        kla = scheduler._kind(kind)
        kla.load_state({"keys": [PURSUE, SKIP], "p": [p, 1.0 - p]})
    scheduler.roots.update(state.get("roots") or {})
    scheduler.paid.update(state.get("paid") or ())
