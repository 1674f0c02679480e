"""The crawl's journal in ``JOBDIR``: an append-only log from which a crawl killed at any instant
(SIGKILL, OOM, power cut of the process) resumes with nothing lost and nothing emitted twice.

``hiddenweb_journal.log`` holds one record a line, tab-separated, each written with one
``write`` and flushed to the OS at once (a killed process loses nothing it wrote; a torn last
line, written when the kill came, is dropped on resume)::

    H  hiddenweb-journal  1          header
    E  jid  fp|-  base64(pickle)     a request the scheduler accepted (its dupefilter fingerprint;
                                     ``-`` for ``dont_filter``), as Scrapy's disk queues pickle it
    D  jid                           its download and everything its answer produced (items
                                     through the pipelines, new requests journaled) are done
    I  jid  fp|-                     an item of its answer was written to the feeds (flushed
                                     first) and the item pipelines; ``fp``: its content
                                     fingerprint when the page was new
    F  fp                            (compacted) a done request's dupefilter fingerprint
    S  fp                            (compacted) the content fingerprint of an emitted page

A request's ``D`` is written only once a checkpoint of what the crawl learned in memory (the
form explorers, the trap guard's records: :mod:`hiddenweb.dla.jobdir`) that includes its answer
is on disk (:meth:`Journal.settle` collects, :meth:`Journal.commit` writes): after a kill, the
checkpoint and the journal agree, and the answers read after the checkpoint are read again.

The log is compacted at a clean close, and during the crawl whenever it has grown past twice its
size after the last compaction (:meth:`Journal.compact_if_grown`, from the scheduler's timer).

On resume (:func:`replay`) the pending requests are those ``E`` without ``D``, in their order:
the scheduler queues them again (its disk queues are only a cache of them). Scrapy's dupefilter
is set to the ``E`` fingerprints, so a request it saw whose ``E`` the kill prevented is not lost:
its parent, not done, is downloaded again and produces it again. A pending request with an ``I``
is downloaded again with ``hiddenweb_emitted`` in its meta, and its items are not emitted
again (:class:`~hiddenweb.dla.middleware.DLAFeedbackMiddleware`); the content fingerprints of
every emitted page go back to the spider's ``seen`` (a page read before the kill is a repeat
after it, as without it, to any request that reaches it: a pending one's page is new once more
only to that request's own re-read, ``hiddenweb_reread``, so that its links and forms are made
again). A pending form submission counts as sent for its form's explorer, which may start on
another page's copy of the form (:meth:`hiddenweb.forms.crawl.FormCrawler.
pending_after_resume`). A clean close compacts the log (tmp file, fsync, rename).

A request its parent's answer makes again when that answer is read again (the parent was not
done at the kill) is dropped by the dupefilter, unless it is not filtered (``dont_filter``: a
retry, a form submitted in Chromium, a re-render): such a request, pending with its parent, is
remembered on resume (:func:`remade_key`) and the scheduler drops its copy when the parent's
answer makes it again (stat ``hiddenweb/jobdir/remade_dropped``); the pending one keeps its
place and its ``I`` records.

A line that cannot be read, a ``D`` or ``I`` of an unknown request, or a JOBDIR with a dupefilter
file but no journal is an inconsistent JOBDIR: :class:`JournalError`, and the crawl stops at once
(finish reason ``jobdir_inconsistent``, ``scrapy crawl`` exits 1).
"""

from __future__ import annotations

import base64
import logging
import os
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.utils.request import request_from_dict

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

JOURNAL_FILE = "hiddenweb_journal.log"
HEADER = "H\thiddenweb-journal\t1\n"
JID_META = "hiddenweb_jid"
EMITTED_META = "hiddenweb_emitted"
#: the journal number of the request whose answer made this one (set by the DLA feedback
#: middleware on a callback's requests; a copy of a journaled request, a retry or a
#: redirect, has its original's :data:`JID_META`): kept in the journal
PARENT_META = "hiddenweb_parent"
#: Scrapy's dupefilter file in JOBDIR (``RFPDupeFilter``)
SEEN_FILE = "requests.seen"


class JournalError(ValueError):
    """The JOBDIR is inconsistent: the message says where and what to do."""


@dataclass
class Replay:
    """What a journal says about the crawl it records."""

    pending: list[tuple[int, str]] = field(default_factory=list)  # (jid, pickled request)
    seen: set[str] = field(default_factory=set)  # dupefilter fingerprints
    emitted: dict[int, str | None] = field(default_factory=dict)  # jid -> content fp
    content: set[str] = field(default_factory=set)  # content fps of done emitted pages
    next_jid: int = 0


def _records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The journal's complete lines, split; a torn last line is cut off the file."""
    good = 0
    with path.open("rb+") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                logger.warning("%s: dropping a torn last record (%d bytes), written when the "
                               "crawl was killed", path, len(raw))
                fh.truncate(good)
                return
            good += len(raw)
            yield number, raw.decode("utf-8").rstrip("\n").split("\t")


def replay(path: Path) -> Replay:
    """Read a journal (module docstring); raise :class:`JournalError` on an inconsistent one."""
    out = Replay()
    pending: dict[int, str] = {}
    done: set[int] = set()
    for number, rec in _records(path):
        kind = rec[0]
        try:
            if number == 1 and kind != "H" or kind == "H" and rec[1:] != ["hiddenweb-journal", "1"]:
                raise JournalError("not a hiddenweb journal of version 1")
            if kind == "E":
                jid = int(rec[1])
                if jid in pending or jid in done:
                    raise JournalError(f"request {jid} journaled twice")
                pending[jid] = rec[3]
                if rec[2] != "-":
                    out.seen.add(rec[2])
                out.next_jid = max(out.next_jid, jid + 1)
            elif kind == "D":
                jid = int(rec[1])
                if pending.pop(jid, None) is None:
                    raise JournalError(f"request {jid} done but never queued")
                done.add(jid)
                fp = out.emitted.pop(jid, None)
                if fp:
                    out.content.add(fp)
            elif kind == "I":
                jid = int(rec[1])
                if jid not in pending:
                    raise JournalError(f"an item of request {jid}, which is not pending")
                out.emitted[jid] = None if rec[2] == "-" else rec[2]
            elif kind == "F":
                out.seen.add(rec[1])
            elif kind == "S":
                out.content.add(rec[1])
            elif kind != "H":
                raise JournalError(f"unknown record {kind!r}")
        except (IndexError, ValueError) as exc:
            raise JournalError(f"{path}, line {number}: {exc}") from None
    out.pending = list(pending.items())
    return out


def load_request(payload: str, spider: Spider | None) -> Request:
    return request_from_dict(pickle.loads(base64.b64decode(payload)), spider=spider)


def dump_request(request: Request, spider: Spider | None) -> str | None:
    """The request pickled as Scrapy's disk queues pickle it; None when it cannot be."""
    try:
        data = pickle.dumps(request.to_dict(spider=spider), protocol=4)
    except (pickle.PicklingError, AttributeError, TypeError, ValueError):
        return None
    return base64.b64encode(data).decode("ascii")


class Journal:
    """The open journal of one crawl (module docstring): ``E``/``D``/``I`` as it goes."""

    def __init__(self, jobdir: Path, spider: Spider | None) -> None:
        self.path = jobdir / JOURNAL_FILE
        self.spider = spider
        self.next_jid = 0
        self.open_jids: set[int] = set()  # E without D
        self.flight: dict[int, Request] = {}  # served, not done yet
        self.settled: list[int] = []  # done, not committed (no checkpoint holds it yet)
        self.compacted_size = 0
        self.fh: Any = None

    @classmethod
    def open(cls, jobdir: Path, spider: Spider | None) -> tuple[Journal, Replay | None]:
        """Open (and replay) the journal of ``jobdir``; a fresh JOBDIR gets a new one."""
        journal = cls(jobdir, spider)
        state = None
        if journal.path.exists():
            state = replay(journal.path)
            journal.next_jid = state.next_jid
            journal.open_jids = {jid for jid, _ in state.pending}
        else:
            seen = jobdir / SEEN_FILE
            if seen.exists() and seen.stat().st_size:
                raise JournalError(
                    f"{jobdir}: the dupefilter ({SEEN_FILE}) has requests but there is no "
                    f"{JOURNAL_FILE}: the requests it saw cannot be found again (a JOBDIR of "
                    "another scheduler or an older hiddenweb, or a removed file). "
                    "Use a new JOBDIR.")
            jobdir.mkdir(parents=True, exist_ok=True)
        journal.fh = journal.path.open("a", encoding="utf-8")
        if not journal.path.stat().st_size:  # new, or killed before its header was written
            journal._write(HEADER)
        journal.compacted_size = journal.path.stat().st_size
        return journal, state

    def _write(self, line: str) -> None:
        self.fh.write(line)
        self.fh.flush()

    def enqueued(self, request: Request, fp: str | None) -> bool:
        """Journal an accepted request (``fp``: its dupefilter fingerprint, None when it is not
        filtered); False when it cannot be pickled (it is then lost at a kill, as with Scrapy's
        disk queues)."""
        jid = self.next_jid
        parent = parent_of(request)
        if parent is not None:
            request.meta[PARENT_META] = parent
        request.meta[JID_META] = jid
        payload = dump_request(request, self.spider)
        if payload is None:
            del request.meta[JID_META]
            return False
        self.next_jid += 1
        self.open_jids.add(jid)
        self._write(f"E\t{jid}\t{fp or '-'}\t{payload}\n")
        return True

    def served(self, request: Request) -> None:
        jid = request.meta.get(JID_META)
        if jid is not None:
            self.flight[jid] = request

    def settle(self, in_progress: Iterable[Request]) -> None:
        """Collect every served request no longer in the engine's ``in_progress``: done, its
        ``D`` to be written by :meth:`commit` once a checkpoint holds its answer."""
        if not self.flight:
            return
        busy = {id(r) for r in in_progress}
        for jid, request in list(self.flight.items()):
            if id(request) not in busy:
                del self.flight[jid]
                self.settled.append(jid)

    def commit(self, jids: list[int]) -> None:
        """Journal ``D`` for ``jids`` (collected by :meth:`settle` before a checkpoint that is
        now on disk)."""
        for jid in jids:
            self.open_jids.discard(jid)
        if jids:
            self._write("".join(f"D\t{jid}\n" for jid in jids))

    def take_settled(self) -> list[int]:
        """The requests settled so far, to commit after the next checkpoint."""
        jids, self.settled = self.settled, []
        return jids

    def emitted(self, jid: int, fp: str | None) -> None:
        if jid in self.open_jids:
            self._write(f"I\t{jid}\t{fp or '-'}\n")

    def compact_if_grown(self, floor: int = 64 << 20) -> bool:
        """Compact now when the log has grown past twice its size after the last compaction
        (and past ``floor`` bytes): a long crawl's log stays proportional to what is pending."""
        size = self.path.stat().st_size
        if size < max(floor, 2 * self.compacted_size):
            return False
        self.fh.close()
        self._compact()
        self.fh = self.path.open("a", encoding="utf-8")
        return True

    def close(self, compact: bool = True) -> None:
        """Close; ``compact``: rewrite the log with only what a resume needs."""
        if self.fh is None:
            return
        self.fh.close()
        self.fh = None
        if compact:
            self._compact()

    def _compact(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            out.write(HEADER)
            for _, rec in _records(self.path):
                kind = rec[0]
                if kind == "E" or kind == "I":
                    if int(rec[1]) in self.open_jids:
                        out.write("\t".join(rec) + "\n")
                    elif rec[2] != "-":
                        out.write(f"{'F' if kind == 'E' else 'S'}\t{rec[2]}\n")
                elif kind in ("F", "S"):
                    out.write("\t".join(rec) + "\n")
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(self.path)
        fsync_dir(self.path.parent)
        self.compacted_size = self.path.stat().st_size


def parent_of(request: Request) -> int | None:
    """The journal number of the request whose answer made ``request`` (:data:`PARENT_META`),
    before ``request`` is journaled."""
    parent = request.meta.get(JID_META, request.meta.get(PARENT_META))
    return parent if isinstance(parent, int) else None


def remade_key(request: Request, fp: str) -> tuple:
    """What identifies a request its parent's answer, read again after a resume, makes again:
    its parent, its fingerprint ``fp`` and its ``hiddenweb_action`` (a form submission's values:
    two submissions in Chromium of one form load the same URL)."""
    return (parent_of(request), fp, repr(request.meta.get("hiddenweb_action")))


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def reconcile_dupefilter(dupefilter: Any, seen: set[str]) -> int:
    """Set Scrapy's ``RFPDupeFilter`` fingerprints (its ``_fingerprints`` and its
    ``requests.seen``) to the journal's ``seen`` (hex): a fingerprint it wrote whose request the
    kill kept out of the journal is forgotten, so the request is made again. Returns how many
    were forgotten (0 for a dupefilter of another kind, left as it is)."""
    fingerprints = getattr(dupefilter, "_fingerprints", None)
    if not isinstance(fingerprints, set):
        return 0
    want = {bytes.fromhex(fp) for fp in seen}
    if fingerprints == want:
        return 0
    forgotten = len(fingerprints - want)
    fingerprints.clear()
    fingerprints.update(want)
    fh = getattr(dupefilter, "file", None)
    if fh is not None:  # RFPDupeFilter's format: 2-byte big-endian length, the fingerprint
        fh.seek(0)
        fh.truncate()
        fh.write(b"".join(len(fp).to_bytes(2, "big") + fp for fp in sorted(want)))
        fh.flush()
    return forgotten


def fingerprint(dupefilter: Any, crawler: Crawler, request: Request) -> str:
    """The request's dupefilter fingerprint, hex."""
    fp = getattr(dupefilter, "_fingerprint", None)
    return (fp(request) if fp is not None
            else crawler.request_fingerprinter.fingerprint(request)).hex()


#: Sent (``send_catch_log``) before requests are marked done for good (shared mode: their leases
#: end, :func:`flush_items`): a receiver writes what it holds of their items and returns False
#: when it could not yet (the marks wait, and it is asked again).
flush_items_signal = object()


def flush_items(crawler: Crawler) -> bool:
    """The feeds flushed (:func:`flush_feeds`) and :data:`flush_items_signal` sent: whether
    every receiver has written its items (a receiver that raised has not)."""
    flush_feeds(crawler)
    results = crawler.signals.send_catch_log(signal=flush_items_signal)
    return all(ok is None or ok is True for _, ok in results)


def flush_feeds(crawler: Crawler) -> None:
    """Flush the feed exporters' files, so that an item in a feed is on the OS's side before
    the journal says it was emitted (Scrapy buffers them; a kill loses the buffer)."""
    from scrapy.extensions.feedexport import FeedExporter

    for ext in getattr(crawler.extensions, "middlewares", ()):
        if isinstance(ext, FeedExporter):
            for slot in ext.slots:
                stream = getattr(getattr(slot, "exporter", None), "stream", None)
                for fh in (stream, getattr(slot, "file", None)):
                    flush = getattr(fh, "flush", None)
                    if flush is not None:
                        try:
                            flush()
                        except (OSError, ValueError):
                            pass
